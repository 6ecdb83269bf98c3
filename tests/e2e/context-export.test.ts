// `/context export [path]` inside real Pi: the whole report as versioned JSON,
// the same object the `context:report` event carries, in the session's folder
// by default or where the user says; a path that cannot be written is a
// message, not a failure; and `pi -p "/context export …"` from the command line.
import assert from "node:assert/strict";
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { pi, tempAgent } from "../harness/cli.ts";
import { agent, type Loose, piVersion, repoRoot } from "../harness/pi.ts";
import { startSession } from "../harness/session.ts";
import { recorder } from "./context-helpers.ts";

const written = (message: string) => message.match(/^Context report written to (.+) \(pi-context-guard\/context-report v1\)$/)?.[1];

test(`Pi ${piVersion}: /context export writes the report as versioned JSON, the object the event carries`, async () => {
  const rec = recorder();
  const pi = await startSession({
    files: { "notes.txt": "alpha\n".repeat(200) },
    extensions: [rec.extension],
    script: [{ tool: "read", args: { path: "notes.txt" } }, "Read it."],
  });
  try {
    await pi.prompt("Read notes.txt");
    await pi.prompt("/context export");
    const path = written(pi.notifications.at(-1)?.message ?? "");
    assert.ok(path, pi.notifications.at(-1)?.message);
    const manager = pi.session.sessionManager;
    const folder = manager.getSessionFile() ? join(manager.getSessionFile(), "..") : manager.getSessionDir() || pi.cwd;
    assert.equal(join(path, ".."), join(folder), "the session's folder by default");
    assert.match(path, new RegExp(`context-${manager.getSessionId()}-[\\dT-]+Z\\.json$`));
    const data = JSON.parse(readFileSync(path, "utf8"));
    assert.deepEqual(data, JSON.parse(JSON.stringify(rec.last())), "the same object as the event");
    assert.equal(data.schema, "pi-context-guard/context-report");
    assert.equal(data.version, 1);
    assert.equal(data.sessionId, manager.getSessionId());
    assert.ok(!Number.isNaN(Date.parse(data.createdAt)));
    // Every row, the per-message counts (Pi's estimateTokens), the history, the series.
    const messages = pi.projection().messages;
    assert.deepEqual(
      data.counts,
      messages.map((m: Loose) => agent.estimateTokens(m)),
    );
    for (const id of ["system", "system:preamble", "tools", "tool:read", "user", "assistant", "toolResults", "result:read"]) {
      assert.ok(
        data.rows.some((r: Loose) => r.id === id),
        id,
      );
    }
    assert.equal(data.requests.count, 2);
    assert.equal(data.series.tokens.length, 2);
    assert.equal(typeof data.text, "string");

    // A path of the user's, relative to the session's folder; its folders are made.
    await pi.prompt("/context export reports/now.json");
    assert.equal(written(pi.notifications.at(-1)?.message ?? ""), join(pi.cwd, "reports", "now.json"));
    assert.equal(JSON.parse(readFileSync(join(pi.cwd, "reports", "now.json"), "utf8")).version, 1);

    // A path that cannot be written: a message, the session goes on.
    writeFileSync(join(pi.cwd, "a-file"), "x");
    await pi.prompt("/context export a-file/inside.json");
    const failure = pi.notifications.at(-1);
    assert.equal(failure?.type, "error");
    assert.match(failure?.message ?? "", /^context: the report could not be written: /);
    assert.ok(!existsSync(join(pi.cwd, "a-file", "inside.json")));
  } finally {
    await pi.dispose();
  }
});

test(`Pi ${piVersion} print: pi -p "/context export report.json" writes the file and says where`, async () => {
  const dir = tempAgent();
  try {
    const faux = join(repoRoot, "tests", "fixtures", "faux-cli.ts");
    const run = await pi(["-p", "--no-session", "-e", faux, "-e", repoRoot, "--model", "faux/faux-1", "/context export report.json"], dir);
    assert.match(run.stdout, /^Context report written to .*report\.json \(pi-context-guard\/context-report v1\)/);
    const data = JSON.parse(readFileSync(join(dir.cwd, "report.json"), "utf8"));
    assert.equal(data.schema, "pi-context-guard/context-report");
    assert.ok(data.rows.some((r: Loose) => r.id === "system"));
    assert.deepEqual(
      readdirSync(dir.cwd).filter((f) => f.endsWith(".json")),
      ["report.json"],
    );
  } finally {
    dir.remove();
  }
});
