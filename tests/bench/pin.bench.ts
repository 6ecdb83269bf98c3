// Benchmark: the Anthropic cache pin's step on one request (docs/GUARD.md "The
// cache pin (Anthropic)"; extension/guard/pin.ts), the first after an edit in a
// run of 40 tool outputs totalling 2 MB: reading the body's blocks, their
// prefixes and their own hashes, finding the read point, the write anchor and
// the question. The product's path is the extension's: `JSON.stringify` of Pi's
// payload, `CacheLog.plan` in the wasm module, `JSON.parse` of the plan. The
// TypeScript version (tests/bench/reference/pin.ts) walks the payload object
// itself. Both see the same 40 earlier requests and responses first and must
// give the same marks. No budget is set for this step (it runs once per
// provider request, which takes seconds); the time and the ratio are printed
// without a verdict.
import assert from "node:assert/strict";
import { CacheLog } from "../../pkg/context_guard.js";
import "../../extension/core.ts";
import { ReferencePin } from "./reference/pin.ts";

const OUTPUTS = 40;
const EACH = Math.floor((2 * 1024 * 1024) / OUTPUTS);
const SAMPLES = 21;
const MODEL = "anthropic/claude-sonnet-4-5";

function body(outputs: string[]): any {
  const messages: any[] = [{ role: "user", content: "Fix all failing tests." }];
  outputs.forEach((text, i) => {
    messages.push({
      role: "assistant",
      content: [
        { type: "text", text: `Step ${i}.` },
        { type: "tool_use", id: `toolu_${i}`, name: "bash", input: { command: "npm test 2>&1" } },
      ],
    });
    messages.push({ role: "user", content: [{ type: "tool_result", tool_use_id: `toolu_${i}`, content: [{ type: "text", text }] }] });
  });
  const last = messages.at(-1).content;
  last[last.length - 1] = { ...last.at(-1), cache_control: { type: "ephemeral" } };
  return {
    model: "claude-sonnet-4-5",
    system: [{ type: "text", text: "You are a coding agent.\n".repeat(90), cache_control: { type: "ephemeral" } }],
    tools: ["read", "bash", "edit", "write"].map((name, i, all) => ({
      name,
      input_schema: { type: "object" },
      ...(i === all.length - 1 ? { cache_control: { type: "ephemeral" } } : {}),
    })),
    messages,
  };
}

const log = (i: number) =>
  Array.from({ length: Math.ceil(EACH / 60) }, (_, k) =>
    k % 41 === i % 41 ? `FAIL test/case-${k}.test.ts expected ${k}` : `PASS test/case-${k}.test.ts (${k % 97} ms)`,
  )
    .join("\n")
    .slice(0, EACH);
const outputs = Array.from({ length: OUTPUTS }, (_, i) => log(i));
const requestChars = (b: unknown) => JSON.stringify(b).length;

/** A fresh pair of logs that saw the same 40 requests, each answered by reading what the one before wrote. */
function warmed(): { wasm: CacheLog; ts: ReferencePin } {
  const wasm = new CacheLog();
  const ts = new ReferencePin();
  let cached = 0;
  for (let n = 1; n <= OUTPUTS; n++) {
    const b = body(outputs.slice(0, n));
    wasm.plan(JSON.stringify(b), MODEL, n);
    ts.plan(b, n);
    const end = Math.ceil(requestChars(b) / 4);
    wasm.observe(MODEL, cached, end - cached);
    ts.observe(cached, end - cached);
    cached = end;
  }
  return { wasm, ts };
}

// Output 30 distilled: the first request after that edit.
const edited = [...outputs];
edited[30] = "[context-guard] Distilled: FAIL lines kept.";
const after = body(edited);

const viaWasm = (l: CacheLog) =>
  JSON.parse(l.plan(JSON.stringify(after), MODEL, 100)) as { marks: { message: number; block: number; why: string }[]; dropSystem: boolean };
const { wasm: w0, ts: t0 } = warmed();
const a = viaWasm(w0);
const b = t0.plan(after, 100);
assert.deepEqual(
  a.marks.map((m) => [m.message, m.block, m.why]),
  b.marks.map((m) => [m.message, m.block, m.why]),
  "the two versions place the same breakpoints",
);
assert.equal(a.dropSystem, b.dropSystem);
assert.deepEqual(
  a.marks.map((m) => m.why),
  ["read", "write"],
  "the step measured is the one after an edit, with a read point",
);

function median(run: () => void): number {
  const times: number[] = [];
  for (let k = 0; k < SAMPLES; k++) {
    const t = performance.now();
    run();
    times.push(performance.now() - t);
  }
  return times.sort((x, y) => x - y)[Math.floor(SAMPLES / 2)];
}

// Each sample plans on a log in the state before the edited request (planning records the request).
const wasmLogs = Array.from({ length: SAMPLES + 3 }, () => warmed());
let i = 0;
const wasmMs = median(() => viaWasm(wasmLogs[i++].wasm));
let j = 0;
const tsMs = median(() => wasmLogs[j++].ts.plan(after, 100));
console.log(`cache pin, first request after an edit, ${OUTPUTS} outputs, body ${(requestChars(after) / 1e6).toFixed(2)} MB (median of ${SAMPLES}):`);
console.log(
  `  wasm path (JSON.stringify + CacheLog.plan + JSON.parse) ${wasmMs.toFixed(2)} ms, TypeScript version ${tsMs.toFixed(2)} ms: ratio TS / wasm ${(tsMs / wasmMs).toFixed(2)} (no budget of its own; printed without a verdict)`,
);
