// Whole items inside real Pi (docs/GUARD.md "Whole items"): small outputs
// judged in batched requests under the one limiter, old images removed with no
// request (also without a classifier), old exchanges omitted whole with a valid
// next request and a recall transcript, and `/guard`'s last pass per kind.
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { answering, choose } from "../harness/classifier.ts";
import { assertNoPassFailure } from "../harness/guard-checks.ts";
import { entriesOf, textOf, toolResultEntry } from "../harness/inspect.ts";
import { type Loose, piVersion } from "../harness/pi.ts";
import { png } from "../harness/png.ts";
import { startSession } from "../harness/session.ts";

const lastRecord = (branch: Loose[]) => entriesOf(branch, "custom", "context-guard").at(-1)?.data;
const editOf = (branch: Loose[], id: string) => entriesOf(branch, "context_edit").findLast((e: Loose) => e.targetId === id);

/** Every tool call in a provider request has its result and every result its call. */
function assertPaired(messages: Loose[]) {
  const calls = messages.flatMap((m) =>
    (m.role === "assistant" && Array.isArray(m.content) ? m.content : []).filter((b: Loose) => b.type === "toolCall").map((b: Loose) => b.id),
  );
  const results = messages.filter((m) => m.role === "toolResult").map((m) => m.toolCallId);
  assert.deepEqual([...results].sort(), [...calls].sort(), "tool calls and results pair up");
}

test(`Pi ${piVersion}: small outputs are judged whole in batches with the large ones under one limiter`, async () => {
  const files = {
    "keep.txt": `KEEP ${"needed line 日本 😀\n".repeat(30)}`,
    "drop1.txt": "stale line\n".repeat(60),
    "drop2.txt": "old line\n".repeat(70),
    "big.txt": Array.from({ length: 900 }, (_, i) => `row ${i} ${i === 450 ? "=== TARGET" : "filler text"}`).join("\n"),
  };
  const pi = await startSession({
    files,
    guardSettings: { concurrency: 1, maxSegmentChars: 1500 },
    classifier: answering((id, q, request) => {
      const state = request.state as Loose;
      if (id === "keep_whole") return 0.05;
      if (id === "focus") return choose(q, "none", 0.8);
      if (id.startsWith("chunk_")) return String(state.chunks[id]).includes("=== TARGET") ? 0.9 : 0.1;
      if (id.startsWith("output_")) return String(state.outputs[id].output).includes("KEEP") ? 0.9 : 0.1;
      return 0.9;
    }),
    script: [
      [
        { tool: "bash", args: { command: "cat drop1.txt" }, id: "d1" },
        { tool: "bash", args: { command: "cat keep.txt" }, id: "k" },
        { tool: "bash", args: { command: "cat drop2.txt; exit 3" }, id: "d2" },
        { tool: "bash", args: { command: "cat big.txt" }, id: "big" },
      ],
      { tool: "bash", args: { command: "cat  drop1.txt 2>&1" }, id: "d1b" },
      "TARGET is at row 450.",
      "Still row 450.",
    ],
  });
  try {
    await pi.prompt("Where is the target?");
    const branch = pi.branch();
    const small = pi.classifierCalls.filter((c) => (c.request.state as Loose).outputs);
    const large = pi.classifierCalls.filter((c) => (c.request.state as Loose).chunks);
    assert.ok(large.length >= 1 && small.length >= 2, `${large.length} large, ${small.length} small requests`);
    assert.equal(pi.maxClassifierInFlight(), 1, "one limiter for every kind");
    const items = small.flatMap((c) => Object.entries((c.request.state as Loose).outputs)) as [string, Loose][];
    assert.ok(
      small.some((c) => Object.keys((c.request.state as Loose).outputs).length >= 2),
      "many items per request",
    );
    for (const c of small) {
      const text = Object.values((c.request.state as Loose).outputs).map((o: Loose) => o.tool.length + o.output.length);
      assert.ok(text.length === 1 || text.reduce((a, b) => a + b, 0) <= 1500, "≤ maxSegmentChars of item text");
    }
    const byTool = Object.fromEntries(items.map(([, o]) => [o.tool, o]));
    assert.equal(byTool["bash `cat drop2.txt; exit 3`"].status, "failed");
    assert.match(byTool["bash `cat drop1.txt`"].superseded, /run again/);
    assert.equal(byTool["bash `cat keep.txt`"].superseded, undefined);

    const d1 = toolResultEntry(branch, "d1");
    const raw = textOf(d1.message);
    const stub = editOf(branch, d1.id).replacement.content[0].text;
    assert.equal(
      stub,
      `[context-guard] Omitted the output of bash \`cat drop1.txt\` (${raw.length} chars): judged no longer needed. Full output: recall({"entryId":"${d1.id}"}).`,
    );
    assert.ok(editOf(branch, toolResultEntry(branch, "d2").id), "the failed call's output is dropped too");
    assert.equal(editOf(branch, toolResultEntry(branch, "k").id), undefined, "a needed output stays");
    const rec = lastRecord(branch);
    const kinds = rec.results.map((r: Loose) => `${r.kind}:${r.outcome}`);
    assert.ok(kinds.includes("large:distilled") && kinds.includes("small:removed") && kinds.includes("small:kept"), kinds.join(" "));
    assert.match(rec.results.find((r: Loose) => r.kind === "small" && r.outcome === "removed").jev, /^p\.10$/);

    // The next request Pi sends carries the stub.
    await pi.prompt("And now?");
    const next = pi.requests.at(-1)!.messages;
    assert.ok(next.some((m) => m.role === "toolResult" && textOf(m) === stub));
    assertPaired(next);
    assertNoPassFailure(pi.notifications);
  } finally {
    await pi.dispose();
  }
});

test(`Pi ${piVersion}: old tool-result images go with no request, also without a classifier; recall shows them`, async () => {
  const pi = await startSession({
    // The image is read in the first run and removed at the third run's end, from before its prompt: with
    // `exchangeBreakEven` on it would wait for the break-even (4 requests cannot pay for rewriting it; the core's
    // finish.rs tests weigh that gate). Off, age alone decides, which is what this test is about.
    guardSettings: { model: "fakejev/missing-model", exchangeBreakEven: false },
    script: [{ tool: "read", args: { path: "shot.png" }, id: "img" }, "A grey screenshot.", "Second.", "Third."],
  });
  try {
    writeFileSync(join(pi.cwd, "shot.png"), png(1280, 960));
    await pi.prompt("Look at shot.png");
    const id = toolResultEntry(pi.branch(), "img").id;
    assert.equal(editOf(pi.branch(), id), undefined, "young images stay");
    await pi.prompt("Two");
    await pi.prompt("Three");
    const branch = pi.branch();
    const edit = editOf(branch, id);
    assert.ok(edit, "removed once 3 assistant messages followed");
    assert.deepEqual(edit.replacement.content, [
      {
        type: "text",
        text: `[context-guard] Removed 1 image from this output (1280×960; ~1.6k tokens), 3 turns old. recall({"entryId":"${id}"}) shows it again.`,
      },
      { type: "text", text: textOf(toolResultEntry(branch, "img").message) },
    ]);
    assert.equal(pi.classifierCalls.length, 0, "no classifier request");
    const rec = lastRecord(branch);
    assert.equal(rec.requests, 0);
    assert.deepEqual(
      rec.results.map((r: Loose) => [r.kind, r.outcome, r.reason]),
      [["image", "removed", "3 turns old"]],
    );
    assert.equal(rec.results[0].beforeChars - rec.results[0].afterChars, rec.savedChars);
    assert.ok(rec.savedChars > 1639 * 4 - 200, `${rec.savedChars} chars saved (by pixels)`);

    // The next request carries no image; recall brings it back as an image block.
    pi.script({ tool: "recall", args: { entryId: id }, id: "rc2" }, "Recalled.");
    await pi.prompt("Show me the screenshot again");
    const req = pi.requests.at(-2)!.messages;
    const images = req.flatMap((m) => (Array.isArray(m.content) ? m.content : [])).filter((b: Loose) => b.type === "image");
    assert.equal(images.length, 0, "no image in the request after removal");
    const recalled = toolResultEntry(pi.branch(), "rc2").message;
    assert.ok(
      recalled.content.some((b: Loose) => b.type === "image"),
      "recall returns the image block",
    );
    assertNoPassFailure(pi.notifications);
  } finally {
    await pi.dispose();
  }
});

test(`Pi ${piVersion}: an old image from before the prompt waits for its break-even, and /guard says why`, async () => {
  // Default settings: the image is read in the first run; from the third run on it is old enough, but
  // removing it rewrites the cache from its entry on, which a short session cannot pay back (the old
  // exchanges' rule with no minimum saving, docs/GUARD.md "Whole items"). It goes at the first run end
  // where saved × requests ≥ 16 × rewrite; until then nothing is appended and /guard shows the
  // deferral with its numbers.
  const pi = await startSession({
    guardSettings: { model: "fakejev/missing-model" },
    script: [{ tool: "read", args: { path: "shot.png" }, id: "img" }, "A grey screenshot."],
  });
  try {
    writeFileSync(join(pi.cwd, "shot.png"), png(1280, 960));
    await pi.prompt("Look at shot.png");
    const id = toolResultEntry(pi.branch(), "img").id;
    let removedAt: number | undefined;
    let lastGuard = "";
    for (let n = 2; n <= 40 && removedAt === undefined; n++) {
      pi.script(`Answer ${n}.`);
      await pi.prompt(`Question ${n}`);
      if (editOf(pi.branch(), id)) {
        removedAt = n;
        break;
      }
      if (n >= 3) {
        await pi.prompt("/guard details");
        lastGuard = pi.notifications.at(-1)?.message ?? "";
        // No catalog price (faux): the rule in tokens, over as many later requests as the session has had so far.
        const line = /break-even: images (\S+) saved × (\d+) later requests < 16 × (\S+) rewrite \(prefix, from the first edit\) → deferred/.exec(lastGuard);
        assert.ok(line, `run ${n}: the deferral with its numbers in /guard:\n${lastGuard}`);
        assert.equal(Number(line[2]), pi.branch().filter((e: Loose) => e.type === "message" && e.message.role === "assistant").length, "requests so far");
      }
    }
    assert.ok(removedAt !== undefined && removedAt > 3, `deferred past the third run, removed at run ${removedAt}`);
    const rec = lastRecord(pi.branch());
    assert.deepEqual(
      rec.results.map((r: Loose) => [r.kind, r.outcome]),
      [["image", "removed"]],
    );
    const b = rec.breakEven.find((x: Loose) => x.rule === "images");
    assert.ok(b.paidOff && b.savedChars * b.requests >= b.factor * b.rewriteChars, JSON.stringify(b));
    assert.ok(b.savedChars * (b.requests - 1) < b.factor * b.rewriteChars || removedAt === 4, "it went at the first run end that pays off");
    assert.equal(pi.classifierCalls.length, 0);
    assertNoPassFailure(pi.notifications);
  } finally {
    await pi.dispose();
  }
});

test(`Pi ${piVersion}: an unrelated old exchange is omitted whole; the next request is valid; recall gives its transcript`, async () => {
  const pi = await startSession({
    guardSettings: { exchangeBreakEven: false },
    classifier: answering((id, _q, request) => {
      const m = /^exchange_\d+$/.exec(id);
      if (m) return String((request.state as Loose).exchanges[id].user).includes("unrelated") ? 0.05 : 0.9;
      return 0.95;
    }),
  });
  try {
    pi.script({ say: "Listing.", calls: [{ tool: "bash", args: { command: "seq 1 800" }, id: "s1" }] }, "Done listing 日本 😀.");
    await pi.prompt("An unrelated task: list numbers");
    pi.script({ tool: "bash", args: { command: "seq 1000 1600" }, id: "s2" }, "Second done.");
    await pi.prompt("Count the lines of the parser");
    pi.script("Third.");
    await pi.prompt("Another question");
    pi.script("Fourth.");
    await pi.prompt("Yet another");
    // Exchanges before "Yet another": three; the last two are recent, so only the first is judged.
    const branch = pi.branch();
    const ex = pi.classifierCalls.find((c) => (c.request.state as Loose).exchanges);
    assert.ok(ex, "an exchange request");
    const sent = Object.values((ex!.request.state as Loose).exchanges) as Loose[];
    assert.deepEqual(
      sent.map((x) => x.user),
      ["An unrelated task: list numbers"],
    );
    assert.deepEqual(sent[0].tool_calls, ["bash `seq 1 800`"]);

    const users = branch.filter((e: Loose) => e.type === "message" && e.message.role === "user");
    const prompt = users[0];
    const stub = editOf(branch, prompt.id).replacement.content[0].text as string;
    assert.match(
      stub,
      /^\[context-guard\] Omitted an earlier exchange judged unrelated to the current work: "An unrelated task: list numbers" \(4 messages, ~\d+(\.\d)?k? tokens\)\. Full exchange: recall\(\{"entryId":"[^"]+"\}\)\.$/,
    );
    const start = branch.indexOf(prompt);
    const end = branch.indexOf(users[1]);
    const inside = branch.slice(start + 1, end).filter((e: Loose) => e.type === "message");
    assert.equal(inside.length, 3);
    for (const e of inside) assert.equal(editOf(branch, e.id)?.replacement, null, `${e.message.role} omitted`);
    assert.equal(editOf(branch, users[1].id), undefined, "the related exchange stays");
    const rec = lastRecord(branch);
    const result = rec.results.find((r: Loose) => r.kind === "exchange" && r.outcome === "removed");
    pi.script("Fifth.");
    await pi.prompt("Current work");
    assert.deepEqual(
      lastRecord(pi.branch())
        .results.filter((r: Loose) => r.kind === "exchange")
        .map((r: Loose) => [r.label, r.outcome, r.reason]),
      [["Count the lines of the parser", "kept", "related"]],
      "the next exchange is judged at the next run end and kept",
    );
    assert.deepEqual(result.omitted, [prompt.id, ...inside.map((e: Loose) => e.id)]);

    // The next request: stub in place, no call without its result.
    pi.script({ tool: "recall", args: { entryId: prompt.id }, id: "rc" }, "Recalled.");
    await pi.prompt("What did the first task print?");
    const next = pi.requests.at(-2)!.messages;
    assertPaired(next);
    assert.ok(next.some((m) => m.role === "user" && textOf(m) === stub));
    assert.ok(!next.some((m) => m.role === "toolResult" && m.toolCallId === "s1"));
    const transcript = textOf(toolResultEntry(pi.branch(), "rc").message);
    const seq = Array.from({ length: 800 }, (_, i) => i + 1).join("\n");
    assert.equal(
      transcript,
      `## user\nAn unrelated task: list numbers\n\n## assistant\nListing.\n[tool call] bash {"command":"seq 1 800"}\n\n## tool result (bash)\n${seq}\n\n\n## assistant\nDone listing 日本 😀.`,
    );

    // /guard shows the last pass per kind.
    await pi.prompt("/guard details");
    const report = pi.notifications.at(-1)!.message;
    assert.match(report, /last old exchanges \(run end/);
    assert.match(report, /kept Count the lines of the parser: .* \(related = related to the work now\) p\.90/);
    assertNoPassFailure(pi.notifications);
  } finally {
    await pi.dispose();
  }
});

test(`Pi ${piVersion}: the run-end break-even defers a small omission`, async () => {
  const pi = await startSession({
    classifier: answering((id) => (id.startsWith("exchange_") ? 0.05 : 0.95)),
  });
  try {
    pi.script({ tool: "bash", args: { command: "seq 1 800" } }, "Listed.");
    await pi.prompt("List numbers");
    for (const p of ["Two", "Three", "Four"]) {
      pi.script(`${p} done.`);
      await pi.prompt(p);
    }
    const rec = lastRecord(pi.branch());
    assert.deepEqual(
      rec.results.filter((r: Loose) => r.kind === "exchange").map((r: Loose) => [r.outcome, r.reason, r.jev]),
      [["kept", "deferred", "p.05"]],
    );
    assert.equal(entriesOf(pi.branch(), "context_edit").length, 0);
    assertNoPassFailure(pi.notifications);
  } finally {
    await pi.dispose();
  }
});
