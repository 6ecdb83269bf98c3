// Checks every guard test shares, so that a crash cannot pass for a designed
// fallback: a pass that failed also "keeps every output", and only its warning
// and its record tell the two apart.
import assert from "node:assert/strict";
import type { Loose } from "./pi.ts";

/**
 * The guard's warnings for a pass that broke (extension/guard/index.ts: "the
 * pass failed", "the pass could not finish", "the pass could not be planned",
 * each "…, nothing was changed") and Pi's report of an exception that reached
 * it ("extension error", from the session harness's onError).
 */
const brokenPass = /the pass failed|could not finish|could not be planned|nothing was changed|extension error/;

/** The messages, of notifications or plain texts (a TUI pane, rpc notifications), that say a pass broke. */
export function passFailures(messages: readonly (string | { message: string })[]): string[] {
  return messages.map((m) => (typeof m === "string" ? m : m.message)).filter((m) => brokenPass.test(m));
}

/** Fails when any message says the pass broke or an exception reached Pi. */
export function assertNoPassFailure(messages: readonly (string | { message: string })[]): void {
  const failures = passFailures(messages);
  assert.deepEqual(failures, [], `a pass broke instead of taking its designed path:\n${failures.join("\n")}`);
}

/** The records (`data` of the `context-guard` custom entries) on a branch, oldest first. */
export function guardRecords(branch: Loose[]): Loose[] {
  return branch.filter((e) => e.type === "custom" && e.customType === "context-guard").map((e) => e.data);
}

/**
 * The one pass's record: every result of `kinds` kept for `reason`, each of its
 * segments traced as `trace` (the core's jev trace, "timeout", "no-answer
 * (focus)" …), and at least one such result.
 */
export function assertKeptFor(record: Loose, expected: { reason: string; trace: string; timedOut: boolean; kinds?: string[] }): void {
  assert.ok(record, "the pass wrote a record");
  const kinds = expected.kinds ?? ["large"];
  const results = (record.results as Loose[]).filter((r) => kinds.includes(r.kind));
  assert.ok(results.length > 0, `the record has ${kinds.join("/")} results: ${JSON.stringify(record.results)}`);
  for (const r of results) {
    const where = `${r.kind} ${r.label}`;
    assert.equal(r.outcome, "kept", `${where} is kept`);
    assert.equal(r.reason, expected.reason, `${where}: the reason`);
    const segments = String(r.jev).split(" | ");
    assert.deepEqual(
      segments,
      segments.map(() => expected.trace),
      `${where}: every segment's trace is ${expected.trace}`,
    );
  }
  assert.equal(record.timedOut, expected.timedOut, "the record's timedOut");
}
