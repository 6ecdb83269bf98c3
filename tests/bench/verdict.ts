// The benchmarks' verdicts, in one place. Each bench prints its verdict words
// through these functions; with `--check` (npm run bench -- --check) they
// also decide the exit code, and the bench ends with a line saying which
// verdicts failed.
//
// The printed verdict is the product's strict one ("OVER BUDGET" past the
// budget itself). The check allows a time up to twice its budget, because the
// machine that runs it is shared and noisy (the pass bench's worst shape reads
// ~10 ms alone and up to ~14 ms beside other work): a step that takes more
// than twice its budget is slow, not unlucky. A byte count is not noisy, so a
// size gets no leeway. A required ratio (the wasm path faster than the
// TypeScript version) fails the check below 1.0.

/** How far past its budget a time may be before `--check` fails. */
export const LEEWAY = 2;

const checking = process.argv.includes("--check");
const failures: string[] = [];
let verdicts = 0;

process.once("exit", (code) => {
  if (!checking) return;
  if (failures.length === 0) {
    console.log(`check: ok (${verdicts} verdicts)`);
    return;
  }
  console.log(`check: FAILED\n${failures.map((f) => `  - ${f}`).join("\n")}`);
  if (code === 0) process.exitCode = 1;
});

const round = (n: number) => (n >= 100 ? n.toFixed(0) : n >= 1 ? n.toFixed(2) : n.toFixed(3));

/**
 * A time against its budget: "within budget" or "OVER BUDGET"; past
 * LEEWAY × the budget, a failure of the check.
 */
export function timeBudget(what: string, ms: number, budgetMs: number): string {
  verdicts++;
  if (!(ms <= LEEWAY * budgetMs)) failures.push(`${what}: ${round(ms)} ms, more than ${LEEWAY}× its budget of ${budgetMs} ms`);
  return ms <= budgetMs ? "within budget" : "OVER BUDGET";
}

/** A size against its budget, without leeway. */
export function sizeBudget(what: string, bytes: number, budgetBytes: number): string {
  verdicts++;
  if (!(bytes <= budgetBytes)) failures.push(`${what}: ${bytes} bytes, over its budget of ${budgetBytes}`);
  return bytes <= budgetBytes ? "within budget" : "OVER BUDGET";
}

/**
 * The wasm path against the TypeScript version: "faster than …" or "NOT
 * FASTER THAN …"; a ratio TS / wasm below 1.0 fails the check unless `waived` names
 * the product's waiver and its premise still holds.
 */
export function faster(what: string, ratio: number, waived?: { reason: string; holds: boolean }): string {
  verdicts++;
  const words = `${ratio > 1 ? "faster than" : "NOT FASTER THAN"} the TypeScript version`;
  if (waived?.holds) return `${words} (waived: ${waived.reason})`;
  if (!(ratio >= 1)) {
    const why = waived ? ` (the waiver's premise, ${waived.reason}, no longer holds)` : "";
    failures.push(`${what}: the wasm path is not faster than the TypeScript version (TS / wasm ${ratio.toFixed(2)})${why}`);
  }
  return words;
}

/**
 * A goal that is a comparison rather than a time or a size (the economy's
 * ratios against guard off, a count that must be 0): "goal met" or "FAIL:
 * goal missed". A missed goal fails the check unless `uncounted` says why it
 * cannot count yet (a part of the product it rests on is not built, or a rule
 * of the spec bounds it); the line then says so, every time it is printed.
 */
export function goal(what: string, met: boolean, uncounted?: string): string {
  verdicts++;
  if (met) return "goal met";
  if (uncounted) return `FAIL: goal missed (not counted by --check: ${uncounted})`;
  failures.push(`${what}: goal missed`);
  return "FAIL: goal missed";
}
