// A classifier that fails in any way removes nothing, and settling waits no
// longer than the time budget plus a small margin.
import assert from "node:assert/strict";
import { test } from "node:test";
import { type Behaviour, hanging, late, malformed, providerError, throwing } from "../harness/classifier.ts";
import { fixtureRepo } from "../harness/fixture-repo.ts";
import { textOf, toolResults } from "../harness/inspect.ts";
import { piVersion } from "../harness/pi.ts";
import { startSession } from "../harness/session.ts";

const timeoutMs = 600;
// Settling may take the budget plus this: the pass's own work and Pi's appends.
const marginMs = 400;

const cases: [string, Behaviour][] = [
  ["a provider error", providerError()],
  ["a thrown error", throwing()],
  ["a hang that never answers", hanging],
  ["an answer after the deadline", late(timeoutMs + 500)],
  ["missing answers", malformed("missing")],
  ["NaN probabilities", malformed("nan")],
  ["probabilities outside 0-1", malformed("out-of-range")],
  ["an unknown choice", malformed("unknown-choice")],
  ["wrong-typed answers", malformed("wrong-type")],
];

for (const [name, behaviour] of cases) {
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

      await pi.prompt("Thanks.");
      const results = toolResults(pi.requests.at(-1)?.messages ?? []);
      assert.equal(results.length, 2);
      for (const r of results) assert.doesNotMatch(textOf(r), /^\[context-guard\]/);
      assert.equal(pi.branch().filter((e: { type: string }) => e.type === "context_edit").length, 0);
    } finally {
      await pi.dispose();
    }
  });
}
