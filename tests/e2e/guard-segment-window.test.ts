// The segment size follows the classifier inside real Pi (issue 9 part 4): a
// stand-in classifier registered with a small `contextWindow` clips a larger
// `maxSegmentChars` (the core's rule, crates/guard/src/segment_fit.rs), every
// request's chunk texts stay under the clipped size and the whole request
// under the window at 2.5 characters a token, and the warning naming the key
// comes once. The same run with the stand-in's usual window sends larger
// segments, so the clip is what kept them small.
import assert from "node:assert/strict";
import { test } from "node:test";
import { guardCore } from "../../extension/guard/wasm.ts";
import { assertNoPassFailure } from "../harness/guard-checks.ts";
import { type Loose, piVersion } from "../harness/pi.ts";
import { type ClassifierCall, startSession } from "../harness/session.ts";

// No history and the default 40 chunks a segment: the fixed parts (33,336 characters) leave room
// for a segment of some thousands in a 20,000-token window (50,000 characters).
const SETTINGS = { model: "fakejev/jev-test", maxSegmentChars: 40_000, historyExchanges: 0 };
const WINDOW = 20_000;
/** guard/segment_fit.rs CHARS_PER_TOKEN_TENTHS. */
const CHARS_PER_TOKEN = 2.5;

/** A log of distinct lines, under Pi's 50 KB bash output cap. */
const log = (name: string, lines: number) =>
  `${Array.from({ length: lines }, (_, i) => `${name} ${i + 1}: worker finished job ${i * 7} in ${i % 97} ms`).join("\n")}\n`;

const segmentChars = (calls: ClassifierCall[]) =>
  calls
    .filter((c) => (c.request.state as Loose).chunks)
    .map((c) => Object.values((c.request.state as Loose).chunks as Record<string, string>).reduce((sum, t) => sum + t.length, 0));

const script = () => [
  { tool: "bash", args: { command: "cat a.log" }, id: "a" },
  "Job 7 finished in 1 ms.",
  { tool: "bash", args: { command: "cat b.log" }, id: "b" },
  "Job 14 finished in 2 ms.",
];

test(`Pi ${piVersion}: a small classifier window clips maxSegmentChars; every request fits it; one warning`, async () => {
  const settings = guardCore.parseSettings(JSON.stringify(SETTINGS)).settings;
  const fit = guardCore.fitSegment(settings, WINDOW);
  assert.ok(fit.maxSegmentChars < 40_000 && fit.maxSegmentChars >= 5_000, `the core clips to ${fit.maxSegmentChars}`);
  const warning = `maxSegmentChars 40000 is more than the classifier fakejev/jev-test (20,000 tokens) can take; using ${fit.maxSegmentChars.toLocaleString("en-US")}`;
  assert.equal(fit.warning, warning);

  const pi = await startSession({
    files: { "a.log": log("a", 1100), "b.log": log("b", 1100) },
    guardSettings: SETTINGS,
    classifierContextWindow: WINDOW,
    script: script(),
  });
  try {
    await pi.prompt("How long did job 7 take?");
    await pi.prompt("And job 14?");
    const sizes = segmentChars(pi.classifierCalls);
    // Two outputs of ~45k characters each, cut into segments of at most the clipped size.
    assert.ok(sizes.length >= 6, `${sizes.length} large requests`);
    for (const size of sizes) assert.ok(size <= fit.maxSegmentChars, `a segment of ${size} > ${fit.maxSegmentChars}`);
    assert.ok(Math.max(...sizes) > fit.maxSegmentChars - 2_000, `segments use the clipped size (largest ${Math.max(...sizes)})`);
    // The property the clip is for: the whole request, as JSON, within the window.
    for (const call of pi.classifierCalls) {
      const chars = JSON.stringify({ state: call.request.state, questions: call.request.questions }).length;
      assert.ok(chars <= WINDOW * CHARS_PER_TOKEN, `a request of ${chars} characters > ${WINDOW} tokens`);
    }
    const warnings = pi.notifications.filter((n) => n.message.includes("maxSegmentChars"));
    assert.deepEqual(
      warnings.map((n) => [n.message, n.type]),
      [[`context-guard: ${warning}`, "warning"]],
      "the warning names the key, once over two passes",
    );
    assertNoPassFailure(pi.notifications);
  } finally {
    await pi.dispose();
  }
});

test(`Pi ${piVersion}: with the classifier's usual window the same setting is kept and segments are larger`, async () => {
  const settings = guardCore.parseSettings(JSON.stringify(SETTINGS)).settings;
  const clipped = guardCore.fitSegment(settings, WINDOW).maxSegmentChars;
  const pi = await startSession({ files: { "a.log": log("a", 1100), "b.log": log("b", 1100) }, guardSettings: SETTINGS, script: script() });
  try {
    await pi.prompt("How long did job 7 take?");
    const sizes = segmentChars(pi.classifierCalls);
    assert.ok(sizes.length >= 1 && Math.max(...sizes) > clipped, `largest segment ${Math.max(...sizes)} ≤ ${clipped}: the clip made no difference`);
    assert.ok(Math.max(...sizes) <= 40_000);
    assert.deepEqual(
      pi.notifications.filter((n) => n.message.includes("maxSegmentChars")),
      [],
      "no warning",
    );
    assertNoPassFailure(pi.notifications);
  } finally {
    await pi.dispose();
  }
});
