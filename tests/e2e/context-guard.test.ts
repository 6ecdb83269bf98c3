// `/context` and the guard together: the report says what the guard keeps out
// of the window, with the same figures as `/guard` and the status bar.
import assert from "node:assert/strict";
import { test } from "node:test";
import { keepMatching } from "../harness/classifier.ts";
import { fixtureRepo } from "../harness/fixture-repo.ts";
import { piVersion } from "../harness/pi.ts";
import { startSession } from "../harness/session.ts";

const script = [
  [
    { tool: "bash", args: { command: "rg -n status src/services" } },
    { tool: "read", args: { path: "src/lib/status.ts" } },
  ],
  "Nine services retry on 503.",
];

test(`Pi ${piVersion}: /context shows what the guard keeps out, as /guard counts it`, async () => {
  const pi = await startSession({ files: fixtureRepo(), classifier: keepMatching("=== 503"), script });
  try {
    await pi.prompt("/context");
    assert.match(pi.notifications.at(-1)?.message ?? "", /^Kept out by context-guard: nothing right now$/m);

    await pi.prompt("Which services retry on 503?");
    const saved = pi.branch().find((e: { customType?: string }) => e.customType === "context-guard").data.savedChars as number;
    await pi.prompt("/context");
    const report = pi.notifications.at(-1)?.message ?? "";
    const tokens = Math.ceil(saved / 4);
    const shown = tokens >= 1000 ? `${(Math.floor((tokens + 50) / 100) / 10).toFixed(1)}k` : String(tokens);
    assert.match(report, new RegExp(`^Kept out by context-guard: ~${shown.replace(".", "\\.")} tokens in 2 items$`, "m"));
    await pi.prompt("/guard");
    assert.match(pi.notifications.at(-1)?.message ?? "", new RegExp(`kept out of the window now: ~${shown.replace(".", "\\.")} tokens`));
  } finally {
    await pi.dispose();
  }
});

test(`Pi ${piVersion}: with the guard switched off, /context has no guard line`, async () => {
  process.env.PI_DISABLED_EXTENSIONS = "guard";
  const pi = await startSession({ files: fixtureRepo(), script });
  try {
    await pi.prompt("Which services retry on 503?");
    assert.equal(pi.classifierCalls.length, 0);
    await pi.prompt("/context");
    assert.doesNotMatch(pi.notifications.at(-1)?.message ?? "", /context-guard/);
    await pi.prompt("/guard");
    assert.doesNotMatch(pi.notifications.at(-1)?.message ?? "", /^context-guard: on/);
  } finally {
    delete process.env.PI_DISABLED_EXTENSIONS;
    await pi.dispose();
  }
});
