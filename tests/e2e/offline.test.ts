// The tests run offline by construction: no credential reaches Pi, PI_OFFLINE
// is set, and no socket goes anywhere but this machine. The connect recorder
// (imported first, so it is in place before Pi loads) sees this process; Pi
// children preload it and write to a log file. Each check first proves the
// recorder saw the loopback server it should see, so none can pass empty.
import "../harness/connect-recorder.mjs";
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { keepMatching } from "../harness/classifier.ts";
import { pi as runPi } from "../harness/cli.ts";
import { fixtureRepo } from "../harness/fixture-repo.ts";
import { assertNoPassFailure } from "../harness/guard-checks.ts";
import { entriesOf } from "../harness/inspect.ts";
import { assertRecorderLive, type Connect, describe, offMachine, readLog, recorded, recorderEnv, targets } from "../harness/network.ts";
import { clearedVariables, offlineEnv } from "../harness/offline.ts";
import { piVersion, repoRoot } from "../harness/pi.ts";
import { startSession } from "../harness/session.ts";
import { keepChunksWith, type SystemOne, startSystemOne } from "../harness/system-one.ts";
import { makeWorkspace } from "../harness/workspace.ts";

const search = { tool: "bash", args: { command: "grep -rn status src/services" } };

/** A System One stand-in that keeps the chunks holding `=== 503`. */
const systemOne = () => startSystemOne(...keepChunksWith("=== 503"));

/** Points Pi's openrouter provider (the guard's default model) at the stand-in. */
const modelsJson = (agentDir: string, server: SystemOne) =>
  writeFileSync(join(agentDir, "models.json"), JSON.stringify({ providers: { openrouter: { baseUrl: server.baseUrl } } }));

const portOf = (server: SystemOne) => Number(new URL(server.baseUrl).port);

/** Nothing beyond this machine, and on it nothing but the loopback server. */
function assertOnlyServer(records: Connect[], server: SystemOne, what: string) {
  const off = offMachine(records);
  assert.equal(off.length, 0, `${what} reached beyond this machine:\n${describe(off)}`);
  const other = targets(records).filter((r) => !(r.kind === "connect" && r.host === "127.0.0.1" && r.port === portOf(server)));
  assert.deepEqual(other, [], `${what} opened sockets other than the loopback server's:\n${describe(other)}`);
}

test(`Pi ${piVersion}: Pi is loaded offline and without any credential`, () => {
  assert.equal(process.env.PI_OFFLINE, "1");
  const names = clearedVariables();
  for (const name of ["OPENROUTER_API_KEY", "ANTHROPIC_API_KEY", "OPENAI_API_KEY", "GEMINI_API_KEY", "AWS_SECRET_ACCESS_KEY", "COPILOT_GITHUB_TOKEN"]) {
    assert.ok(names.includes(name), `${name} is cleared`);
  }
  assert.deepEqual(
    names.filter((name) => process.env[name] !== undefined),
    [],
    "no credential variable is set in the test process",
  );
  // A key set in this process (as a developer's shell would) never reaches a child.
  process.env.OPENROUTER_API_KEY = "from-the-shell";
  try {
    const env = offlineEnv({ EXTRA: "1" });
    assert.equal(env.OPENROUTER_API_KEY, undefined);
    assert.equal(env.PI_OFFLINE, "1");
    assert.equal(env.EXTRA, "1");
    assert.equal(offlineEnv({ OPENROUTER_API_KEY: "dummy" }).OPENROUTER_API_KEY, "dummy", "a test sets one on purpose");
  } finally {
    delete process.env.OPENROUTER_API_KEY;
  }
});

test(`Pi ${piVersion}: an SDK session with a run and a distill opens no socket`, async () => {
  await assertRecorderLive();
  const before = recorded().length;
  const pi = await startSession({ files: fixtureRepo(), classifier: keepMatching("=== 503"), script: [search, "Nine services retry on 503."] });
  try {
    await pi.prompt("Which services retry on 503?");
    assert.equal(entriesOf(pi.branch(), "custom", "context-guard")[0]?.data.results[0].outcome, "distilled");
    assertNoPassFailure(pi.notifications);
    await pi.prompt("/guard details");
    const during = recorded().slice(before);
    assert.deepEqual(during, [], `the session opened sockets:\n${describe(during)}`);
  } finally {
    await pi.dispose();
  }
});

test(`Pi ${piVersion}: the default model on a loopback System One connects to that server only`, async () => {
  const server = await systemOne();
  process.env.OPENROUTER_API_KEY = "test-key-not-secret";
  const before = recorded().length;
  const pi = await startSession({
    files: fixtureRepo(),
    // The default model; the pass is waited for: the test reads what it asked right after the run.
    guardSettings: JSON.stringify({ waitForJudge: true }),
    script: [search, "Nine services retry on 503."],
    beforeStart: (agentDir) => modelsJson(agentDir, server),
  });
  try {
    await pi.prompt("Which services retry on 503?");
    assertNoPassFailure(pi.notifications);
    assert.ok(server.calls.length > 0, "the service was asked");
    const during = recorded().slice(before);
    assert.ok(
      during.some((r) => r.kind === "connect" && r.port === portOf(server)),
      `the recorder saw the connection to the loopback server (port ${portOf(server)}):\n${describe(during)}`,
    );
    assertOnlyServer(during, server, "the session");
  } finally {
    await pi.dispose();
    await server.close();
    delete process.env.OPENROUTER_API_KEY;
  }
});

test(`Pi ${piVersion}: pi -p, with its own classifier on loopback, opens no other socket`, async () => {
  const server = await systemOne();
  // pi -p exits right after its run: the run end is waited for, so the socket it opens is seen.
  const workspace = makeWorkspace("offline", { files: fixtureRepo(), guardSettings: JSON.stringify({ waitForJudge: true }) });
  try {
    modelsJson(workspace.agentDir, server);
    const script = join(workspace.base, "script.json");
    writeFileSync(script, JSON.stringify([search, "Nine services retry on 503."]));
    const log = join(workspace.base, "connects.jsonl");
    const faux = join(repoRoot, "tests", "fixtures", "faux-cli.ts");
    const { stdout } = await runPi(["-e", faux, "-e", repoRoot, "--model", "faux/faux-1", "-p", "Which services retry on 503?"], {
      ...workspace,
      env: { ...recorderEnv(log), CG_FAUX_SCRIPT: script, CG_CLASSIFIER: "absent", OPENROUTER_API_KEY: "test-key-not-secret" },
    });
    assert.match(stdout, /Nine services retry on 503\./);
    assert.ok(server.calls.length > 0, "pi -p asked the service");
    const records = readLog(log);
    const child = records.filter((r) => r.pid !== process.pid);
    assert.ok(
      child.some((r) => r.kind === "connect" && r.port === portOf(server)),
      `the child's recorder saw its connection to port ${portOf(server)}:\n${describe(records)}`,
    );
    assertOnlyServer(records, server, "pi -p");
  } finally {
    await server.close();
    workspace.remove();
  }
});

test("the recorder names the host and port of a connection made by Node's http agent (it passes `path: null`)", async () => {
  const { createServer, get } = await import("node:http");
  const server = createServer((_req, res) => res.end("ok"));
  await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
  const port = (server.address() as { port: number }).port;
  try {
    const before = recorded().length;
    await new Promise<void>((done, fail) => get(`http://127.0.0.1:${port}/`, (res) => res.resume().on("end", done)).on("error", fail));
    const seen = recorded()
      .slice(before)
      .filter((r) => r.kind === "connect");
    assert.deepEqual(
      seen.map((r) => [r.host, r.port, r.path]),
      [["127.0.0.1", port, undefined]],
      `an http.get is a TCP connection, not a Unix socket named "null":\n${describe(seen)}`,
    );
  } finally {
    server.close();
  }
});
