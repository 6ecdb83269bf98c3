// A classifier that fails in any way removes nothing, and settling waits no
// longer than the time budget plus a small margin. Each failure is the
// designed fallback, not a crash: the record names its reason (the core's
// error / timeout / no-answer, with the trace of each segment) and no warning
// says the pass broke.
import assert from "node:assert/strict";
import { test } from "node:test";
import { type Behaviour, hanging, late, malformed, providerError, throwing } from "../harness/classifier.ts";
import { fixtureRepo } from "../harness/fixture-repo.ts";
import { assertKeptFor, assertNoPassFailure, guardRecords } from "../harness/guard-checks.ts";
import { textOf, toolResults } from "../harness/inspect.ts";
import { piVersion } from "../harness/pi.ts";
import { startSession } from "../harness/session.ts";

const timeoutMs = 600;
// Settling may take the budget plus this: the pass's own work and Pi's appends.
const marginMs = 400;

/** What the record must say: the core's reason, the trace of every segment, and whether the budget ran out. */
type Expected = { reason: string; trace: string; timedOut: boolean };
const error: Expected = { reason: "error", trace: "error", timedOut: false };
const timeout: Expected = { reason: "timeout", trace: "timeout", timedOut: true };
// Malformed answers count as none (docs/GUARD.md "What it judges"); the trace names the first question found wanting.
const noAnswer = (question: string): Expected => ({ reason: "no-answer", trace: `no-answer (${question})`, timedOut: false });

const cases: [string, Behaviour, Expected][] = [
  ["a provider error", providerError(), error],
  ["a thrown error", throwing(), error],
  ["a hang that never answers", hanging, timeout],
  ["an answer after the deadline", late(timeoutMs + 500), timeout],
  ["missing answers", malformed("missing"), noAnswer("keep_whole")],
  ["NaN probabilities", malformed("nan"), noAnswer("keep_whole")],
  ["probabilities outside 0-1", malformed("out-of-range"), noAnswer("keep_whole")],
  ["an unknown choice", malformed("unknown-choice"), noAnswer("focus")],
  ["wrong-typed answers", malformed("wrong-type"), noAnswer("keep_whole")],
];

for (const [name, behaviour, expected] of cases) {
  test(`Pi ${piVersion}: ${name} keeps every output`, async () => {
    const pi = await startSession({
      files: fixtureRepo(),
      classifier: behaviour,
      guardSettings: { timeoutMs, concurrency: 2 },
      script: [
        { tool: "bash", args: { command: "rg -n status src/services" } },
        { tool: "read", args: { path: "src/lib/status.ts" } },
        "Three services retry on 503.",
        "You are welcome.",
      ],
    });
    try {
      const started = Date.now();
      await pi.prompt("Which services retry on 503?");
      const settled = Date.now() - started;
      assert.ok(pi.classifierCalls.length > 0, "the classifier was asked");
      assert.ok(settled < timeoutMs + marginMs, `settled after ${settled} ms (budget ${timeoutMs} + ${marginMs})`);
      assert.ok(pi.maxClassifierInFlight() <= 2, `in flight: ${pi.maxClassifierInFlight()}`);
      const records = guardRecords(pi.branch());
      assert.equal(records.length, 1, "one pass, one record");
      assertKeptFor(records[0], expected);
      assert.deepEqual(
        records[0].results.map((r: { tool: string }) => r.tool),
        ["bash", "read"],
        "both outputs were judged",
      );

      await pi.prompt("Thanks.");
      const results = toolResults(pi.requests.at(-1)?.messages ?? []);
      assert.equal(results.length, 2);
      for (const r of results) assert.doesNotMatch(textOf(r), /^\[context-guard\]/);
      assert.equal(pi.branch().filter((e: { type: string }) => e.type === "context_edit").length, 0);
      assertNoPassFailure(pi.notifications);
    } finally {
      await pi.dispose();
    }
  });
}
