// With the guard off, or without its model or credential, no classifier
// request is made and the status says why.
import assert from "node:assert/strict";
import { test } from "node:test";
import { fixtureRepo } from "../harness/fixture-repo.ts";
import { assertNoPassFailure } from "../harness/guard-checks.ts";
import { piVersion } from "../harness/pi.ts";
import { startSession } from "../harness/session.ts";

const script = [{ tool: "bash", args: { command: "rg -n status src/services" } }, "Done."];

test(`Pi ${piVersion}: "enabled": false sends nothing`, async () => {
  const pi = await startSession({ files: fixtureRepo(), script, guardSettings: { enabled: false } });
  try {
    await pi.prompt("Search.");
    assert.equal(pi.classifierCalls.length, 0);
    assert.equal(pi.status("context-guard"), "🛡 guard off");
    assertNoPassFailure(pi.notifications);
  } finally {
    await pi.dispose();
  }
});

test(`Pi ${piVersion}: a model not in Pi's classifier catalog sends nothing`, async () => {
  const pi = await startSession({ files: fixtureRepo(), script, guardSettings: { model: "fakejev/no-such-model" } });
  try {
    await pi.prompt("Search.");
    assert.equal(pi.classifierCalls.length, 0);
    assert.equal(pi.status("context-guard"), "🛡 Jev model not found");
    assertNoPassFailure(pi.notifications);
  } finally {
    await pi.dispose();
  }
});

test(`Pi ${piVersion}: the default model without an OpenRouter credential sends nothing`, async () => {
  const saved = process.env.OPENROUTER_API_KEY;
  delete process.env.OPENROUTER_API_KEY;
  // No model setting: the default, openrouter/~typesafe/jev-latest, from Pi's catalog.
  const pi = await startSession({ files: fixtureRepo(), script, guardSettings: "{}" });
  try {
    await pi.prompt("Search.");
    assert.equal(pi.classifierCalls.length, 0);
    assert.equal(pi.status("context-guard"), "🛡 no openrouter key");
    assertNoPassFailure(pi.notifications);
  } finally {
    await pi.dispose();
    if (saved !== undefined) process.env.OPENROUTER_API_KEY = saved;
  }
});
