// Benchmark: the status bar's savings recomputation (budget 30 ms) on a
// 5,000-entry session holding 50 MB of tool output, through the extension's
// real path — `savingsColumns` over Pi's projection and the branch (the
// edited messages and the records packed as columns), one `guardCore.savings`
// call — against a straightforward TypeScript version of the same computation
// (tests/bench/reference/savings.ts) in the same process. Both must give the
// same figures.
//
// The session: 5,000 projected entries, 1,250 of them tool results of 40 KB
// (50 MB); every fifth result distilled (a note replaces it), a few old
// screenshots removed, ten omitted exchanges, 300 records and a compaction.
// Pi's projection itself is not timed: the budget is this package's work.
//
// How it is timed: both paths warm up together until V8 has optimized both
// (200 calls each), then each sample runs one call of each, alternately, so
// that both see the same machine; medians of 101. Timing one path's first
// few dozen calls and then the other's measured mostly when V8's background
// compiler finished each (the reference then read 0.5–0.8 ms; warm, ~0.1 ms).
import assert from "node:assert/strict";
import type { ProjectedEntry } from "../../extension/guard/collect.ts";
import { savingsColumns } from "../../extension/guard/figures.ts";
import { guardCore } from "../../extension/guard/wasm.ts";
import { savings } from "./reference/savings.ts";
import { alternatingMedians } from "./alternating.ts";
import { allowed, faster, timeBudget } from "./verdict.ts";

const ENTRIES = 5_000;
const OUTPUT = 43 * 1024;
const PNG = "iVBORw0KGgoAAAANSUhEUgAABQAAAAPACAIAAAB/fS41AAAAA"; // 1280×960
const big = (i: number) => `${`line ${i} 日本 😀 status ok `.repeat(Math.ceil(OUTPUT / 28))}`.slice(0, OUTPUT);

// synthetic Pi entries are loosely typed
const projection: any[] = [];
// loosely typed branch entries
const branch: any[] = [];
let n = 0;
let outputs = 0;
while (projection.length < ENTRIES) {
  const id = () => `e${++n}`;
  const push = (message: unknown, visible?: unknown[]) => {
    const sourceEntry = { id: id(), type: "message", message };
    projection.push({ sourceEntry, messages: visible ?? [message] });
    branch.push(sourceEntry);
  };
  const exchange = projection.length % 500 === 0 && projection.length > 0;
  const prompt = { role: "user", content: `question ${n} ${"x".repeat(200)}` };
  push(
    prompt,
    exchange
      ? [
          {
            role: "user",
            content: [
              {
                type: "text",
                text: `[context-guard] Omitted an earlier exchange judged unrelated to the current work: "question" (3 messages, ~10k tokens). Full exchange: recall({"entryId":"e${n + 1}"}).`,
              },
            ],
          },
        ]
      : undefined,
  );
  const call = { role: "assistant", content: [{ type: "toolCall", id: `c${n}`, name: "bash", arguments: { command: "rg -n status" } }] };
  push(call, exchange ? [] : undefined);
  const image = outputs % 97 === 5;
  const content: unknown[] = [{ type: "text", text: big(n) }];
  if (image) content.push({ type: "image", data: PNG, mimeType: "image/png" });
  const result = { role: "toolResult", toolCallId: `c${n}`, toolName: "bash", content, isError: false };
  outputs++;
  const distilled = !exchange && outputs % 5 === 0;
  const visible = exchange
    ? []
    : distilled
      ? [
          {
            ...result,
            content: [
              { type: "text", text: `[context-guard] Distilled the output of bash \`rg -n status\`: kept 9 of 410 lines.\n${"kept line\n".repeat(30)}` },
            ],
          },
        ]
      : image
        ? [
            {
              ...result,
              content: [{ type: "text", text: "[context-guard] Removed 1 image from this output (1280×960; ~1.6k tokens), 3 turns old." }, content[0]],
            },
          ]
        : undefined;
  push(result, visible);
  push({ role: "assistant", content: [{ type: "text", text: `answer ${n}` }] }, exchange ? [] : undefined);
  if (n % 60 === 0)
    branch.push({ type: "custom", customType: "context-guard", data: { v: 1, savedChars: 120_000, requests: 3, inputTokens: 4000, costUsd: 0.001 } });
  if (n === 2_000) branch.push({ type: "compaction" });
}
projection.length = ENTRIES;
while (branch.filter((e) => e.customType === "context-guard").length < 300) {
  branch.push({ type: "custom", customType: "context-guard", data: { v: 1, savedChars: 1_000, requests: 1 } });
}
const total = projection.filter((e) => e.sourceEntry.message?.role === "toolResult").reduce((a, e) => a + e.sourceEntry.message.content[0].text.length, 0);

function wasmPath() {
  return guardCore.savings(savingsColumns(projection as ProjectedEntry[], branch).columns).stats;
}

const fromWasm = wasmPath();
const fromTs = savings(projection, branch);
assert.deepEqual({ savedChars: fromWasm.savedChars, items: fromWasm.items, lifetimeChars: fromWasm.lifetimeChars, compacted: fromWasm.compacted }, fromTs);
assert.ok(fromTs.items > 200 && fromTs.compacted);

const read = () => savingsColumns(projection as ProjectedEntry[], branch).columns;
const columns = read();
const reference = () => savings(projection, branch);
const core = () => guardCore.savings(columns);

const [wasm, ts, readMs, coreMs] = alternatingMedians([wasmPath, reference, read, core], 200);
const ms = (n: number) => `${n.toFixed(3)} ms`;
console.log(
  `savings: ${ENTRIES} entries, ${(total / 1e6).toFixed(1)} M chars of tool output, ${fromTs.items} items kept out (${fromTs.savedChars} chars), Σ ${fromTs.lifetimeChars}; medians of 101 warm, alternating runs`,
);
console.log(`wasm path (savingsColumns + guardCore.savings): ${ms(wasm)} (budget 30 ms: ${timeBudget("savings", wasm, 30)})`);
console.log(`  of which reading Pi and packing the columns:  ${ms(readMs)}`);
console.log(`  and the core call (copy in, rules, JSON out): ${ms(coreMs)}`);
console.log(`TypeScript reference:                           ${ms(ts)}`);
// "Faster than TypeScript" is waived for this step because both take
// under 0.3 ms; the waiver holds while both do, with the check's leeway and
// calibration (verdict.ts: the premise is a time like any budget).
const waiver = { reason: "both under the 0.3 ms floor for a step this small", holds: wasm <= allowed(0.3) && ts <= allowed(0.3) };
console.log(`ratio TS / wasm: ${(ts / wasm).toFixed(2)} (above 1: wasm is faster): ${faster("savings", ts / wasm, waiver)}`);
