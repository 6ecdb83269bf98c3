// /context outside the TUI, through the real `pi` command line: rpc notifies
// the plain-text report, print writes it to stdout, json adds nothing to the
// event stream.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { test } from "node:test";
import { startRpc, tempAgent } from "../harness/cli.ts";
import { offlineEnv } from "../harness/offline.ts";
import { piCli, piVersion, repoRoot } from "../harness/pi.ts";

const faux = join(repoRoot, "tests", "fixtures", "faux-cli.ts");

/** `pi <args>` with stdin closed (print and json modes read a piped stdin as input). */
function pi(args: string[], dir: { agentDir: string; cwd: string }) {
  const run = spawnSync(process.execPath, [piCli, ...args], {
    cwd: dir.cwd,
    env: offlineEnv({ PI_CODING_AGENT_DIR: dir.agentDir }),
    stdio: ["ignore", "pipe", "pipe"],
    encoding: "utf8",
    timeout: 60_000,
  });
  assert.equal(run.status, 0, run.stderr);
  return { stdout: run.stdout, stderr: run.stderr };
}

test(`Pi ${piVersion} rpc: /context notifies the same facts as plain text`, async () => {
  const dir = tempAgent();
  const rpc = startRpc(dir);
  try {
    await rpc.command({ type: "prompt", message: "Hello there" });
    await rpc.waitFor((r) => r.type === "agent_end");
    await rpc.command({ type: "prompt", message: "/context" });
    const note = String((await rpc.waitFor((r) => r.method === "notify" && String(r.message).startsWith("Context:"))).message);
    assert.match(note, /^Context: [\d.]+k? \/ 200\.0k tokens \([\d.]+%\), [\d.]+k free\n {2}\[█+░*\]\n/);
    assert.match(note, /\nAuto-compaction at 183\.6k \(reserve 16\.4k from Pi's default\), [\d.]+k headroom\n/);
    assert.match(note, /\nComposition \(estimate: [\d.]+k? tokens\)\n {2}System prompt +[\d.]+k? +[\d.]+% +█+░*\n( {4}\S.*\n)+ {2}Tool definitions \(\d+\) /);
    assert.match(note, /\n {2}User \(1\) +\d+ /);
    assert.match(note, /\n {2}Assistant \(1\) +\d+ /);
    assert.match(note, /\nDrift: Pi [\d.]+k? vs composition [\d.]+k?, /);
    assert.match(note, /\nCompactions: none on this branch\n/);
    assert.match(note, /\nLargest messages\n {2}(user|assistant) /);
    assert.match(note, /Hello there/);
  } finally {
    rpc.close();
    dir.remove();
  }
});

test(`Pi ${piVersion} rpc: /context compact reports a failure as a notification`, async () => {
  const dir = tempAgent();
  const rpc = startRpc(dir);
  try {
    await rpc.command({ type: "prompt", message: "/context compact" });
    const note = await rpc.waitFor((r) => r.method === "notify" && /Compaction failed/.test(String(r.message)));
    assert.equal(note.notifyType, "error");
  } finally {
    rpc.close();
    dir.remove();
  }
});

test(`Pi ${piVersion} print: pi -p "/context" writes the report to stdout`, async () => {
  const dir = tempAgent();
  try {
    const { stdout } = pi(["-p", "--no-session", "-e", faux, "-e", repoRoot, "--model", "faux/faux-1", "/context"], dir);
    assert.match(stdout, /^Context: 0 \/ 200\.0k tokens/);
    assert.match(stdout, /\nComposition \(estimate: [\d.]+k? tokens\)\n/);
    assert.match(stdout, /host counts messages only/);
  } finally {
    dir.remove();
  }
});

test(`Pi ${piVersion} json: /context adds nothing to the event stream`, async () => {
  const dir = tempAgent();
  try {
    const { stdout } = pi(["--mode", "json", "--no-session", "-e", faux, "-e", repoRoot, "--model", "faux/faux-1", "/context"], dir);
    for (const line of stdout.split("\n").filter(Boolean)) assert.doesNotThrow(() => JSON.parse(line), line);
    assert.doesNotMatch(stdout, /Composition \(estimate/);
  } finally {
    dir.remove();
  }
});
