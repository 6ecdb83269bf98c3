// The machine's speed, measured in the same run as the benchmarks, so that
// `npm run bench -- --check` holds on a slower or busier machine of the kind
// and still fails a step that got slower.
//
// For: scaling the time budgets of the check (verdict.ts). Not for: the
// printed verdicts, which stay against the product's own budgets.
//
// A fixed workload of the kinds of work the benched steps do (a loop over a
// text's characters, a regular expression over its lines, substring search,
// sorting numbers), with no code of the product in it: a slower product must
// not make the calibration slower too. It allocates little on purpose: a
// first version that built its text and made a JSON round trip each round
// took 9 to 20 ms from one run to the next on one quiet machine (the
// collector's work, which depends on the process's heap), while the steps it
// scales varied by a tenth; this one varies by about a tenth too.
//
// Its median time, divided by its time on the machine the budgets were set
// on (REFERENCE_MS), is the scale of the check's budgets: a machine twice as
// slow gets twice the budget. The scale is never below 1: a faster machine is
// held to the product's own budgets.

/**
 * The workload's median time (ms) on the machine the budgets were set on:
 * the one of the closing note of 2026-12-01, whose TypeScript references
 * timed 19.2 ms (run-end pass, rg -C 2), 22.2 ms (checkpoint) and 3.24 ms
 * (/context report). Derived on 2026-12-01 by timing this workload and those
 * references on another machine of the kind and scaling by the references'
 * ratio (docs/NUMBERS.md, "The bench check's scale and leeway").
 */
export const REFERENCE_MS = 2.8;

const LINES = 6_000;
const lines: string[] = [];
for (let i = 0; i < LINES; i++) {
  lines.push(`src/module-${i % 97}/file-${i}.ts:${i + 1}:  const status = await fetch(url, { retries: ${i % 7} }); // 日本語 ${i * 7919}`);
}
const text = lines.join("\n");
const numbers = new Float64Array(20_000).map((_, i) => (i * 2654435761) % 1000003);
const hit = /^src\/module-(\d+)\/file-\d+\.ts:(\d+):/;

/** One round of the workload; returns a checksum so that nothing is optimized away. */
export function workload(): number {
  let hash = 2166136261;
  for (let i = 0; i < text.length; i++) hash = Math.imul(hash ^ text.charCodeAt(i), 16777619);
  let digits = 0;
  for (const line of lines) digits += hit.exec(line)?.[2].length ?? 0;
  let found = 0;
  for (let at = text.indexOf("status"); at >= 0; at = text.indexOf("status", at + 1)) found++;
  const sorted = numbers.slice().sort();
  return (hash >>> 0) + digits + found + sorted[0];
}

export interface Calibration {
  /** The workload's median time here (ms). */
  ms: number;
  /** ms / REFERENCE_MS, at least 1: the factor on every time budget of the check. */
  scale: number;
  /** The main thread's CPU time for a round, on average (ms): what a step's CPU time is scaled by. */
  cpuMs: number;
  /** cpuMs / REFERENCE_MS, at least 1. */
  cpuScale: number;
}

const SAMPLES = 51;

/** Times the workload in this process: 5 warm rounds, then the median of SAMPLES. */
export function calibrate(): Calibration {
  let sink = 0;
  for (let i = 0; i < 5; i++) sink += workload();
  const times: number[] = [];
  const cpu = process.threadCpuUsage();
  for (let i = 0; i < SAMPLES; i++) {
    const t = performance.now();
    sink += workload();
    times.push(performance.now() - t);
  }
  // A thread's CPU time moves in the kernel's ticks (4 ms here): read over all the rounds at once.
  const cpuMs = cpuMsSince(cpu) / SAMPLES;
  if (!(sink > 0)) throw new Error("calibration: the workload computed nothing");
  const ms = times.sort((a, b) => a - b)[Math.floor(SAMPLES / 2)];
  return { ms, scale: Math.max(1, ms / REFERENCE_MS), cpuMs, cpuScale: Math.max(1, cpuMs / REFERENCE_MS) };
}

/**
 * The main thread's CPU time (ms, user and system) since `start`, a
 * `process.threadCpuUsage()`: the time the step itself ran, whatever else
 * the machine ran meanwhile (the collector's helper threads not counted).
 * It moves in the kernel's ticks, so one short reading is 0 or a tick: take
 * the mean of many, or one over a long stretch.
 */
export function cpuMsSince(start: NodeJS.CpuUsage): number {
  const used = process.threadCpuUsage(start);
  return (used.user + used.system) / 1000;
}
