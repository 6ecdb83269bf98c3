// /context inside real Pi: the headline and headroom, the composition rows, the
// numbers (each message's count is Pi's estimateTokens), drift, history, the
// largest messages, the pending total, the threshold fallback, an unknown
// window, the disabled switch, and sanitization at the boundary.
import assert from "node:assert/strict";
import { test } from "node:test";
import { agent, ai, type Loose, piVersion } from "../harness/pi.ts";
import { startSession } from "../harness/session.ts";
import { CONTROL, PNG, recorder } from "./context-helpers.ts";

const sum = (ms: Loose[]) => ms.reduce((s, m) => s + agent.estimateTokens(m), 0);
const row = (report: Loose, id: string) => report.rows.find((r: Loose) => r.id === id);

/**
 * Each projected message's count, as the extension handed it to the core and the report event carries
 * it, is Pi's estimateTokens for that message; the rows (sums by role) and the largest list checked
 * below are the core's use of those counts.
 */
function assertCountsArePis(report: Loose, messages: Loose[]) {
  assert.equal(report.counts.length, messages.length);
  messages.forEach((m, i) => assert.equal(report.counts[i], agent.estimateTokens(m), `message ${i} (${m.role})`));
}

test(`Pi ${piVersion}: every message of a real multi-turn session is counted as Pi counts it, before and after a compaction`, async () => {
  const rec = recorder();
  const pi = await startSession({
    files: { "notes.txt": "alpha\nbeta\n".repeat(400), "dot.png": Buffer.from(PNG, "base64") as never },
    piSettings: { compaction: { keepRecentTokens: 50 } },
    extensions: [rec.extension],
    script: [
      () =>
        ai.fauxAssistantMessage([ai.fauxThinking("the notes file first"), ai.fauxToolCall("bash", { command: "cat notes.txt" }, { id: "c1" })], {
          stopReason: "toolUse",
        }),
      { tool: "read", args: { path: "dot.png" } },
      "The notes list alpha and beta; the image is one pixel.",
      "Seen.",
      "## Goal\nRead the notes and the image.\n## Progress\nDone.",
      "After the compaction.",
    ],
  });
  try {
    await pi.prompt("What is in notes.txt and dot.png?");
    await pi.prompt("/inject plan-notes 400");
    await pi.prompt("/inject review 40");
    await pi.prompt("Look at this", { images: [{ type: "image", data: PNG, mimeType: "image/png" }] });
    await pi.session.executeBash("echo from-the-shell");

    await pi.prompt("/context");
    const before = rec.last();
    const messages = pi.projection().messages as Loose[];
    const roles = new Set(messages.map((m) => m.role));
    for (const role of ["user", "assistant", "toolResult", "custom", "bashExecution"]) assert.ok(roles.has(role), `a ${role} message`);
    assert.ok(
      messages.some((m) => m.role === "assistant" && m.content.some((b: Loose) => b.type === "thinking")),
      "thinking",
    );
    assert.ok(
      messages.some((m) => m.role === "toolResult" && m.content.some((b: Loose) => b.type === "image")),
      "an image result",
    );
    assertCountsArePis(before, messages);

    // The headline is Pi's own, with the headroom before the default threshold.
    const usage = pi.session.getContextUsage();
    const reserve = agent.DEFAULT_COMPACTION_SETTINGS.reserveTokens;
    assert.equal(before.headline.tokens, usage.tokens);
    assert.equal(before.headline.window, 200_000);
    assert.equal(before.headline.free, 200_000 - usage.tokens);
    assert.equal(before.threshold.at, 200_000 - reserve);
    assert.equal(before.threshold.headroom, 200_000 - reserve - usage.tokens);
    const text = pi.notifications.at(-1)?.message ?? "";
    assert.match(text, /, [\d.]+k headroom/);

    // The conversation rows are sums of Pi's counts by role; injected context is grouped by type.
    const by = (role: string) => messages.filter((m) => m.role === role);
    assert.equal(row(before, "user").tokens, sum(by("user")));
    assert.equal(row(before, "assistant").tokens, sum(by("assistant")));
    assert.equal(row(before, "toolResults").tokens, sum(by("toolResult")));
    assert.equal(row(before, "shell").tokens, sum(by("bashExecution")));
    assert.equal(row(before, "custom").tokens, sum(by("custom")));
    assert.deepEqual(
      before.rows.filter((r: Loose) => r.depth === 1 && r.id.startsWith("custom")).map((r: Loose) => r.label),
      ["plan-notes", "review"],
    );
    const tools = pi.session.getActiveToolNames().length;
    for (const label of [
      "System prompt",
      `Tool definitions (${tools})`,
      "User (2)",
      "Assistant (4)",
      "Tool results (2)",
      "Injected context (2)",
      "Shell output (1)",
    ]) {
      assert.ok(text.includes(`\n  ${label} `), `${label} in:\n${text}`);
    }
    // The five largest, biggest first, each with Pi's count and its descriptor.
    const top = messages
      .map((m, i) => ({ m, i, t: agent.estimateTokens(m) }))
      .filter((x) => x.m.role !== "system")
      .sort((a, b) => b.t - a.t || a.i - b.i)
      .slice(0, 5);
    assert.deepEqual(
      before.largest.map((l: Loose) => [l.index, l.tokens]),
      top.map((x) => [x.i, x.t]),
    );
    assert.match(text, /\n {2}toolResult +[\d.]+k? +[\d.]+% +█+░* {2}bash\n/);
    assert.match(text, /\n {2}user .* Look at this/);

    // A real compaction: the faux model writes the summary.
    await pi.prompt("/context compact");
    assert.match(pi.notifications.at(-1)?.message ?? "", /^Compacted: [\d.]+k? -> ~[\d.]+k? tokens/);
    await pi.prompt("/context");
    const after = rec.last();
    const now = pi.projection().messages as Loose[];
    assert.ok(
      now.some((m) => m.role === "compactionSummary"),
      "a summary",
    );
    assertCountsArePis(after, now);
    assert.equal(row(after, "summaries").tokens, sum(now.filter((m) => m.role === "compactionSummary")));

    // The pending total right after the compaction, and the history.
    assert.equal(after.headline.tokens, undefined);
    assert.equal(after.headline.pending, true);
    assert.equal(after.threshold.headroom, undefined);
    const entry = pi.branch().findLast((e: Loose) => e.type === "compaction");
    assert.deepEqual(after.history.count, 1);
    assert.equal(after.history.latest.tokensBefore, entry.tokensBefore);
    assert.equal(after.history.latest.summaryTokens, Math.ceil(entry.summary.length / 4));
    const afterText = pi.notifications.at(-1)?.message ?? "";
    assert.match(afterText, /^Context: Total pending \/ 200\.0k tokens: Pi recalculates it after the next reply/);
    assert.match(afterText, /headroom pending/);
    assert.match(afterText, /Compactions: 1 on this branch; the newest cut [\d.]+k? to ~[\d.]+k?, its summary costs \d+/);
    assert.match(afterText, /\n {2}Summaries \(1\) /);

    // The next reply gives Pi a total again.
    await pi.prompt("And now?");
    await pi.prompt("/context");
    assert.equal(rec.last().headline.tokens, pi.session.getContextUsage().tokens);
    assert.equal(rec.last().headline.pending, false);
  } finally {
    await pi.dispose();
  }
});

test(`Pi ${piVersion}: drift in both directions, and "host counts messages only" before the first reply`, async () => {
  const rec = recorder();
  const pi = await startSession({ extensions: [rec.extension], script: ["Hello.", "Three pixels."] });
  try {
    await pi.prompt("/context");
    let d = rec.last().drift;
    assert.equal(d.note, "hostCountsMessagesOnly");
    assert.ok(d.difference < 0);
    assert.match(pi.notifications.at(-1)?.message ?? "", /Drift: Pi 0 vs the rows' sum [\d.]+k?, -[\d.]+k?: host counts messages only/);

    await pi.prompt("Hi");
    await pi.prompt("/context");
    d = rec.last().drift;
    assert.equal(d.host, pi.session.getContextUsage().tokens);
    assert.equal(d.difference, d.host - rec.last().estimate);
    assert.equal(d.note, "unattributed", JSON.stringify(d));
    assert.match(pi.notifications.at(-1)?.message ?? "", /Drift: Pi [\d.]+k? vs the rows' sum [\d.]+k?, \+[\d.]+k? unattributed/);

    // Images: Pi's estimate guesses 1,200 tokens each, more than the provider reported.
    const image = { type: "image", data: PNG, mimeType: "image/png" };
    await pi.prompt("Look", { images: [image, image, image] });
    await pi.prompt("/context");
    d = rec.last().drift;
    assert.ok(d.difference < 0, JSON.stringify(d));
    assert.equal(d.note, "estimateAbove");
    assert.match(pi.notifications.at(-1)?.message ?? "", /Drift: .*, -[\d.]+k?: the estimate is above Pi's total/);
  } finally {
    await pi.dispose();
  }
});

test(`Pi ${piVersion}: injected context names the five largest types and folds the rest`, async () => {
  const rec = recorder();
  const pi = await startSession({ extensions: [rec.extension] });
  try {
    const sizes: [string, number][] = [
      ["a", 100],
      ["b", 200],
      ["c", 300],
      ["d", 400],
      ["e", 500],
      ["f", 600],
      ["g", 700],
    ];
    for (const [type, size] of sizes) await pi.prompt(`/inject ${type} ${size}`);
    await pi.prompt("/context");
    const report = rec.last();
    assert.deepEqual(
      report.rows.filter((r: Loose) => r.depth === 1 && r.id.startsWith("custom")).map((r: Loose) => r.label),
      ["g", "f", "e", "d", "c", "2 more types"],
    );
    const customs = pi.projection().messages.filter((m: Loose) => m.role === "custom");
    assert.equal(row(report, "customOther").tokens, sum(customs.filter((m: Loose) => ["a", "b"].includes(m.customType))));
    assert.match(pi.notifications.at(-1)?.message ?? "", /\n {2}Injected context \(7\) [\s\S]*\n {4}g \(1\) [\s\S]*\n {4}2 more types \(2\) /);
  } finally {
    await pi.dispose();
  }
});

for (const [name, settings, reserve, source] of [
  [
    "a model override",
    { compaction: { reserveTokens: 30_000, modelOverrides: { "faux/faux-1": { reserveTokens: 50_000 } } } },
    50_000,
    /reserve 50\.0k from modelOverrides\["faux\/faux-1"\]/,
  ],
  [
    "the compaction setting",
    { compaction: { reserveTokens: 30_000, modelOverrides: { "other/model": { reserveTokens: 1 } } } },
    30_000,
    /reserve 30\.0k from compaction\.reserveTokens/,
  ],
  ["Pi's default", {}, undefined, /reserve 16\.4k from Pi's default/],
] as [string, Record<string, unknown>, number | undefined, RegExp][]) {
  test(`Pi ${piVersion}: the threshold comes from ${name}`, async () => {
    const rec = recorder();
    const pi = await startSession({ extensions: [rec.extension], piSettings: settings, script: ["ok"] });
    try {
      await pi.prompt("Hi");
      await pi.prompt("/context");
      const expected = reserve ?? agent.DEFAULT_COMPACTION_SETTINGS.reserveTokens;
      const t = rec.last().threshold;
      assert.equal(t.reserve, expected);
      assert.equal(t.at, 200_000 - expected);
      assert.equal(t.headroom, 200_000 - expected - pi.session.getContextUsage().tokens);
      assert.match(pi.notifications.at(-1)?.message ?? "", source);
    } finally {
      await pi.dispose();
    }
  });
}

test(`Pi ${piVersion}: compaction off means no threshold and no headroom`, async () => {
  const rec = recorder();
  const pi = await startSession({ extensions: [rec.extension], piSettings: { compaction: { enabled: false } } });
  try {
    await pi.prompt("/context");
    assert.equal(rec.last().threshold.state, "off");
    assert.equal(rec.last().threshold.headroom, undefined);
    assert.match(pi.notifications.at(-1)?.message ?? "", /Auto-compaction is off \(compaction\.enabled is false\): no threshold/);
  } finally {
    await pi.dispose();
  }
});

test(`Pi ${piVersion}: a model without a known window gets no threshold`, async () => {
  const rec = recorder();
  const pi = await startSession({ extensions: [rec.extension], contextWindow: 0, script: ["ok"] });
  try {
    await pi.prompt("Hi");
    await pi.prompt("/context");
    const report = rec.last();
    assert.equal(report.headline.window, undefined);
    assert.equal(report.threshold.state, "unknownWindow");
    const text = pi.notifications.at(-1)?.message ?? "";
    assert.match(text, /^Context: Window unknown: the model has no known context window/);
    assert.match(text, /No threshold without a known window: compaction is left to Pi/);
    assert.match(text, /\n {2}User \(1\) /);
  } finally {
    await pi.dispose();
  }
});

for (const switches of ["context", "other, context-guard", "x context y"]) {
  test(`Pi ${piVersion}: PI_DISABLED_EXTENSIONS="${switches}" turns /context off`, async () => {
    process.env.PI_DISABLED_EXTENSIONS = switches;
    const pi = await startSession({ script: ["(the model saw it)"] }).finally(() => {
      delete process.env.PI_DISABLED_EXTENSIONS;
    });
    try {
      await pi.prompt("/context");
      assert.equal(pi.notifications.length, 0);
      // Not a command any more: the text went to the model as a prompt.
      const last = pi.requests.at(-1)?.messages.at(-1);
      assert.match(JSON.stringify(last?.content), /\/context/);
    } finally {
      await pi.dispose();
    }
  });
}

test(`Pi ${piVersion}: tool names, custom types and message text cannot reach the terminal raw`, async () => {
  const rec = recorder();
  const hostile = "\u001b[2J\u001b[31mEVIL\u0007\r\tname\u009b1m\u202e";
  const pi = await startSession({
    extensions: [
      rec.extension,
      (p: Loose) => {
        p.registerTool({
          name: "evil_tool",
          label: "evil",
          description: "returns hostile text",
          parameters: { type: "object", properties: {} },
          execute: async () => ({ content: [{ type: "text", text: `${hostile} ${"y".repeat(4000)}` }], details: {} }),
        });
        // A hostile tool name, if this Pi accepts one: its result is described by that name.
        try {
          p.registerTool({
            name: `bad${hostile}`,
            label: "bad",
            description: "a tool whose name holds controls",
            parameters: { type: "object", properties: {} },
            execute: async () => ({ content: [{ type: "text", text: "b".repeat(6000) }], details: {} }),
          });
        } catch {
          // Refused at registration: then it cannot reach the report either.
        }
        p.registerCommand("hostile", {
          handler: async () => p.sendMessage({ customType: `${hostile}type`, content: `${hostile} ${"z".repeat(3000)}`, display: true }),
        });
      },
    ],
    script: [
      [
        { tool: "evil_tool", args: {} },
        { tool: `bad${hostile}`, args: {} },
      ],
      `${hostile} answer\nsecond line`,
    ],
  });
  try {
    await pi.prompt(`${hostile} user text ${"u".repeat(2000)}`);
    await pi.prompt("/hostile");
    await pi.prompt("/context");
    const report = rec.last();
    const text = pi.notifications.at(-1)?.message ?? "";
    assert.doesNotMatch(text.replaceAll("\n", ""), CONTROL);
    assert.ok(!text.includes("\u001b") && !text.includes("\u0007") && !text.includes("\r") && !text.includes("\u202e"));
    for (const l of report.largest) {
      assert.doesNotMatch(l.descriptor, CONTROL);
      assert.ok([...l.descriptor].length <= 40);
    }
    for (const r of report.rows) assert.doesNotMatch(r.label, CONTROL);
    const descriptors = report.largest.map((l: Loose) => `${l.role}:${l.descriptor}`);
    assert.ok(
      descriptors.some((d: string) => d.startsWith("custom:[2J [31mEVIL")),
      descriptors.join("\n"),
    );
    assert.ok(
      descriptors.some((d: string) => d.startsWith("user:[2J [31mEVIL")),
      descriptors.join("\n"),
    );
    assert.ok(report.rows.some((r: Loose) => r.depth === 1 && r.label.startsWith("[2J [31mEVIL")));
    assert.ok(descriptors.includes("toolResult:bad [2J [31mEVIL name 1m"), descriptors.join("\n"));
    assert.match(text, /\n {2}toolResult .* bad \[2J \[31mEVIL name 1m\n/);
  } finally {
    await pi.dispose();
  }
});
