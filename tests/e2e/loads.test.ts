// The package loads in a real Pi session and its core round-trips real data.
import assert from "node:assert/strict";
import { test } from "node:test";
import { agent, piVersion } from "../harness/pi.ts";
import { startSession } from "../harness/session.ts";

test(`loads in Pi ${piVersion} and /context reports the session's real messages`, async () => {
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
    assert.match(report, /^Context: [\d.]+k? \/ 200\.0k tokens/);
    // The rows came back from wasm and match Pi's own estimate per role.
    const messages = pi.projection().messages as { role: string }[];
    for (const [role, label] of [
      ["user", "User"],
      ["assistant", "Assistant"],
      ["toolResult", "Tool results"],
    ]) {
      const mine = messages.filter((m) => m.role === role);
      const tokens = mine.reduce((sum, m) => sum + agent.estimateTokens(m), 0);
      assert.match(report, new RegExp(`\\n  ${label} \\(${mine.length}\\) +${tokens} `), `${role} row in:\n${report}`);
    }
  } finally {
    await pi.dispose();
  }
});
