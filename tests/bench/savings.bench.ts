// Benchmark: the status bar's savings recomputation (budget 30 ms) on a
// 5,000-entry session holding 50 MB of tool output, through the extension's
// real path — `editedEntries` over Pi's projection, the branch's records and
// compactions, one `guardCore.stats` call — against a straightforward
// TypeScript version of the same computation (tests/bench/reference/savings.ts)
// in the same process. Both must give the same figures.
//
// The session: 5,000 projected entries, 1,250 of them tool results of 40 KB
// (50 MB); every fifth result distilled (a note replaces it), a few old
// screenshots removed, ten omitted exchanges, 300 records and a compaction.
// Pi's projection itself is not timed: the budget is this package's work.
import assert from "node:assert/strict";
import { editedEntries, type ProjectedEntry } from "../../extension/guard/collect.ts";
import { guardCore, type StatsInput } from "../../extension/guard/wasm.ts";
import { savings } from "./reference/savings.ts";

const ENTRIES = 5_000;
const OUTPUT = 43 * 1024;
const PNG = "iVBORw0KGgoAAAANSUhEUgAABQAAAAPACAIAAAB/fS41AAAAA"; // 1280×960
const big = (i: number) => `${`line ${i} 日本 😀 status ok `.repeat(Math.ceil(OUTPUT / 28))}`.slice(0, OUTPUT);

// biome-ignore lint: synthetic Pi entries are loosely typed
const projection: any[] = [];
// biome-ignore lint: loosely typed branch entries
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
  push(prompt, exchange ? [{ role: "user", content: [{ type: "text", text: `[context-guard] Omitted an earlier exchange judged unrelated to the current work: "question" (3 messages, ~10k tokens). Full exchange: recall({"entryId":"e${n + 1}"}).` }] }] : undefined);
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
      ? [{ ...result, content: [{ type: "text", text: `[context-guard] Distilled the output of bash \`rg -n status\`: kept 9 of 410 lines.\n${"kept line\n".repeat(30)}` }] }]
      : image
        ? [{ ...result, content: [{ type: "text", text: "[context-guard] Removed 1 image from this output (1280×960; ~1.6k tokens), 3 turns old." }, content[0]] }]
        : undefined;
  push(result, visible);
  push({ role: "assistant", content: [{ type: "text", text: `answer ${n}` }] }, exchange ? [] : undefined);
  if (n % 60 === 0) branch.push({ type: "custom", customType: "context-guard", data: { v: 1, savedChars: 120_000, requests: 3, inputTokens: 4000, costUsd: 0.001 } });
  if (n === 2_000) branch.push({ type: "compaction" });
}
projection.length = ENTRIES;
while (branch.filter((e) => e.customType === "context-guard").length < 300) {
  branch.push({ type: "custom", customType: "context-guard", data: { v: 1, savedChars: 1_000, requests: 1 } });
}
const total = projection.filter((e) => e.sourceEntry.message?.role === "toolResult").reduce((a, e) => a + e.sourceEntry.message.content[0].text.length, 0);

function wasmPath() {
  const marks: StatsInput["marks"] = [];
  for (const e of branch) {
    if (e.type === "custom" && e.customType === "context-guard") marks.push({ kind: "record", data: e.data });
    else if (e.type === "compaction") marks.push({ kind: "compaction" });
  }
  return guardCore.stats({ edited: editedEntries(projection as ProjectedEntry[]), marks }).stats;
}

const fromWasm = wasmPath();
const fromTs = savings(projection, branch);
assert.deepEqual(
  { savedChars: fromWasm.savedChars, items: fromWasm.items, lifetimeChars: fromWasm.lifetimeChars, compacted: fromWasm.compacted },
  fromTs,
);
assert.ok(fromTs.items > 200 && fromTs.compacted);

function median(f: () => unknown, runs = 31): number {
  for (let i = 0; i < 5; i++) f();
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t = performance.now();
    f();
    times.push(performance.now() - t);
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(runs / 2)];
}

const wasm = median(wasmPath);
const ts = median(() => savings(projection, branch));
console.log(`savings: ${ENTRIES} entries, ${(total / 1e6).toFixed(1)} M chars of tool output, ${fromTs.items} items kept out (${fromTs.savedChars} chars), Σ ${fromTs.lifetimeChars}`);
console.log(`wasm path (editedEntries + guardCore.stats): median ${wasm.toFixed(2)} ms (budget 30 ms)`);
console.log(`TypeScript reference:                        median ${ts.toFixed(2)} ms`);
console.log(`ratio TS / wasm: ${(ts / wasm).toFixed(2)} (above 1: wasm is faster)`);
