// The package in Pi's interactive TUI, under tmux.
import assert from "node:assert/strict";
import { test } from "node:test";
import { piVersion } from "../harness/pi.ts";
import { startTui } from "../harness/tui.ts";

test(`the TUI on Pi ${piVersion} starts with the package and runs /context`, async () => {
  const tui = await startTui({ width: 100, height: 30 });
  try {
    tui.submit("/context");
    const pane = await tui.waitFor(/Composition \(estimate: /);
    assert.doesNotMatch(pane, /extension error|Failed to load/i);
    tui.keys("q");
    await tui.waitFor(/^(?![\s\S]*Composition \(estimate)/);
  } finally {
    tui.close();
  }
});
