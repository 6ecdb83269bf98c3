// `node tests/harness/check-offline.ts <log>`: fails unless every connection
// that the connect recorder logged during a test run stayed on this machine.
//
// scripts/test.sh runs the end-to-end tests with the recorder preloaded into
// every process (NODE_OPTIONS) and then this on their log. It cannot pass
// empty: the log must show the recorder loaded in a Pi child (a process that
// is not a test file), or "nothing left the machine" would mean nothing. That
// the recorder sees a connection when one is made is tests/e2e/offline.test.ts's
// to prove (in-process and in a `pi -p` child), so a run of a few files
// without a loopback server passes here too.
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
if (children.length === 0) {
  console.error(`offline check: in ${log} no Pi child process loaded the recorder (the CLI and TUI tests start some), so it was not in place`);
  process.exit(1);
}
console.log(
  `offline check: ${started.length} processes recorded (${children.length} not test files), ${records.length - started.length} connection(s), all on this machine (${loopback.length} loopback)`,
);
