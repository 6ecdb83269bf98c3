// Benchmark: a run-end pass's own work for 1 MB of candidate output (budget
// 15 ms for any shape), through the real path — the
// functions extension/guard/index.ts calls: `coreEntries` (collect.ts),
// `guardCore.planPass`, the classifier, `guardCore.finishPass` — against a
// straightforward TypeScript version of the same steps
// (tests/bench/reference/pass.ts), in the same process.
//
// The classifier is a stand-in that answers at once by a fixed rule (keep the
// chunks that hold a needle); its time is not counted, as waiting for the
// classifier is not the pass's own work. The two versions are checked to
// agree first: the same classifier requests, byte for byte, and the same
// replacement texts and record.
//
// Three shapes of 1 MB: a plain log (a seventh of its lines with non-ASCII
// text), `rg -n` output, and `rg -C 2` output over more than 3,000 files, a
// ninth of them with dated names (`2024-05-03-release-9.md-12-` must find
// that file, not `2024`). The product requires the wasm path to be faster
// than the TypeScript one; the table prints the ratio TS / wasm (above 1:
// wasm is faster).
import assert from "node:assert/strict";
import { coreEntries, type ProjectedEntry } from "../../extension/guard/collect.ts";
import { guardCore } from "../../extension/guard/wasm.ts";
import type { GuardClassifierContext, PassAnswers, PassOutcome } from "../../extension/guard/types.ts";
import { finishPass as referenceFinish, planPass as referencePlan } from "./reference/pass.ts";
import { secretsCorpus } from "../harness/secrets-corpus.ts";
import { findSecrets, withholdSecrets as referenceSecrets } from "./reference/secrets.ts";
import { keepChunksWhere } from "./stand-in.ts";
import { calibration, faster, goal, timeBudget } from "./verdict.ts";

const SIZE = 1 << 20;
const SAMPLES = 31;

function plainLog(): string {
  const levels = ["INFO", "INFO", "INFO", "DEBUG", "WARN"];
  let s = "";
  for (let i = 0; s.length < SIZE; i++) {
    if (i % 23 === 0) s += "\n";
    const time = `12:${String(Math.floor(i / 60) % 60).padStart(2, "0")}:${String(i % 60).padStart(2, "0")}.${String(i % 1000).padStart(3, "0")}`;
    const level = i % 211 === 7 ? "ERROR" : levels[i % levels.length];
    const extra = i % 7 === 0 ? " — 日本語のログ 😀" : "";
    s += `2024-05-01 ${time} ${level} worker-${i % 13} handled request id=${i * 7919} in ${i % 97} ms${extra}\n`;
  }
  return s.slice(0, SIZE);
}

function rgN(): { text: string; files: number } {
  let s = "";
  let f = 0;
  for (; s.length < SIZE; f++) {
    const path = `packages/pkg-${f % 40}/src/services/module-${f}.ts`;
    for (let m = 0; m < 1 + (f % 5); m++)
      s += `${path}:${10 + m * 7}:  if (res.status === ${f % 11 === 0 ? 503 : 200 + m}) return retry(req); // attempt ${m}\n`;
  }
  return { text: s, files: f };
}

function rgC2(): { text: string; files: number } {
  let s = "";
  let f = 0;
  for (; s.length < SIZE; f++) {
    const path = f % 9 === 0 ? `docs/posts/2024-05-${String(1 + (f % 28)).padStart(2, "0")}-release-${f}.md` : `src/m${f % 50}/file-${f}.ts`;
    const n = 12 + (f % 80);
    if (f > 0) s += "--\n";
    s += `${path}-${n - 2}-  const before = load(${f});\n${path}-${n - 1}-\n`;
    s += `${path}:${n}:  if (status === ${f % 13 === 0 ? 503 : 404}) retry();\n${path}-${n + 1}-  return after;\n${path}-${n + 2}-}\n`;
  }
  return { text: s, files: f };
}

/** A session as Pi projects it: an earlier exchange, then the run with one large tool output. */
function session(text: string, command: string): ProjectedEntry[] {
  const entry = (id: string, message: unknown): ProjectedEntry => ({ sourceEntry: { id, type: "message", message }, messages: [message] });
  return [
    entry("u0", { role: "user", content: [{ type: "text", text: "Set up the retry policy for the HTTP clients." }], timestamp: 1 }),
    entry("a0", { role: "assistant", content: [{ type: "text", text: "Done: clients retry twice with backoff." }], stopReason: "stop", timestamp: 2 }),
    entry("u1", { role: "user", content: [{ type: "text", text: "Which services retry when the upstream answers 503?" }], timestamp: 3 }),
    entry("a1", { role: "assistant", content: [{ type: "toolCall", id: "c1", name: "bash", arguments: { command } }], stopReason: "toolUse", timestamp: 4 }),
    entry("r1", { role: "toolResult", toolCallId: "c1", toolName: "bash", content: [{ type: "text", text }], isError: false, timestamp: 5 }),
    entry("a2", {
      role: "assistant",
      content: [{ type: "text", text: "The services in src/m7 and module-7 retry on 503." }],
      stopReason: "stop",
      timestamp: 6,
    }),
  ];
}

/** The stand-in classifier: keeps the chunks that hold `needle`. */
const classify = (requests: GuardClassifierContext[], needle: string): PassAnswers => keepChunksWhere(requests, (text) => text.includes(needle));

const settings = guardCore.parseSettings("").settings;

interface Run {
  /** The pass's own work: everything but the classifier. */
  ms: number;
  planMs: number;
  requests: GuardClassifierContext[];
  outcome: Pick<PassOutcome, "entries" | "record" | "savedChars">;
}

function viaWasm(entries: ProjectedEntry[], needle: string): Run {
  const t0 = performance.now();
  const planned = guardCore.planPass({ entries: coreEntries(entries), settings, classifier: true });
  const t1 = performance.now();
  const answers = classify(planned.requests, needle);
  const t2 = performance.now();
  const outcome = guardCore.finishPass(planned.pass, answers);
  const t3 = performance.now();
  return { ms: t1 - t0 + (t3 - t2), planMs: t1 - t0, requests: planned.requests, outcome };
}

function viaTypeScript(entries: ProjectedEntry[], needle: string): Run {
  const t0 = performance.now();
  const planned = referencePlan(entries, settings);
  const t1 = performance.now();
  const answers = classify(planned.requests, needle);
  const t2 = performance.now();
  const outcome = referenceFinish(planned.state, answers);
  const t3 = performance.now();
  return { ms: t1 - t0 + (t3 - t2), planMs: t1 - t0, requests: planned.requests, outcome };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

const log = plainLog();
const grepN = rgN();
const grepC = rgC2();
const shapes = [
  { name: "plain text log", detail: `${log.split("\n").length - 1} lines`, text: log, command: "cat logs/app.log", needle: "ERROR worker-3" },
  { name: "rg -n", detail: `${grepN.files} files`, text: grepN.text, command: "rg -n status packages", needle: "module-7" },
  { name: "rg -C 2", detail: `${grepC.files} files`, text: grepC.text, command: "rg -C 2 status src docs", needle: "src/m7/" },
];

const rows: { name: string; detail: string; wasm: number; plan: number; ts: number }[] = [];
for (const shape of shapes) {
  const entries = session(shape.text, shape.command);
  // The two agree: the same requests, byte for byte, and the same drafts and record.
  const a = viaWasm(entries, shape.needle);
  const b = viaTypeScript(entries, shape.needle);
  assert.equal(JSON.stringify(a.requests), JSON.stringify(b.requests), `${shape.name}: the requests differ`);
  assert.deepEqual(a.outcome.entries, b.outcome.entries, `${shape.name}: the drafts differ`);
  assert.equal(a.outcome.savedChars, b.outcome.savedChars);
  const edit = a.outcome.entries[0];
  assert.ok(edit?.type === "context_edit" && a.outcome.record?.results[0].outcome === "distilled", `${shape.name}: distilled`);

  const wasm: number[] = [];
  const plan: number[] = [];
  const ts: number[] = [];
  for (let i = 0; i < 5; i++) {
    viaWasm(entries, shape.needle);
    viaTypeScript(entries, shape.needle);
  }
  for (let i = 0; i < SAMPLES; i++) {
    const w = viaWasm(entries, shape.needle);
    wasm.push(w.ms);
    plan.push(w.planMs);
    ts.push(viaTypeScript(entries, shape.needle).ms);
  }
  rows.push({ name: shape.name, detail: shape.detail, wasm: median(wasm), plan: median(plan), ts: median(ts) });
}

const ms = (n: number) => `${n.toFixed(2)} ms`.padStart(9);
console.log(`run-end pass, 1 MB of candidate output (${SIZE.toLocaleString("en")} characters); the pass's own work (collect, plan, finish;`);
console.log(`the stand-in classifier's time left out), medians of ${SAMPLES} warm runs:`);
console.log("                                        wasm path  (plan)   TypeScript   TS / wasm");
for (const r of rows) {
  const label = `  ${r.name} (${r.detail})`.padEnd(38);
  const what = `run-end pass, ${r.name}`;
  console.log(
    `${label}${ms(r.wasm)}  ${ms(r.plan)}  ${ms(r.ts)}   ${(r.ts / r.wasm).toFixed(2)}x  ${timeBudget(what, r.wasm, 15)}, ${faster(what, r.ts / r.wasm)}`,
  );
}
const worst = Math.max(...rows.map((r) => r.wasm));
console.log(
  `  wasm path ${worst <= 15 ? "within budget" : "OVER BUDGET"} (15 ms) for every shape (worst ${worst.toFixed(2)} ms); ${rows.every((r) => r.wasm < r.ts) ? "faster than" : "NOT FASTER THAN"} the TypeScript version for every shape`,
);

// The secrets step (issue 18), which every request to the judge passes: its
// time per MB on the three shapes above and on a megabyte of the secrets
// corpus (fake secrets of 17 kinds in `.env` files, logs, traces, JSON),
// through the core as the wasm runs it (`countSecrets`: the text copied in,
// every secret found; the pass's own time above already includes the step),
// against a straightforward TypeScript version (tests/bench/reference/secrets.ts:
// every rule's pattern over the whole text with V8). Both must withhold every
// planted secret of the corpus first. The shapes are gated by the pass's
// budget (15 ms for 1 MB); the corpus, a megabyte of little but secrets
// (each one confirmed by its regex-lite pattern), is printed, not gated.
// The ratios are printed, not judged (the product asks them of the pass).
const corpus = secretsCorpus(40);
let secretsText = "";
while (secretsText.length < SIZE) secretsText += corpus.outputs.join("");
secretsText = secretsText.slice(0, SIZE);
const inCorpus = corpus.planted.filter((p) => secretsText.includes(p.value));
const wasmSent = guardCore.withholdSecrets(secretsText).text;
const tsSent = referenceSecrets(secretsText).text;
for (const p of inCorpus) {
  assert.ok(!wasmSent.includes(p.value), `the core let a ${p.kind} through`);
  assert.ok(!tsSent.includes(p.value), `the TypeScript version let a ${p.kind} through`);
}
console.log(`\nthe secrets step, per MB (medians of ${SAMPLES} warm, alternating runs); the corpus: ${inCorpus.length} secrets, all withheld by both:`);
console.log("                                        wasm path   TypeScript   TS / wasm   found (wasm / TS)");
for (const shape of [...shapes, { name: "secrets corpus", text: secretsText }]) {
  const text = shape.text;
  const mb = text.length / 1e6;
  const times: [number[], number[]] = [[], []];
  for (let i = 0; i < 3; i++) {
    guardCore.countSecrets(text);
    findSecrets(text);
  }
  for (let i = 0; i < SAMPLES; i++) {
    let t = performance.now();
    guardCore.countSecrets(text);
    times[0].push(performance.now() - t);
    t = performance.now();
    findSecrets(text);
    times[1].push(performance.now() - t);
  }
  const [w, t] = [median(times[0]) / mb, median(times[1]) / mb];
  const found = `${guardCore.countSecrets(text)} / ${findSecrets(text).length}`;
  const what = `secrets step, ${shape.name}`;
  const verdict =
    shape.text === secretsText
      ? `${w <= 15 ? "within" : "over"} the pass's 15 ms (printed, not gated: ${((w / guardCore.countSecrets(text)) * 1000).toFixed(0)} µs a secret)`
      : `${timeBudget(what, w, 15)} (15 ms per MB)`;
  console.log(`  ${shape.name.padEnd(38)}${ms(w)}    ${ms(t)}   ${(t / w).toFixed(2)}x       ${found}   ${verdict}`);
}

// The secrets step on inputs written to be slow (linear, at least 5 MB/s: docs/GUARD.md "What is
// withheld"): each shape at 50 KB and at 1 MB. Gated on ratios: the time per byte at 1 MB at most
// 3× that at 50 KB (a step that grows with the square of its input is 20× there), and the speed,
// scaled by the calibration, at least 5 MB/s.
const hostile: [string, (n: number) => string][] = [
  ["`password=` repeated", (n) => "password=".repeat(n / 9)],
  ["`key=` and 150-character values", (n) => Array.from({ length: n / 160 }, (_, i) => `key=${"aB3".repeat(50)}${i}`).join("\n")],
  ["unterminated quotes", (n) => 'token = "'.repeat(n / 9)],
  ["`eyJa.` repeated", (n) => "eyJa.".repeat(n / 5)],
  ["a `\\` continuation on every line", (n) => Array.from({ length: n / 20 }, (_, i) => `secret=abc${i}def \\`).join("\n")],
  ["32 hex, `-us1`, repeated", (n) => `${"0123456789abcdef".repeat(2)}-us1 `.repeat(n / 37)],
  ["`Q~` repeated", (n) => "abc1Q~".repeat(n / 6)],
  ["one line of `a=b`", (n) => "a=b ".repeat(n / 4)],
];
const perByte = (text: string) => {
  guardCore.countSecrets(text);
  const times: number[] = [];
  for (let i = 0; i < 5; i++) {
    const t = performance.now();
    guardCore.countSecrets(text);
    times.push(performance.now() - t);
  }
  return median(times) / text.length;
};
console.log("\nthe secrets step on inputs written to be slow (medians of 5): MB/s at 50 KB and at 1 MB");
const scale = calibration().scale;
for (const [name, make] of hostile) {
  const [small, large] = [perByte(make(50_000)), perByte(make(1_000_000))];
  const mbps = (ns: number) => 1 / ns / 1000;
  const slowest = Math.min(mbps(small), mbps(large));
  const verdict = goal(`secrets step, ${name}: linear and at least 5 MB/s`, large <= 3 * small && slowest * scale >= 5);
  console.log(`  ${name.padEnd(38)}${mbps(small).toFixed(1).padStart(7)} → ${mbps(large).toFixed(1).padStart(6)} MB/s   ${verdict}`);
}
