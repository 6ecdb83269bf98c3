// The /context screen in Pi's real TUI under tmux: gauges and hues, scrolling
// keys, refresh, the compact confirmation and its refusal while busy, closing,
// width safety at five widths and the hint row on a 20-row terminal.
import assert from "node:assert/strict";
import { test } from "node:test";
import { piVersion } from "../harness/pi.ts";
import { startTui, type Tui } from "../harness/tui.ts";

const HINT = "↑↓ jk scroll";
const settle = () => new Promise((r) => setTimeout(r, 250));
const position = async (tui: Tui, re: RegExp) => (await tui.waitFor(re)).match(re)?.[0];

/** The foreground SGR in effect just before `needle` on the line holding `anchor`. */
function colourBefore(pane: string, anchor: string, needle: RegExp): string {
  const line = pane.split("\n").find((l) => l.includes(anchor)) ?? "";
  const at = line.search(needle);
  assert.ok(at > 0, `no ${needle} on the ${anchor} line: ${JSON.stringify(line)}`);
  // tmux writes each attribute as its own SGR; keep the ones that set or reset a foreground.
  const sgrs = line.slice(0, at).match(/\u001b\[(?:38[;:][0-9;:]*|3[0-7]|39|9[0-7]|0)?m/g) ?? [];
  return sgrs.at(-1) ?? "";
}

test(`Pi ${piVersion} TUI: the screen's gauges, hues, keys, refresh, confirmation and close`, async () => {
  const tui = await startTui({
    width: 80,
    height: 20,
    files: { "notes.txt": "alpha\nbeta\n".repeat(300) },
    script: [{ tool: "bash", args: { command: "cat notes.txt" } }, "The notes list \u001b[31mRED\u0007 alpha\tand beta."],
  });
  try {
    tui.submit("What is in notes.txt?");
    await tui.waitFor("The notes list");
    tui.submit("/context");
    // Pi may paint the screen's first frame before it has laid out the rows below: wait for the hint row.
    let pane = await tui.waitFor(/Context · Pi's estimate[\s\S]*↑↓ jk scroll/);
    assert.ok(pane.includes(HINT), `the hint row on a 20-row terminal:\n${pane}`);
    assert.match(pane, /\[█+[░│]+\]/);

    // Hues: each category its own colour, the same in the table and the largest list.
    tui.keys("End");
    await settle();
    const colours = tui.capture({ escapes: true });
    tui.keys("Home");
    await settle();
    const top = tui.capture({ escapes: true });
    // The table is taller than 20 rows (the prompt's sections, each tool): scroll a line at a time
    // until the row is on screen.
    const onScreen = async (anchor: string) => {
      for (let i = 0; i < 60; i++) {
        const pane = tui.capture({ escapes: true });
        if (pane.split("\n").some((l) => l.includes(anchor) && /\d+\.\d%/.test(l))) return pane;
        tui.keys("j");
        await settle();
      }
      return tui.capture({ escapes: true });
    };
    const systemHue = colourBefore(top, "System prompt", /\d+\.\d%/);
    const toolsHue = colourBefore(await onScreen("Tool definitions"), "Tool definitions", /\d+\.\d%/);
    const userHue = colourBefore(await onScreen("User (1)"), "User (1)", /\d+\.\d%/);
    const assistantHue = colourBefore(await onScreen("Assistant (2)"), "Assistant (2)", /\d+\.\d%/);
    const results = await onScreen("Tool results (1)");
    const toolResults = colourBefore(results, "Tool results (1)", /\d+\.\d%/);
    const hues = [systemHue, toolsHue, userHue, assistantHue, toolResults];
    assert.equal(new Set(hues).size, 5, `five distinct hues: ${JSON.stringify(hues)}`);
    assert.ok(hues.every((h) => /\u001b\[[0-9;:]*m/.test(h)));
    assert.equal(colourBefore(colours, "tool result", /\d+\.\d%/), toolResults, "a tool result is one colour wherever it appears");
    assert.equal(colourBefore(results, "Tool results (1)", /█/), toolResults, "the bar wears the row's hue");
    tui.keys("Home");
    await settle();

    // Sanitized: the model's escape and bell are shown as text, not obeyed.
    assert.ok(colours.includes("The notes list [31mRED alpha and beta."), colours);
    assert.ok(!colours.includes("\u0007"));

    // Scrolling.
    const first = await position(tui, /1-\d+ of \d+/);
    tui.keys("j");
    assert.match((await position(tui, /2-\d+ of \d+/)) ?? "", /^2-/);
    tui.keys("Down");
    await tui.waitFor(/ 3-\d+ of \d+/);
    tui.keys("k", "Up");
    await tui.waitFor(new RegExp(` ${first}`));
    // PgUp/PgDn reach a focused screen from Pi 1.6 on (capturesViewportInput); Pi 1.3's
    // fullscreen mode keeps them for its transcript.
    if (piVersion !== "1.3.0") {
      tui.keys("PageDown");
      pane = await tui.waitFor(/ (?!1-)\d+-\d+ of \d+/);
      tui.keys("PageUp");
      await tui.waitFor(new RegExp(` ${first}`));
    }
    tui.keys("G");
    pane = await tui.waitFor(/Largest messages/);
    assert.match(pane, / (\d+)-(\d+) of \2/);
    tui.keys("g");
    await tui.waitFor(new RegExp(` ${first}`));
    tui.keys("End");
    await tui.waitFor(/ (\d+)-(\d+) of \2/);
    tui.keys("Home");
    await tui.waitFor(new RegExp(` ${first}`));

    // Refresh re-reads the session.
    tui.keys("r");
    await tui.waitFor("Re-read the session");

    // Compact: the confirmation, a cancel, then a real attempt (too small to compact: the failure is shown).
    tui.keys("c");
    await tui.waitFor("Compact now? y/N");
    tui.keys("n");
    await tui.waitFor("Compaction cancelled");
    tui.keys("c");
    await tui.waitFor("Compact now? y/N");
    tui.keys("y");
    await tui.waitFor(/Compaction failed: |Compacted: /);

    // Esc closes; q closes.
    tui.keys("Escape");
    await tui.waitFor(/^(?![\s\S]*Context · Pi's estimate)/);
    tui.submit("/context");
    await tui.waitFor(/Context · Pi's estimate/);
    tui.keys("q");
    await tui.waitFor(/^(?![\s\S]*Context · Pi's estimate)/);
  } finally {
    tui.close();
  }
});

test(`Pi ${piVersion} TUI: c is refused while a turn is running`, async () => {
  const tui = await startTui({
    width: 100,
    height: 30,
    script: [{ tool: "bash", args: { command: "sleep 4; echo slept" } }, "Finished after the sleep."],
  });
  try {
    tui.submit("Sleep a little");
    await tui.waitFor(/sleep 4/);
    tui.submit("/context");
    await tui.waitFor(/Context · Pi's estimate/);
    tui.keys("c");
    await tui.waitFor("Not compacting: a turn or a compaction is running");
    assert.doesNotMatch(tui.capture(), /Compact now\? y\/N/);
    tui.keys("q");
    // The turn was not aborted: it finishes with its answer.
    await tui.waitFor("Finished after the sleep.", { timeoutMs: 20_000 });
  } finally {
    tui.close();
  }
});

test(`Pi ${piVersion} TUI: no line wider than the terminal at 40, 60, 80, 100, 120 and 200 columns, hint row on 20 rows, every mark in a legend`, async () => {
  const tui = await startTui({
    width: 80,
    height: 20,
    files: { "notes.txt": "x".repeat(5000) },
    script: [{ tool: "bash", args: { command: "cat notes.txt" } }, `A long answer ${"很长的句子".repeat(20)}`],
  });
  try {
    tui.submit("Read notes.txt");
    await tui.waitFor("A long answer");
    tui.submit("/context");
    await tui.waitFor(/Context · Pi's estimate/);
    for (const width of [40, 60, 80, 100, 120, 200]) {
      tui.resize(width, 20);
      await settle();
      tui.keys("Home");
      await settle();
      // Every page, top to bottom: the prompt's sections, each tool definition, the tool results by tool.
      const seen: string[] = [];
      for (let page = 0; page < 12; page++) {
        const pane = await tui.waitFor(/↑↓ jk/);
        const lines = pane.split("\n");
        // A title cut to the width ends with an ellipsis (issue 28).
        const title = lines.find((l) => l.includes(" Context · "));
        if (title && !/ of \d+$/.test(title.trimEnd())) assert.match(title.trimEnd(), /…$/, `width ${width}: ${title}`);
        seen.push(...lines);
        assert.ok(
          lines.every((l) => [...l].length <= width),
          `width ${width}:\n${pane}`,
        );
        // Rows are not wrapped: each table row keeps its figures on its own line.
        for (const l of lines.filter((x) => /^ {2}(System prompt|Tool results|tool result)/.test(x))) assert.match(l, /\d+\.\d%/, `width ${width}: ${l}`);
        assert.ok(
          lines.some((l) => l.includes("↑↓ jk")),
          `hint row at width ${width}`,
        );
        const at = pane.match(/ lines (\d+)-(\d+) of (\d+)/);
        if (!at || at[2] === at[3]) break;
        tui.keys(...Array.from({ length: Number(at[2]) - Number(at[1]) + 1 }, () => "j"));
        await settle();
      }
      if (width >= 80) {
        // The rows under the prompt and the tools, the results by tool, and the two requests' sparkline.
        for (const row of [
          /^ {4}preamble +\d/,
          /^ {4}read +\d+ +\d+\.\d%/,
          /^ {4}bash \(1\) +[\d.]+k? +\d+\.\d%/,
          /^ Context per request: 2 /,
          /^ [▁▂▃▄▅▆▇█]{2}$/,
        ]) {
          assert.ok(
            seen.some((l) => row.test(l)),
            `${row} at width ${width}:\n${seen.join("\n")}`,
          );
        }
        // Every mark has its legend line (issue 28): the window bar's, the rows' bars, the sparkline.
        const gauge = seen.find((l) => /^ \[[█░│]+\]/.test(l)) ?? "";
        const legend = seen.find((l) => l.startsWith(" █ in the window")) ?? "";
        assert.match(legend, /^ █ in the window \(a tenth of it each\)( · │ where Pi compacts)? · ░ free$/, seen.join("\n"));
        assert.equal(gauge.includes("│"), legend.includes("│"), `the threshold mark and its legend: ${gauge} / ${legend}`);
        assert.ok(
          seen.some((l) => l === " Bars here and below: █ an eighth of the context each, ▏ under a sixteenth"),
          seen.join("\n"),
        );
        assert.ok(
          seen.some((l) => l.startsWith(" Each bar one request, oldest first")),
          seen.join("\n"),
        );
        // No block a share has not earned: under half a cell (6.25%) a row's one cell is thin.
        const bars = seen.map((l) => l.match(/ (\d+\.\d)% +([█▏░]{8})/)).filter((m) => m !== null);
        assert.ok(bars.length > 5, seen.join("\n"));
        for (const [line, percent, bar] of bars) {
          if (Number(percent) > 0 && Number(percent) < 6.2) assert.match(bar, /^▏░{7}$/, line);
          if (Number(percent) > 6.3) assert.match(bar, /^█/, line);
        }
        assert.ok(
          bars.some(([, percent]) => Number(percent) > 0 && Number(percent) < 6.2),
          "a small share is on screen",
        );
      }
    }
    assert.doesNotMatch(tui.capture(), /Error|exceeds/);
  } finally {
    tui.close();
  }
});
