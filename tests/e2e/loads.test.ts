// The package loads in a real Pi session and its core round-trips real data.
import assert from "node:assert/strict";
import { test } from "node:test";
import { agent, piVersion } from "../harness/pi.ts";
import { startSession } from "../harness/session.ts";

test(`loads in Pi ${piVersion} and the core tallies the session's messages`, async () => {
  const pi = await startSession({
    files: { "notes.txt": "alpha\nbeta\n" },
    script: [{ tool: "bash", args: { command: "cat notes.txt" } }, "The file lists alpha and beta."],
  });
  try {
    await pi.prompt("What is in notes.txt?");
    // The real bash tool ran on the real folder.
    const toolResult = pi.projection().messages.find((m: { role: string }) => m.role === "toolResult");
    assert.match(JSON.stringify(toolResult.content), /alpha\\nbeta/);

    await pi.prompt("/context");
    const report = pi.notifications.at(-1)?.message ?? "";
    assert.match(report, /^context-guard core \d+\.\d+\.\d+ \(loaded in [\d.]+ ms\)/);
    // The tally came back from wasm and matches Pi's own estimate per role.
    const messages = pi.projection().messages as { role: string }[];
    for (const role of ["user", "assistant", "toolResult"]) {
      const mine = messages.filter((m) => m.role === role);
      const tokens = mine.reduce((sum, m) => sum + agent.estimateTokens(m), 0);
      assert.ok(report.includes(`${role}: ${mine.length} messages, ${tokens} tokens`), `${role} row in:\n${report}`);
    }
  } finally {
    await pi.dispose();
  }
});
