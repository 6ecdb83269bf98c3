// The audit's pure parts: the figures summed from entries (Pi's context count,
// what is skipped, the records, recalls after a distill) and the sparkline.
import assert from "node:assert/strict";
import { test } from "node:test";
import { contextTokens, Tally } from "../../extension/audit/figures.ts";
import { sparkline } from "../../extension/audit/format.ts";

const reply = (usage: object, stopReason = "stop", content: object[] = []) => ({ type: "message", message: { role: "assistant", content, usage, stopReason } });
const result = (toolName: string, toolCallId: string, text: string) => ({ type: "message", message: { role: "toolResult", toolName, toolCallId, content: [{ type: "text", text }] } });

test("figures: context as Pi counts it, aborted and failed replies left out of the series, records and recalls", () => {
  assert.equal(contextTokens({ totalTokens: 900, input: 1 }), 900);
  assert.equal(contextTokens({ input: 100, output: 20, cacheRead: 300, cacheWrite: 40 }), 460);
  const t = new Tally();
  t.add(reply({ input: 100, output: 10, cacheRead: 0, cacheWrite: 0, cost: { total: 0.5, cacheRead: 0, cacheWrite: 0.1 } }, "toolUse", [{ type: "toolCall", id: "c1", name: "bash" }]));
  t.add(result("bash", "c1", "x".repeat(5000)));
  t.add(reply({ totalTokens: 5000, cacheRead: 100, cacheWrite: 200, cost: { total: 0.25, cacheRead: 0.01, cacheWrite: 0.02 } }));
  t.add(reply({ totalTokens: 9000 }, "aborted"));
  t.add({ type: "context_edit", targetId: "r1" });
  t.add({ type: "custom", customType: "context-guard", data: { savedChars: 4000, costUsd: 0.001, results: [
    { kind: "large", outcome: "distilled", beforeChars: 5000, afterChars: 1000 },
    { kind: "small", outcome: "kept", beforeChars: 800, afterChars: 800 },
  ] } });
  t.add(reply({ totalTokens: 2000 }, "toolUse", [{ type: "toolCall", id: "c2", name: "recall" }]));
  t.add(result("recall", "c2", "y".repeat(300)));
  t.add({ type: "compaction" });
  t.add(reply({ totalTokens: 1500 }));
  const f = t.f;
  assert.equal(f.requests, 5);
  assert.deepEqual(f.contextSeries, [110, 5000, 2000, 1500]);
  assert.deepEqual([f.peakContext, f.finalContext], [5000, 1500]);
  assert.deepEqual(f.editsAt, [2]);
  assert.deepEqual(f.compactionsAt, [3]);
  assert.deepEqual(f.toolOutput, { bash: { results: 1, chars: 5000 }, recall: { results: 1, chars: 300 } });
  assert.deepEqual(f.keptOut, { large: 4000 });
  assert.deepEqual([f.guardRecords, f.guardSavedChars, f.recallsAfterDistill, f.recalledChars], [1, 4000, 1, 300]);
  assert.deepEqual([f.cost.total, f.cost.cacheReadTokens, f.cost.cacheWriteTokens], [0.75, 100, 200]);
});

test("sparkline: one cell per request up to the width, each the peak of its requests, scaled to the peak", () => {
  assert.equal(sparkline([]), "");
  assert.equal(sparkline([0, 0]), "▁▁");
  // Level = round(value / peak × 7) of ▁…█: 1/8 → 1, 2/8 → 2, 4/8 → 4, 8/8 → 7.
  assert.equal(sparkline([1, 2, 4, 8]), "▂▃▅█");
  const long = Array.from({ length: 400 }, (_, i) => i);
  const line = sparkline(long, 40);
  assert.equal([...line].length, 40);
  assert.equal([...line].at(-1), "█");
});
