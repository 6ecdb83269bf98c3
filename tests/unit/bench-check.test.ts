// `npm run bench -- --check` on a busy machine and on a slower step (issue 17):
// the check's reading must not move while another CPU-bound process runs
// beside it (the calibration, timed in the same run, sees the same machine),
// and the check must fail when one step really does three times its work
// (CG_BENCH_SLOW, verdict.ts). The mid-run checkpoint is the step: its time
// is the one gated by a budget alone, with no TypeScript ratio to catch it,
// and the check weighs its CPU time (the process beside it takes slices of
// its wall time, none of its CPU time). Its verdict is the bench check's own
// in CI: it reads within a few percent of its limit (docs/NUMBERS.md), so a
// test of the verdict beside a busy process failed on noise, not on a change.
import assert from "node:assert/strict";
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { join } from "node:path";
import { test } from "node:test";
import { repoRoot } from "../harness/pi.ts";

const bench = join(repoRoot, "tests", "bench", "checkpoint.bench.ts");

/** Runs on the first CPU only (util-linux's `taskset`), so that a process beside it takes turns on that CPU. */
const onFirstCpu = (args: string[]) => ["-c", "0", process.execPath, ...args];

function runCheck(env: Record<string, string> = {}, pinned = false): { status: number | null; out: string } {
  const [command, args] = pinned ? ["taskset", onFirstCpu([bench, "--check"])] : [process.execPath, [bench, "--check"]];
  const r = spawnSync(command, args, { encoding: "utf8", env: { ...process.env, ...env }, timeout: 170_000 });
  if (r.error) throw r.error;
  return { status: r.status, out: `${r.stdout}${r.stderr}` };
}

/** A second process on the first CPU that keeps it busy until it is killed. */
function burner(): ChildProcess {
  return spawn("taskset", onFirstCpu(["-e", "let x = 0; for (;;) x = (x * 1103515245 + 12345) % 2147483648;"]), { stdio: "ignore" });
}

/** The checkpoint's CPU time in calibration units: the reading the check holds against its budget. */
function units(out: string): number {
  const cpu = out.match(/^ {2}the wasm path's CPU time \(its thread's\), mean: ([\d.]+) ms/m);
  const cal = out.match(/^calibration: the fixed workload took [\d.]+ ms here \(([\d.]+) ms of CPU time\)/m);
  assert.ok(cpu && cal, out);
  return Number(cpu[1]) / Number(cal[1]);
}

// The check's reading, not its verdict: the step reads near its limit (docs/NUMBERS.md), so whether it
// passes is the bench check's own verdict in CI. This test holds that a process taking turns on the same
// CPU does not move the reading, which is what the CPU time is for. (On another core of a two-core
// machine it can: shared caches pushed the reading from 10.2 to 14.8 units once in CI.)
test("beside a second CPU-bound process the check reads the same", { timeout: 360_000 }, () => {
  const idle = runCheck({}, true);
  assert.match(idle.out, /^check: (ok|FAILED)/m);
  const busy = burner();
  let beside: { status: number | null; out: string };
  try {
    beside = runCheck({}, true);
  } finally {
    busy.kill("SIGKILL");
  }
  assert.match(beside.out, /^check: (ok|FAILED)/m);
  const [a, b] = [units(idle.out), units(beside.out)];
  assert.ok(b < a * 1.3, `beside a busy process the checkpoint read ${b.toFixed(1)} calibration units, alone ${a.toFixed(1)}`);
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
