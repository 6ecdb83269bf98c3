// /context outside the TUI, through the real `pi` command line: rpc notifies
// the plain-text report, print writes it to stdout, json puts it on the JSONL
// stream as an `entry_appended` record of a `context-report` custom entry
// (and `/guard` its replies as `guard-report` entries).
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { pi, startRpc, tempAgent } from "../harness/cli.ts";
import { piVersion, repoRoot } from "../harness/pi.ts";

const faux = join(repoRoot, "tests", "fixtures", "faux-cli.ts");

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
    assert.match(note, /\nDrift: Pi [\d.]+k? vs the rows' sum [\d.]+k?, /);
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
    const { stdout } = await pi(["-p", "--no-session", "-e", faux, "-e", repoRoot, "--model", "faux/faux-1", "/context"], dir);
    assert.match(stdout, /^Context: 0 \/ 200\.0k tokens/);
    assert.match(stdout, /\nComposition \(estimate: [\d.]+k? tokens\)\n/);
    assert.match(stdout, /host counts messages only/);
  } finally {
    dir.remove();
  }
});

test(`Pi ${piVersion} json: /context reaches the JSONL stream as Pi's own entry_appended record, and nothing else is printed`, async () => {
  const dir = tempAgent();
  try {
    const { stdout } = await pi(["--mode", "json", "--no-session", "-e", faux, "-e", repoRoot, "--model", "faux/faux-1", "/context"], dir);
    const records = stdout
      .split("\n")
      .filter(Boolean)
      .map((line) => JSON.parse(line));
    const entries = records.filter((r) => r.type === "entry_appended" && r.entry?.customType === "context-report");
    assert.equal(entries.length, 1, stdout);
    const { type, data } = entries[0].entry;
    assert.equal(type, "custom", "a custom entry: never in the model's context");
    assert.equal(data.schema, "pi-context-guard/context-report");
    assert.equal(data.version, 1);
    assert.match(data.text, /^Context: 0 \/ 200\.0k tokens/);
    assert.match(data.text, /\nComposition \(estimate: [\d.]+k? tokens\)\n {2}System prompt /);
    assert.equal(data.summary.tokens, 0);
    assert.equal(data.summary.window, 200_000);
    assert.ok(data.summary.estimate > 0);
    assert.equal(data.summary.requests, 0);
    assert.equal(data.counts, undefined, "small: no per-message counts");
    assert.equal(data.rows, undefined, "small: no rows");
    assert.ok(JSON.stringify(data).length < 2 * data.text.length + 1000);
  } finally {
    dir.remove();
  }
});

test(`Pi ${piVersion} json: /context export says where through the same entry`, async () => {
  const dir = tempAgent();
  try {
    const { stdout } = await pi(["--mode", "json", "--no-session", "-e", faux, "-e", repoRoot, "--model", "faux/faux-1", "/context export out.json"], dir);
    const entry = stdout
      .split("\n")
      .filter(Boolean)
      .map((line) => JSON.parse(line))
      .find((r) => r.type === "entry_appended" && r.entry?.customType === "context-report");
    assert.equal(entry?.entry.data.written, join(dir.cwd, "out.json"), stdout);
    assert.equal(entry?.entry.data.text, `Context report written to ${join(dir.cwd, "out.json")}`);
    assert.equal(JSON.parse(readFileSync(join(dir.cwd, "out.json"), "utf8")).schema, "pi-context-guard/context-report");
  } finally {
    dir.remove();
  }
});

test(`Pi ${piVersion} json: /guard replies through a guard-report entry on the stream, its subcommands too`, async () => {
  const dir = tempAgent();
  try {
    const entriesOf = (stdout: string) =>
      stdout
        .split("\n")
        .filter(Boolean)
        .map((line) => JSON.parse(line))
        .filter((r) => r.type === "entry_appended" && r.entry?.customType === "guard-report")
        .map((r) => r.entry);
    const status = entriesOf(
      (await pi(["--mode", "json", "--no-session", "-e", faux, "-e", repoRoot, "--model", "faux/faux-1", "/guard details"], dir)).stdout,
    );
    assert.equal(status.length, 1);
    assert.equal(status[0].type, "custom", "a custom entry: never in the model's context");
    assert.equal(status[0].data.kind, "info");
    assert.match(status[0].data.text, /^context-guard: on/);
    assert.match(status[0].data.text, /\n {2}cache pin: on, idle: faux\/faux-1 is not an Anthropic Messages model\n/);
    const off = entriesOf((await pi(["--mode", "json", "--no-session", "-e", faux, "-e", repoRoot, "--model", "faux/faux-1", "/guard off"], dir)).stdout);
    assert.equal(off.length, 1);
    assert.match(off[0].data.text, /^context-guard: off \(saved to .*context-guard\.json\)$/);
    const wrong = entriesOf(
      (await pi(["--mode", "json", "--no-session", "-e", faux, "-e", repoRoot, "--model", "faux/faux-1", "/guard sideways"], dir)).stdout,
    );
    assert.equal(wrong[0].data.kind, "warning");
    assert.match(wrong[0].data.text, /unknown subcommand "sideways"/);
  } finally {
    dir.remove();
  }
});
