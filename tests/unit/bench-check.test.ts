// `npm run bench -- --check` on a busy machine and on a slower step (issue 17):
// the check must hold while another CPU-bound process runs beside it (the
// calibration, timed in the same run, sees the same machine), and must fail
// when one step really does three times its work (CG_BENCH_SLOW, verdict.ts).
// The mid-run checkpoint is the step: its time is the one gated by a budget
// alone, with no TypeScript ratio to catch it, and the check weighs its CPU
// time (the process beside it takes slices of its wall time, none of its CPU
// time).
import assert from "node:assert/strict";
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { join } from "node:path";
import { test } from "node:test";
import { repoRoot } from "../harness/pi.ts";

const bench = join(repoRoot, "tests", "bench", "checkpoint.bench.ts");

function runCheck(env: Record<string, string> = {}): { status: number | null; out: string } {
  const r = spawnSync(process.execPath, [bench, "--check"], { encoding: "utf8", env: { ...process.env, ...env }, timeout: 170_000 });
  return { status: r.status, out: `${r.stdout}${r.stderr}` };
}

/** A second process that keeps one core busy until it is killed. */
function burner(): ChildProcess {
  return spawn(process.execPath, ["-e", "let x = 0; for (;;) x = (x * 1103515245 + 12345) % 2147483648;"], { stdio: "ignore" });
}

test("the check passes beside a second CPU-bound process", { timeout: 180_000 }, () => {
  const busy = burner();
  try {
    const r = runCheck();
    assert.equal(r.status, 0, r.out);
    assert.match(r.out, /^check: ok/m);
    assert.match(r.out, /^calibration: the fixed workload took [\d.]+ ms here/m);
  } finally {
    busy.kill("SIGKILL");
  }
});

test("the check fails when the checkpoint does three times its work, and names it", { timeout: 180_000 }, () => {
  const r = runCheck({ CG_BENCH_SLOW: "checkpoint:3" });
  assert.equal(r.status, 1, r.out);
  assert.match(
    r.out,
    /^check: FAILED\n {2}- mid-run checkpoint, 40 outputs, 2 MB: [\d.]+ ms of CPU time, more than 1\.9 × its budget of 20 ms × calibration [\d.]+/m,
  );
});

test("a malformed slowdown is refused, not ignored", () => {
  const r = runCheck({ CG_BENCH_SLOW: "checkpoint:x" });
  assert.notEqual(r.status, 0);
  assert.match(r.out, /CG_BENCH_SLOW: the factor must be a whole number ≥ 1, not 'x'/);
});
