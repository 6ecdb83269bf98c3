// `node tests/harness/check-offline.ts <log>`: fails unless every connection
// that the connect recorder logged during a test run stayed on this machine.
//
// scripts/test.sh runs the end-to-end tests with the recorder preloaded into
// every process (NODE_OPTIONS) and then this on their log. It cannot pass
// empty: the log must show the recorder in a Pi child (a process that is not a
// test file), and at least one loopback connection (the suite's System One
// tests), or "nothing left the machine" would mean nothing.
import { describe, isLoopbackHost, offMachine, readLog } from "./network.ts";

const log = process.argv[2];
if (!log) {
  console.error("usage: node tests/harness/check-offline.ts <connect log>");
  process.exit(2);
}
let records: ReturnType<typeof readLog>;
try {
  records = readLog(log);
} catch (error) {
  console.error(`offline check: cannot read ${log}: ${(error as Error).message}`);
  process.exit(1);
}
const off = offMachine(records);
if (off.length > 0) {
  console.error(`offline check: ${off.length} connection(s) or lookup(s) beyond this machine:\n${describe(off)}`);
  process.exit(1);
}
const loopback = records.filter((r) => r.kind === "connect" && r.host !== undefined && isLoopbackHost(r.host));
const started = records.filter((r) => r.kind === "start");
const children = started.filter((r) => r.script !== "" && !/\.test\.[cm]?[jt]s$/.test(r.script));
const problems = [
  loopback.length === 0 ? "no loopback connection (the System One tests connect to one)" : "",
  children.length === 0 ? "no Pi child process loaded the recorder (the CLI and TUI tests start some)" : "",
].filter(Boolean);
if (problems.length > 0) {
  console.error(`offline check: ${log} shows ${problems.join(" and ")}, so the recorder was not in place`);
  process.exit(1);
}
console.log(
  `offline check: ${started.length} processes recorded (${children.length} not test files), ${records.length - started.length} connection(s), all on this machine (${loopback.length} loopback)`,
);
