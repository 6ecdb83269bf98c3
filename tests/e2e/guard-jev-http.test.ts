// The default classifier's real path, on loopback: the default model id from
// Pi's catalog, its credential, and Pi's own System One client over HTTP; and
// the service failing in each way HTTP can, each a designed fallback (the
// record's reason, no warning that the pass broke).
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { fixtureRepo } from "../harness/fixture-repo.ts";
import { assertKeptFor, assertNoPassFailure, guardRecords } from "../harness/guard-checks.ts";
import { entriesOf } from "../harness/inspect.ts";
import { piVersion } from "../harness/pi.ts";
import { startSession } from "../harness/session.ts";
import { keepChunksWith, type SystemOneFailure, startSystemOne } from "../harness/system-one.ts";

test(`Pi ${piVersion}: the default model, openrouter/~typesafe/jev-latest, through Pi's HTTP client`, async () => {
  const server = await startSystemOne(...keepChunksWith("=== 503"));
  const saved = process.env.OPENROUTER_API_KEY;
  process.env.OPENROUTER_API_KEY = "test-key-not-secret";
  const pi = await startSession({
    files: fixtureRepo(),
    // The default model; the pass is waited for: the test reads what it asked right after the run.
    guardSettings: JSON.stringify({ waitForJudge: true }),
    script: [{ tool: "bash", args: { command: "rg -n status src/services" } }, "Nine services retry on 503."],
    beforeStart: (agentDir: string) => writeFileSync(join(agentDir, "models.json"), JSON.stringify({ providers: { openrouter: { baseUrl: server.baseUrl } } })),
  });
  try {
    await pi.prompt("Which services retry on 503?");
    assert.equal(pi.classifierCalls.length, 0, "the stand-in was not used");
    assert.ok(server.calls.length >= 2, `${server.calls.length} HTTP requests`);
    for (const call of server.calls) {
      assert.equal(call.path, "/systemone");
      assert.equal(call.authorization, "Bearer test-key-not-secret");
      assert.equal(call.body.model, "~typesafe/jev-latest");
      assert.equal(call.body.questions?.keep_whole.type, "noul", "bool questions travel as noul");
      assert.equal(call.body.questions?.focus.type, "choice");
    }
    const record = entriesOf(pi.branch(), "custom", "context-guard")[0].data;
    assert.equal(record.model, "openrouter/~typesafe/jev-latest");
    assert.equal(record.results[0].outcome, "distilled");
    assert.equal(record.inputTokens, 1234 * server.calls.length, "usage comes from the service's answer");
    assert.match(pi.status("context-guard") ?? "", /^🛡 −\d/);
    assertNoPassFailure(pi.notifications);
  } finally {
    await pi.dispose();
    await server.close();
    if (saved === undefined) delete process.env.OPENROUTER_API_KEY;
    else process.env.OPENROUTER_API_KEY = saved;
  }
});

// How Pi's client reports each failure, and so the record's reason: an HTTP
// error (after Pi's one retry) and a body that is not JSON are errors; a reply
// with no answers is an error too (Pi's client requires every question
// answered); no reply is the guard's own timeout.
const failures: [SystemOneFailure, { reason: string; trace: string; timedOut: boolean }][] = [
  ["http-500", { reason: "error", trace: "error", timedOut: false }],
  ["not-json", { reason: "error", trace: "error", timedOut: false }],
  ["no-answers", { reason: "error", trace: "error", timedOut: false }],
  ["hang", { reason: "timeout", trace: "timeout", timedOut: true }],
];

for (const [failure, expected] of failures) {
  test(`Pi ${piVersion}: the default model's service failing (${failure}) keeps the output`, async () => {
    const server = await startSystemOne(
      () => 0.1,
      (_id, options) => options[0],
      failure,
    );
    process.env.OPENROUTER_API_KEY = "test-key-not-secret";
    const timeoutMs = 1_500;
    const pi = await startSession({
      files: fixtureRepo(),
      guardSettings: JSON.stringify({ timeoutMs, waitForJudge: true }),
      script: [{ tool: "bash", args: { command: "rg -n status src/services" } }, "Nine services retry on 503."],
      beforeStart: (agentDir: string) =>
        writeFileSync(join(agentDir, "models.json"), JSON.stringify({ providers: { openrouter: { baseUrl: server.baseUrl } } })),
    });
    try {
      const started = Date.now();
      await pi.prompt("Which services retry on 503?");
      const settled = Date.now() - started;
      assert.ok(server.calls.length >= 1, "the service was asked");
      assert.ok(settled < timeoutMs + 1_000, `settled after ${settled} ms (budget ${timeoutMs} ms)`);
      const records = guardRecords(pi.branch());
      assert.equal(records.length, 1, "one pass, one record");
      assertKeptFor(records[0], expected);
      assert.equal(records[0].model, "openrouter/~typesafe/jev-latest");
      assert.equal(entriesOf(pi.branch(), "context_edit").length, 0, "nothing was changed");
      assertNoPassFailure(pi.notifications);
    } finally {
      await pi.dispose();
      await server.close();
      delete process.env.OPENROUTER_API_KEY;
    }
  });
}
