// `/context` and the guard together: the report says what the guard keeps out
// of the window, with the same figures as `/guard` and the status bar, by kind,
// and how often the model recalled what it kept out.
import assert from "node:assert/strict";
import { test } from "node:test";
import { keepMatching } from "../harness/classifier.ts";
import { fixtureRepo } from "../harness/fixture-repo.ts";
import { type Loose, piVersion } from "../harness/pi.ts";
import { startSession } from "../harness/session.ts";
import { recorder } from "./context-helpers.ts";

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
    await pi.prompt("/guard details");
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
    await pi.prompt("/guard details");
    assert.doesNotMatch(pi.notifications.at(-1)?.message ?? "", /^context-guard: on/);
  } finally {
    delete process.env.PI_DISABLED_EXTENSIONS;
    await pi.dispose();
  }
});

test(`Pi ${piVersion}: /context shows the guard's part by kind and the outputs the model recalled after it kept them out, by tool`, async () => {
  const rec = recorder();
  let pi: Awaited<ReturnType<typeof startSession>> | undefined;
  // The model recalls the bash output the guard kept out, by the entry id its record names.
  const recallBash = () => {
    const record = pi?.branch().findLast((e: Loose) => e.customType === "context-guard");
    const bash = record?.data.results.find((r: Loose) => r.tool === "bash" && r.outcome !== "kept");
    return { tool: "recall", args: { entryId: bash?.entryId ?? "none" } };
  };
  pi = await startSession({
    files: fixtureRepo(),
    classifier: keepMatching("=== 503"),
    extensions: [rec.extension],
    script: [...script, recallBash, "Recalled it."],
  });
  try {
    await pi.prompt("Which services retry on 503?");
    await pi.prompt("Show me the whole search output again");
    const branch = pi.branch();
    assert.ok(
      branch.some((e: Loose) => e.type === "message" && e.message.role === "toolResult" && e.message.toolName === "recall"),
      "the model called recall",
    );
    await pi.prompt("/context");
    const detail = rec.last().keptDetail;

    // Expected from the records on the branch: each entry as its newest record left it.
    const newest = new Map<string, Loose>();
    for (const e of branch) if (e.customType === "context-guard") for (const r of e.data.results) newest.set(r.entryId, r);
    const out = [...newest.values()].filter((r) => r.outcome !== "kept");
    assert.ok(out.length >= 2, JSON.stringify([...newest.values()]));
    for (const k of detail.kinds) {
      const mine = out.filter((r) => r.kind === k.kind);
      assert.equal(k.items, mine.length, k.kind);
      assert.equal(
        k.chars,
        mine.reduce((s, r) => s + r.beforeChars - r.afterChars, 0),
        k.kind,
      );
    }
    assert.equal(detail.keptOut, out.length);
    assert.equal(detail.recalled, 1);
    assert.deepEqual(
      detail.tools.find((t: Loose) => t.tool === "bash"),
      { tool: "bash", keptOut: out.filter((r) => r.tool === "bash").length, recalled: 1 },
    );
    assert.equal(detail.tools.find((t: Loose) => t.tool === "read")?.recalled ?? 0, 0);
    const text = pi.notifications.at(-1)?.message ?? "";
    assert.match(text, /\n {2}By kind, every pass on this branch:\n( {4}(large outputs|small outputs|exchanges|images): \d+ kept out, ~[\d.]+k? tokens\n)+/);
    assert.ok(text.includes(`\nRecalled after the guard kept it out: 1 of ${out.length} (bash 1 of ${out.filter((r) => r.tool === "bash").length})`), text);
  } finally {
    await pi.dispose();
  }
});

test(`Pi ${piVersion} json mode: /context's entry stays out of the model's context, /guard's figures and the report's own`, async () => {
  const rec = recorder();
  const pi = await startSession({
    mode: "json",
    files: fixtureRepo(),
    classifier: keepMatching("=== 503"),
    extensions: [rec.extension],
    script: [...script, "Still nine."],
  });
  try {
    await pi.prompt("Which services retry on 503?");
    await pi.prompt("/guard details");
    const guardBefore = pi.notifications.at(-1)?.message;
    const projected = JSON.stringify(pi.projection().messages);
    await pi.prompt("/context");
    const first = rec.last();
    const entries = pi.branch().filter((e: Loose) => e.customType === "context-report");
    assert.equal(entries.length, 1);
    assert.equal(entries[0].type, "custom");
    assert.equal(entries[0].data.text, first.text);
    assert.equal(entries[0].data.summary.estimate, first.estimate);
    assert.equal(JSON.stringify(pi.projection().messages), projected, "not in the model's context");

    await pi.prompt("/guard details");
    assert.equal(pi.notifications.at(-1)?.message, guardBefore, "/guard and its savings skip it");
    await pi.prompt("/context");
    const second = rec.last();
    assert.deepEqual([second.estimate, second.counts, second.guard, second.keptDetail], [first.estimate, first.counts, first.guard, first.keptDetail]);
    await pi.prompt("And now?");
    assert.ok(!JSON.stringify(pi.requests.at(-1)?.messages).includes("context-report"), "the next request does not carry it");
  } finally {
    await pi.dispose();
  }
});
