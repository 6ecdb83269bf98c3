// The settings file, `/guard`, and the status bar inside real Pi.
// The connect recorder comes first, so the malformed-file test can show that
// no request of any kind left the process.
import "../harness/connect-recorder.mjs";
import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { keepMatching } from "../harness/classifier.ts";
import { fixtureRepo } from "../harness/fixture-repo.ts";
import { assertNoPassFailure } from "../harness/guard-checks.ts";
import { assertRecorderLive, describe, recorded } from "../harness/network.ts";
import { piVersion } from "../harness/pi.ts";
import { startSession } from "../harness/session.ts";
import { startSystemOne } from "../harness/system-one.ts";

const search = [{ tool: "bash", args: { command: "rg -n status src/services" } }, "Nine services retry on 503."];

test(`Pi ${piVersion}: bad values fall back with a warning that names the key`, async () => {
  const pi = await startSession({
    files: fixtureRepo(),
    classifier: keepMatching("=== 503"),
    guardSettings: {
      minResultChars: "big",
      chunkKeepThreshold: 1.7,
      timeoutMs: -5,
      concurrency: 2.5,
      excludeTools: "edit",
      historyExchanges: 11,
      midRun: "yes",
      colour: "blue",
    },
    script: search,
  });
  try {
    await pi.prompt("Which services retry on 503?");
    const warnings = pi.notifications.filter((n) => n.type === "warning").map((n) => n.message);
    for (const key of ["minResultChars", "chunkKeepThreshold", "timeoutMs", "concurrency", "excludeTools", "historyExchanges", "midRun", "colour"]) {
      assert.ok(
        warnings.some((w) => w.includes(`"${key}"`)),
        `a warning names ${key}:\n${warnings.join("\n")}`,
      );
    }
    assert.ok(
      warnings.every((w) => w.includes("context-guard.json")),
      "each warning names the file",
    );
    // The defaults applied: the pass ran with 8,000 ms per request and distilled.
    assert.equal(pi.classifierCalls[0].timeoutMs, 8_000);
    assert.match(pi.status("context-guard") ?? "", /^🛡 −\d/);
    assertNoPassFailure(pi.notifications);
  } finally {
    await pi.dispose();
  }
});

test(`Pi ${piVersion}: a malformed file keeps the defaults and says so`, async () => {
  // The default model is openrouter's, pointed at a loopback service that counts
  // its hits; there is no key (the harness clears them all), so nothing may be sent.
  const server = await startSystemOne(
    () => 0.5,
    (_id, options) => options[0],
  );
  await assertRecorderLive();
  const before = recorded().length;
  const pi = await startSession({
    files: fixtureRepo(),
    classifier: keepMatching("=== 503"),
    guardSettings: "{ not json",
    script: search,
    beforeStart: (agentDir) => writeFileSync(join(agentDir, "models.json"), JSON.stringify({ providers: { openrouter: { baseUrl: server.baseUrl } } })),
  });
  try {
    await pi.prompt("Which services retry on 503?");
    assert.ok(pi.notifications.some((n) => n.type === "warning" && /not valid JSON/.test(n.message)));
    assert.equal(pi.status("context-guard"), "🛡 no openrouter key");
    // Zero requests of any kind: not to the stand-in, not to the service, no socket at all.
    assert.equal(pi.classifierCalls.length, 0, "no stand-in call");
    assert.equal(server.calls.length, 0, "no request to the service");
    const sockets = recorded().slice(before);
    assert.deepEqual(sockets, [], `no connection or lookup:\n${describe(sockets)}`);
    assert.ok(pi.requests.length >= 2, "the run itself happened");
    assertNoPassFailure(pi.notifications);
  } finally {
    await pi.dispose();
    await server.close();
  }
});

test(`Pi ${piVersion}: /guard shows the state and the last pass; on/off persist; reload re-reads`, async () => {
  const pi = await startSession({ files: fixtureRepo(), classifier: keepMatching("=== 503"), script: [...search, ...search] });
  const file = join(pi.agentDir, "context-guard.json");
  try {
    assert.equal(pi.status("context-guard"), "🛡 0 saved");
    await pi.prompt("Which services retry on 503?");
    assert.match(pi.status("context-guard") ?? "", /^🛡 −\d+(\.\d)?k tok · 1 item$/);

    await pi.prompt("/guard details");
    const report = pi.notifications.at(-1)?.message ?? "";
    assert.match(report, /^context-guard: on\n/);
    assert.match(report, /model: fakejev\/jev-test/);
    assert.match(report, /kept out of the window now: ~\d+(\.\d)?k tokens .* by 1 item/);
    assert.match(report, /the judge was asked at 1 run end and 0 mid-run checkpoints: \d+ requests/);
    assert.match(
      report,
      /last large outputs \(run end, \d+ ms\):\n {4}distilled bash `rg -n status src\/services`: 37\.7k → [\d.]+k? chars \((\w[\w-]* = [^;)]+(; )?)+\) kw\.05 focus=chunk_\d+:\.70/,
    );
    // The first screen (issue 28): `/guard` and `/guard status`, short, with the way to the details.
    await pi.prompt("/guard");
    const short = pi.notifications.at(-1)?.message ?? "";
    assert.match(short, /^context-guard: on\n {2}model: fakejev\/jev-test\n {2}kept out of the window now: /);
    assert.match(short, /\n {2}last pass: the run end kept out [\d.]+k? chars of 1 item \(\d+ ms\)\n {2}more: \/guard details/);
    assert.doesNotMatch(short, /kw\.|focus=|settings:|classifier:|core \d/);
    await pi.prompt("/guard status");
    assert.equal(pi.notifications.at(-1)?.message, short);

    await pi.prompt("/guard off");
    assert.equal(JSON.parse(readFileSync(file, "utf8")).enabled, false);
    assert.equal(JSON.parse(readFileSync(file, "utf8")).model, "fakejev/jev-test", "other keys are kept");
    assert.equal(pi.status("context-guard"), "🛡 guard off");
    const asked = pi.classifierCalls.length;
    await pi.prompt("Again?");
    assert.equal(pi.classifierCalls.length, asked, "off: no request");

    await pi.prompt("/guard on");
    assert.equal(JSON.parse(readFileSync(file, "utf8")).enabled, true);
    assert.match(pi.status("context-guard") ?? "", /^🛡 −/);

    writeFileSync(file, JSON.stringify({ model: "fakejev/jev-test", timeoutMs: "soon" }));
    await pi.prompt("/guard reload");
    assert.ok(pi.notifications.some((n) => n.type === "warning" && n.message.includes('"timeoutMs"')));
    await pi.prompt("/guard sideways");
    assert.match(pi.notifications.at(-1)?.message ?? "", /unknown subcommand/);
    assertNoPassFailure(pi.notifications);
  } finally {
    await pi.dispose();
  }
});

test(`Pi ${piVersion}: PI_CONTEXT_GUARD_CONFIG names the settings file`, async () => {
  const pi = await startSession({ files: fixtureRepo(), classifier: keepMatching("=== 503"), script: search });
  try {
    const elsewhere = join(pi.cwd, "my-guard.json");
    writeFileSync(elsewhere, JSON.stringify({ model: "fakejev/jev-test", enabled: false }));
    process.env.PI_CONTEXT_GUARD_CONFIG = elsewhere;
    await pi.prompt("/guard reload");
    assert.equal(pi.status("context-guard"), "🛡 guard off");
    await pi.prompt("/guard on");
    assert.equal(JSON.parse(readFileSync(elsewhere, "utf8")).enabled, true);
    assertNoPassFailure(pi.notifications);
  } finally {
    delete process.env.PI_CONTEXT_GUARD_CONFIG;
    await pi.dispose();
  }
});

test(`Pi ${piVersion}: pi -p "/guard" prints the report on stdout; rpc gets it as a notification`, async () => {
  const { pi: runPi, startRpc, tempAgent } = await import("../harness/cli.ts");
  const { repoRoot } = await import("../harness/pi.ts");
  const dir = tempAgent();
  try {
    const faux = join(repoRoot, "tests", "fixtures", "faux-cli.ts");
    const { stdout } = await runPi(["-e", faux, "-e", repoRoot, "--model", "faux/faux-1", "-p", "/guard"], dir);
    assert.match(stdout, /^context-guard: on\n {2}model: fakejev\/jev-test/);
    const rpc = startRpc(dir);
    try {
      await rpc.command({ type: "prompt", message: "/guard status" });
      const note = await rpc.waitFor((r) => r.method === "notify" && String(r.message).startsWith("context-guard: on"));
      assert.match(String(note.message), /kept out of the window now/);
      assertNoPassFailure([stdout, ...rpc.notifications()]);
    } finally {
      rpc.close();
    }
  } finally {
    dir.remove();
  }
});
