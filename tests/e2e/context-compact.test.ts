// `/context compact [instructions]` inside real Pi: it compacts through
// ctx.compact and reports before and after, refuses while a turn is running
// (and never aborts it), and reports failures.
import assert from "node:assert/strict";
import { test } from "node:test";
import { ai, type Loose, piVersion } from "../harness/pi.ts";
import { startSession } from "../harness/session.ts";
import { recorder } from "./context-helpers.ts";

const short = (n: number) => (n < 1000 ? String(n) : `${(Math.round(n / 100) / 10).toFixed(1)}k`);

test(`Pi ${piVersion}: /context compact compacts with the instructions and reports before and after`, async () => {
  const rec = recorder();
  const pi = await startSession({
    files: { "big.txt": "line of the big file\n".repeat(2000) },
    piSettings: { compaction: { keepRecentTokens: 50 } },
    guardSettings: { enabled: false },
    extensions: [rec.extension],
    script: [{ tool: "bash", args: { command: "cat big.txt" } }, "It is a big file.", "Small answer.", "## Goal\nSummarized."],
  });
  try {
    await pi.prompt("Show big.txt");
    // A last turn above keepRecentTokens, so the cut falls on its user message.
    await pi.prompt(`Anything else? ${"Tell me more. ".repeat(30)}`);
    const requestsBefore = pi.requests.length;
    await pi.prompt("/context compact focus on the parser");
    // The summary request went to the model and carried the instructions.
    // (Pi makes two summary requests when it cuts inside a turn.)
    const summaries = pi.requests.slice(requestsBefore);
    assert.ok(summaries.length >= 1);
    assert.ok(
      summaries.some((r) => /focus on the parser/.test(JSON.stringify(r.messages))),
      "the instructions reached the summarizer",
    );
    const entry = pi.branch().findLast((e: Loose) => e.type === "compaction");
    assert.ok(entry, "a compaction entry");
    const after = rec.last();
    assert.equal(after.compacted.before, entry.tokensBefore);
    assert.equal(after.compacted.after, after.estimate);
    assert.ok(after.compacted.after < after.compacted.before, JSON.stringify(after.compacted));
    const note = pi.notifications.at(-1);
    assert.equal(note?.type, "info");
    assert.equal(
      note?.message,
      `Compacted: ${short(entry.tokensBefore)} -> ~${short(after.estimate)} tokens (the composition estimate; Pi's total is pending until the next reply)`,
    );
  } finally {
    await pi.dispose();
  }
});

test(`Pi ${piVersion}: /context compact refuses while a turn is running and never aborts it`, async () => {
  // The turn stays in flight while its tool waits for the test.
  let release: (() => void) | undefined;
  const pi = await startSession({
    extensions: [
      (p: Loose) =>
        p.registerTool({
          name: "slow_tool",
          label: "slow",
          description: "waits",
          parameters: { type: "object", properties: {} },
          execute: async () => {
            await new Promise<void>((resolve) => {
              release = resolve;
            });
            return { content: [{ type: "text", text: "slow result" }], details: {} };
          },
        }),
    ],
    script: [{ tool: "slow_tool", args: {} }, "The slow answer, complete."],
  });
  try {
    const turn = pi.prompt("Take your time");
    while (!release) await new Promise((r) => setTimeout(r, 10));
    await pi.session.prompt("/context compact");
    const note = pi.notifications.at(-1);
    assert.equal(note?.type, "warning");
    assert.match(note?.message ?? "", /^Not compacting: a turn or a compaction is running/);
    release();
    await turn;
    assert.equal(pi.branch().filter((e: Loose) => e.type === "compaction").length, 0);
    const last = pi.projection().messages.at(-1);
    assert.equal(last.role, "assistant");
    assert.equal(last.stopReason, "stop");
    assert.equal(last.content[0].text, "The slow answer, complete.");
  } finally {
    await pi.dispose();
  }
});

test(`Pi ${piVersion}: /context compact reports a failure and leaves the session as it was`, async () => {
  const pi = await startSession({ script: [] });
  try {
    // Nothing to compact yet: Pi refuses, and the refusal is reported.
    await pi.prompt("/context compact");
    const note = pi.notifications.at(-1);
    assert.equal(note?.type, "error");
    assert.match(note?.message ?? "", /^Compaction failed: \S/);
    assert.equal(pi.branch().filter((e: Loose) => e.type === "compaction").length, 0);
  } finally {
    await pi.dispose();
  }
});

test(`Pi ${piVersion}: a summarizer that fails is reported`, async () => {
  const pi = await startSession({
    files: { "big.txt": "row\n".repeat(4000) },
    piSettings: { compaction: { keepRecentTokens: 50 } },
    script: [
      { tool: "bash", args: { command: "cat big.txt" } },
      "Done.",
      "More.",
      () => ai.fauxAssistantMessage("", { stopReason: "error", errorMessage: "summarizer \u001b[31mdown\u0007" }),
    ],
  });
  try {
    await pi.prompt("Show big.txt");
    await pi.prompt("And?");
    const entries = pi.branch().length;
    await pi.prompt("/context compact");
    const note = pi.notifications.at(-1);
    assert.equal(note?.type, "error");
    assert.match(note?.message ?? "", /^Compaction failed: /);
    assert.ok(!(note?.message ?? "").includes("\u001b"), note?.message);
    assert.equal(pi.branch().length, entries);
  } finally {
    await pi.dispose();
  }
});
