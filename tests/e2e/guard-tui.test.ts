// The guard's status texts in Pi's interactive TUI, under tmux.
import assert from "node:assert/strict";
import { test } from "node:test";
import { fixtureRepo } from "../harness/fixture-repo.ts";
import { assertNoPassFailure } from "../harness/guard-checks.ts";
import { piVersion } from "../harness/pi.ts";
import { startTui } from "../harness/tui.ts";

const script = [{ tool: "bash", args: { command: "rg -n status src/services" } }, "Nine services retry on 503."];

test(`Pi ${piVersion} TUI: 0 saved, distilling…, the savings, guard off`, async () => {
  const tui = await startTui({ files: fixtureRepo(), script, classifier: "slow-keep-none", width: 120, height: 30 });
  try {
    await tui.waitFor("🛡 0 saved");
    tui.submit("Which services retry on 503?");
    await tui.waitFor("🛡 distilling…");
    const pane = await tui.waitFor(/🛡 −\d+(\.\d)?k tok · 1 item/);
    assert.doesNotMatch(pane, /distilling/);
    await tui.command("/guard off");
    await tui.waitFor("🛡 guard off");
    await tui.command("/guard on");
    await tui.waitFor(/🛡 −\d+(\.\d)?k tok · 1 item/);
    assertNoPassFailure([tui.capture()]);
  } finally {
    tui.close();
  }
});

test(`Pi ${piVersion} TUI: a missing model and a missing key are named`, async () => {
  const missing = await startTui({ classifier: "absent" });
  try {
    await missing.waitFor("🛡 Jev model not found");
    assertNoPassFailure([missing.capture()]);
  } finally {
    missing.close();
  }
  const noKey = await startTui({ guardSettings: "{}", env: { OPENROUTER_API_KEY: "" } });
  try {
    await noKey.waitFor("🛡 no openrouter key");
    assertNoPassFailure([noKey.capture()]);
  } finally {
    noKey.close();
  }
});

test(`Pi ${piVersion} TUI: 🛡 distilling… at a mid-run checkpoint, while the run goes on`, async () => {
  // Gates opened so a checkpoint fires at the second turn's end (the first search is then one turn old
  // and over the batch); the third call keeps the run going after it, so the answer comes only later.
  const guardSettings = { model: "fakejev/jev-test", midRunMinAgeTurns: 1, midRunMinTurns: 1, midRunBatchChars: 5_000, midRunBreakEven: false };
  const run = [
    { tool: "bash", args: { command: "rg -n status src/services" } },
    { tool: "bash", args: { command: "rg -n retry src/services" } },
    { tool: "bash", args: { command: "sleep 2 && echo slept" } },
    "Checked both searches: all done.",
  ];
  const tui = await startTui({ files: fixtureRepo(), script: run, classifier: "slow-keep-none", guardSettings, width: 120, height: 30 });
  try {
    await tui.waitFor("🛡 0 saved");
    tui.submit("Which services retry?");
    const during = await tui.waitFor("🛡 distilling…");
    assert.doesNotMatch(during, /all done/, "the checkpoint ran before the run's answer");
    await tui.waitFor("all done", { timeoutMs: 30_000 });
    await tui.waitFor(/🛡 −\d+(\.\d)?k tok · \d+ items?/);
    // The first screen is short (issue 28): the last pass in one sentence and the way to the details.
    await tui.command("/guard");
    const first = await tui.waitFor("more: /guard details");
    assert.match(first, /last pass: the (run end|mid-run checkpoint) kept out [\d.]+k? chars of \d+ items?/);
    assert.doesNotMatch(first, /kw\.\d+|focus=/, "no trace on the first screen");
    await tui.command("/guard details");
    await tui.waitFor(/[1-9]\d* mid-run checkpoints?/);
    assertNoPassFailure([tui.capture()]);
  } finally {
    tui.close();
  }
});

test(`Pi ${piVersion} TUI: /guard details fits 80, 100 and 120 columns, each wrapped line keeping its indent`, async () => {
  const tui = await startTui({ files: fixtureRepo(), script, classifier: "slow-keep-none", width: 80, height: 70 });
  try {
    tui.submit("Which services retry on 503?");
    await tui.waitFor(/🛡 −\d+(\.\d)?k tok · 1 item/);
    for (const width of [80, 100, 120]) {
      tui.resize(width, 70);
      await new Promise((r) => setTimeout(r, 400));
      await tui.command("/guard details");
      const pane = await tui.waitFor(/core \d+\.\d+\.\d+ \(wasm loaded/);
      const lines = pane.split("\n");
      const start = lines.findLastIndex((l) => l.startsWith(" context-guard: on"));
      const end = lines.findLastIndex((l) => / core \d+\.\d+\.\d+ \(wasm loaded/.test(l));
      const block = lines.slice(start + 1, end + 1);
      assert.ok(start >= 0 && block.length > 8, pane);
      // Pi pads a notification by one column; every line after the first is indented by the report,
      // so a line wrapped at column 0 (Pi's own wrapping) would start with a single space.
      for (const line of block) assert.match(line, /^ {3}\S|^ {5,}\S/, `at ${width} columns: ${JSON.stringify(line)}`);
      assert.ok(block.every((l) => l.length <= width));
      // Something did wrap at 80: the bill's line is longer than a row.
      if (width === 80)
        assert.ok(
          block.some((l) => /^ {5}\S/.test(l)),
          pane,
        );
    }
    assertNoPassFailure([tui.capture()]);
  } finally {
    tui.close();
  }
});
