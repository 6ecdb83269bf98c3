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
    const pane = await tui.waitFor(/🛡 −\d+(\.\d)?k · 1/);
    assert.doesNotMatch(pane, /distilling/);
    await tui.command("/guard off");
    await tui.waitFor("🛡 guard off");
    await tui.command("/guard on");
    await tui.waitFor(/🛡 −\d+(\.\d)?k · 1/);
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
