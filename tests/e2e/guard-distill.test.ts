// The run-end pass inside real Pi: a real search and a real file read are
// distilled by the stand-in classifier, and the next request carries exactly
// the replacement: header, the kept chunks verbatim, one omission line per run
// of removed chunks (files for grep output, file lines for read, output lines
// otherwise).
import assert from "node:assert/strict";
import { test } from "node:test";
import { keepChunks, type ClassifyRequest } from "../harness/classifier.ts";
import { chunksSeen, expectedNote } from "../harness/expected.ts";
import { fixtureRepo } from "../harness/fixture-repo.ts";
import { assertNoPassFailure } from "../harness/guard-checks.ts";
import { entriesOf, textOf, toolResultEntry, toolResults } from "../harness/inspect.ts";
import { piVersion } from "../harness/pi.ts";
import type { Loose } from "../harness/pi.ts";
import { startSession } from "../harness/session.ts";

/** Keeps the chunks that contain `needle` (the oracle asks the same of each chunk). */
function keeping(needle: RegExp) {
  const behaviour = keepChunks((request: ClassifyRequest) =>
    Object.entries((request.state.chunks ?? {}) as Record<string, string>)
      .filter(([, text]) => needle.test(text))
      .map(([id]) => Number(id.replace("chunk_", ""))),
  );
  return { behaviour, kept: (chunk: { text: string }) => needle.test(chunk.text) };
}

test(`Pi ${piVersion}: a grep and a read are distilled at run end, exactly`, async () => {
  const { behaviour, kept } = keeping(/=== 503|STATUS_CODE_25\d /);
  const pi = await startSession({
    files: fixtureRepo(),
    classifier: behaviour,
    script: [
      { tool: "bash", args: { command: "rg -n status src/services" }, id: "grep1" },
      { tool: "read", args: { path: "src/lib/status.ts", offset: 3 }, id: "read1" },
      "The services at 3 mod 7 retry on 503; status codes 250-259 are in the table.",
      "You are welcome.",
    ],
  });
  try {
    await pi.prompt("Which services retry when the upstream answers 503?");
    const branch = pi.branch();
    const grepEntry = toolResultEntry(branch, "grep1");
    const readEntry = toolResultEntry(branch, "read1");
    const grepRaw = textOf(grepEntry.message);
    const readRaw = textOf(readEntry.message);
    assert.ok(grepRaw.length >= 30_000, `the search printed ${grepRaw.length} chars`);

    // One context_edit per output, then one record; raw entries untouched.
    const edits = entriesOf(branch, "context_edit");
    assert.deepEqual(edits.map((e: Loose) => e.targetId).sort(), [grepEntry.id, readEntry.id].sort());
    const records = entriesOf(branch, "custom", "context-guard");
    assert.equal(records.length, 1);
    assert.equal(records[0].data.v, 1);
    assert.equal(records[0].data.phase, "run-end");
    assert.deepEqual(
      records[0].data.results.map((r: Loose) => [r.kind, r.entryId, r.outcome]).sort(),
      [
        ["large", grepEntry.id, "distilled"],
        ["large", readEntry.id, "distilled"],
      ].sort(),
    );
    assert.equal(textOf(pi.session.sessionManager.getEntry(grepEntry.id).message), grepRaw);

    await pi.prompt("Thanks.");
    const [grep, read] = toolResults(pi.requests.at(-1)?.messages ?? []);
    const grepChunks = chunksSeen(pi.classifierCalls, "bash");
    const readChunks = chunksSeen(pi.classifierCalls, "read");
    assert.equal(grepChunks.map((c) => c.text).join("\n"), grepRaw.replace(/\n$/, ""), "the chunks cover the output exactly");
    assert.equal(
      textOf(grep),
      expectedNote({ label: "bash `rg -n status src/services`", entryId: grepEntry.id, raw: grepRaw, chunks: grepChunks, kept, numbering: { kind: "grep" } }),
    );
    assert.equal(
      textOf(read),
      expectedNote({
        label: "read `src/lib/status.ts` from line 3",
        entryId: readEntry.id,
        raw: readRaw,
        chunks: readChunks,
        kept,
        numbering: { kind: "file", offset: 3 },
      }),
    );
    // Every line the answer relies on is still there, verbatim.
    for (const line of grepRaw.split("\n").filter((l) => l.includes("=== 503"))) assert.ok(textOf(grep).includes(line));
    assertNoPassFailure(pi.notifications);
  } finally {
    await pi.dispose();
  }
});

test(`Pi ${piVersion}: a long plain output is numbered by output lines; nothing needed removes it`, async () => {
  const log = Array.from({ length: 900 }, (_, i) => `step ${i + 1}: ${i % 97 === 5 ? "FAILED assertion in parser" : "ok"} ${"·".repeat(20)}`).join("\n");
  const { behaviour, kept } = keeping(/FAILED/);
  const pi = await startSession({
    files: { "test.log": `${log}\n`, "other.log": `${"noise line\n".repeat(1_000)}` },
    classifier: behaviour,
    script: [
      [
        { tool: "bash", args: { command: "cat test.log" }, id: "log1" },
        { tool: "bash", args: { command: "cat other.log" }, id: "log2" },
      ],
      "The parser assertion fails in several steps.",
      "ok",
    ],
  });
  try {
    await pi.prompt("Why does the test fail?");
    const branch = pi.branch();
    const logEntry = toolResultEntry(branch, "log1");
    const otherEntry = toolResultEntry(branch, "log2");
    await pi.prompt("Thanks.");
    const [visibleLog, visibleOther] = toolResults(pi.requests.at(-1)?.messages ?? []);
    const raw = textOf(logEntry.message);
    const chunks = chunksSeen(
      pi.classifierCalls.filter((c) => (c.request.state as Loose).tool_arguments.includes("test.log")),
      "bash",
    );
    assert.equal(textOf(visibleLog), expectedNote({ label: "bash `cat test.log`", entryId: logEntry.id, raw, chunks, kept, numbering: { kind: "output" } }));
    const other = textOf(otherEntry.message);
    assert.equal(
      textOf(visibleOther),
      `[context-guard] Removed the output of bash \`cat other.log\`: ${other.replace(/\n$/, "").split("\n").length} lines (${(other.length / 1000).toFixed(1)}k chars) judged not needed for the answer. Full output: recall({"entryId":"${otherEntry.id}"}).`,
    );
    assertNoPassFailure(pi.notifications);
  } finally {
    await pi.dispose();
  }
});
