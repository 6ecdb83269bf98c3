// Settings and a fixed limit inside real Pi: `excludeTools`, `distillErrors`,
// `historyExchanges: 0` and `pruneExchanges: false` each change what the pass
// judges and sends; `recall` matches a pattern within the first 4,000
// characters of each line and returns the whole line.
import assert from "node:assert/strict";
import { test } from "node:test";
import { answering, choose } from "../harness/classifier.ts";
import { assertNoPassFailure, guardRecords } from "../harness/guard-checks.ts";
import { entriesOf, textOf, toolResultEntry } from "../harness/inspect.ts";
import { type Loose, piVersion } from "../harness/pi.ts";
import { type ClassifierCall, startSession } from "../harness/session.ts";

/** A log of `lines` distinct lines. */
const log = (name: string, lines: number) => `${Array.from({ length: lines }, (_, i) => `${name} ${i + 1}: routine entry, nothing new`).join("\n")}\n`;

/** Removes everything: large outputs as none-needed, small outputs below smallKeepThreshold. */
const removeAll = answering((id, q) => {
  if (id === "keep_whole") return 0.05;
  if (id === "focus") return choose(q, "none", 0.8);
  return 0.1;
});

const edited = (branch: Loose[]) =>
  entriesOf(branch, "context_edit")
    .map((e: Loose) => e.targetId as string)
    .sort();
const large = (calls: ClassifierCall[]) => calls.filter((c) => (c.request.state as Loose).chunks).map((c) => c.request.state as Loose);
const smallItems = (calls: ClassifierCall[]) => calls.flatMap((c) => Object.values(((c.request.state as Loose).outputs ?? {}) as Record<string, Loose>));

test(`Pi ${piVersion}: recall matches within each line's first 4,000 characters and returns whole lines`, async () => {
  // The window counts JavaScript characters (UTF-16 units) and never splits a
  // surrogate pair (crates/guard-read/src/recall.rs MATCH_WINDOW, text.rs js_prefix).
  const lines = [
    "short line with NEEDLE", // 1: matches
    `${"a".repeat(3_994)}NEEDLE${"b".repeat(1_000)}`, // 2: ends at character 4,000: matches, returned whole
    `${"a".repeat(3_995)}NEEDLE${"b".repeat(1_000)}`, // 3: crosses the window's end: no match
    `${"c".repeat(8_000)}NEEDLE`, // 4: past the window: no match
    `${"😀".repeat(1_997)}NEEDLE${"d".repeat(100)}`, // 5: 3,994 units of emoji + 6: matches
    `${"😀".repeat(1_998)}NEEDLE`, // 6: 3,996 + 6 units: no match
    `${"x".repeat(3_999)}😀 tail`, // 7: the emoji would be units 4,000-4,001: the window stops before it
    `${"x".repeat(3_998)}😀 tail`, // 8: the emoji is units 3,999-4,000: inside
  ];
  // Under Pi's 50 KB output cap (the emoji are 4 bytes each), so bash returns every line.
  const pi = await startSession({
    files: { "wide.log": `${lines.join("\n")}\n` },
    guardSettings: { enabled: false },
    script: [{ tool: "bash", args: { command: "cat wide.log" }, id: "c" }, "Printed."],
  });
  try {
    await pi.prompt("Print wide.log");
    const entry = toolResultEntry(pi.branch(), "c");
    const raw = textOf(entry.message);
    const printed = raw.replace(/\n$/, "").split("\n");
    assert.ok(
      printed.length === lines.length && printed.every((l, i) => l === lines[i]),
      `Pi's bash kept every line whole (${printed.length} lines, ${raw.length} chars)`,
    );
    pi.script(
      [
        { tool: "recall", args: { entryId: entry.id, pattern: "NEEDLE" }, id: "n" },
        { tool: "recall", args: { entryId: entry.id, pattern: "x😀" }, id: "e" },
        { tool: "recall", args: { entryId: entry.id, pattern: "b{1000}" }, id: "far" },
      ],
      "Recalled.",
    );
    await pi.prompt("Find the needles.");
    const branch = pi.branch();
    const reply = (id: string) => {
      const m = toolResultEntry(branch, id).message;
      assert.equal(m.isError, false, `${id}: ${textOf(m).slice(0, 200)}`);
      return textOf(m);
    };
    // Compared without printing 10 KB lines on failure: which lines, and each whole.
    const numbered = (text: string) => text.split("\n").map((l) => Number(/^(\d+): /.exec(l)?.[1]));
    assert.deepEqual(numbered(reply("n")), [1, 2, 5]);
    assert.ok(reply("n") === [1, 2, 5].map((n) => `${n}: ${lines[n - 1]}`).join("\n"), "the matching lines, whole");
    assert.deepEqual(numbered(reply("e")), [8]);
    assert.ok(reply("e") === `8: ${lines[7]}`, "line 8, whole");
    // Text only after character 4,000 is never found, though the line holds it.
    assert.equal(reply("far"), "No lines match the pattern /b{1000}/ (8 lines searched).");
    assertNoPassFailure(pi.notifications);
  } finally {
    await pi.dispose();
  }
});

for (const excluded of ["read", "bash"]) {
  const other = excluded === "read" ? "bash" : "read";
  test(`Pi ${piVersion}: excludeTools ["${excluded}"]: its outputs are never judged; ${other}'s are`, async () => {
    const pi = await startSession({
      files: { "a.log": log("alpha", 900), "b.log": log("beta", 900), "c.log": log("gamma", 30), "d.log": log("delta", 30) },
      guardSettings: { excludeTools: [excluded] },
      classifier: removeAll,
      script: [
        [
          { tool: "read", args: { path: "a.log" }, id: "read-large" },
          { tool: "bash", args: { command: "cat b.log" }, id: "bash-large" },
          { tool: "read", args: { path: "c.log" }, id: "read-small" },
          { tool: "bash", args: { command: "cat d.log" }, id: "bash-small" },
        ],
        "Nothing unusual.",
      ],
    });
    try {
      await pi.prompt("Anything unusual in the logs?");
      const branch = pi.branch();
      const id = (call: string) => toolResultEntry(branch, call).id as string;
      assert.ok(textOf(toolResultEntry(branch, "read-small").message).length >= 400, "the small outputs are in the small band");
      assert.deepEqual([...new Set(large(pi.classifierCalls).map((s) => s.tool))], [other], `only ${other}'s large output is sent`);
      assert.deepEqual(
        smallItems(pi.classifierCalls).map((o) => o.tool.split(" ")[0]),
        [other],
        `only ${other}'s small output is sent`,
      );
      const sent = JSON.stringify(pi.classifierCalls.map((c) => c.request));
      for (const name of excluded === "read" ? ["alpha", "gamma"] : ["beta", "delta"]) assert.ok(!sent.includes(`${name} 1:`), `${name} is never sent`);
      assert.deepEqual(edited(branch), [id(`${other}-large`), id(`${other}-small`)].sort());
      assert.deepEqual(
        guardRecords(branch)[0]
          .results.map((r: Loose) => [r.kind, r.tool, r.outcome])
          .sort(),
        [
          ["large", other, "removed"],
          ["small", other, "removed"],
        ].sort(),
      );
      assertNoPassFailure(pi.notifications);
    } finally {
      await pi.dispose();
    }
  });
}

for (const distillErrors of [false, true]) {
  test(`Pi ${piVersion}: distillErrors ${distillErrors}: a failed large output is ${distillErrors ? "" : "not "}judged`, async () => {
    const pi = await startSession({
      files: { "a.log": log("alpha", 900), "b.log": log("beta", 900) },
      guardSettings: { distillErrors },
      classifier: removeAll,
      script: [
        [
          { tool: "bash", args: { command: "cat a.log; exit 1" }, id: "failed" },
          { tool: "bash", args: { command: "cat b.log" }, id: "ok" },
        ],
        "The command failed, but the logs are routine.",
      ],
    });
    try {
      await pi.prompt("Anything unusual in the logs?");
      const branch = pi.branch();
      const failed = toolResultEntry(branch, "failed");
      assert.equal(failed.message.isError, true, "Pi reports the call as failed");
      assert.ok(textOf(failed.message).length >= 8_000, "a large output");
      const sent = large(pi.classifierCalls);
      const judgedFailed = sent.filter((s) => s.tool_arguments.includes("a.log"));
      assert.ok(
        sent.some((s) => s.tool_arguments.includes("b.log")),
        "the pass ran and judged the other output",
      );
      const ids = [toolResultEntry(branch, "ok").id];
      if (distillErrors) {
        assert.ok(judgedFailed.length >= 1, "the failed output is sent");
        for (const s of judgedFailed) assert.match(s.tool_status, /failed/);
        ids.push(failed.id);
      } else {
        assert.deepEqual(judgedFailed, [], "the failed output is never sent");
        assert.ok(!JSON.stringify(pi.classifierCalls.map((c) => c.request)).includes("alpha 1:"));
      }
      assert.deepEqual(edited(branch), ids.sort());
      assert.deepEqual(
        guardRecords(branch)[0]
          .results.map((r: Loose) => r.entryId)
          .sort(),
        ids.sort(),
      );
      assertNoPassFailure(pi.notifications);
    } finally {
      await pi.dispose();
    }
  });
}

for (const historyExchanges of [0, 3]) {
  test(`Pi ${piVersion}: historyExchanges ${historyExchanges}: ${historyExchanges ? "requests carry" : "no request carries"} earlier_conversation`, async () => {
    const pi = await startSession({
      files: { "a.log": log("alpha", 900), "c.log": log("gamma", 30) },
      guardSettings: { historyExchanges },
      script: [
        "It renders build badges.",
        "Through a cron job.",
        [
          { tool: "bash", args: { command: "cat a.log" } },
          { tool: "bash", args: { command: "cat c.log" } },
        ],
        "The logs are routine.",
      ],
    });
    try {
      await pi.prompt("What does this project do?");
      await pi.prompt("How is it deployed?");
      await pi.prompt("Anything unusual in the logs?");
      const calls = pi.classifierCalls;
      assert.ok(large(calls).length >= 1 && smallItems(calls).length === 1, "large and small requests were sent");
      for (const c of calls) {
        const state = c.request.state as Loose;
        const text = JSON.stringify(c.request);
        if (historyExchanges === 0) {
          assert.ok(!("earlier_conversation" in state), "no earlier_conversation");
          assert.ok(!text.includes("earlier_conversation"), "nothing refers to it either");
          assert.ok(!text.includes("What does this project do?") && !text.includes("build badges"), "no earlier text is sent");
        } else {
          assert.deepEqual(state.earlier_conversation, {
            recent_exchanges: [
              { user: "What does this project do?", assistant: "It renders build badges." },
              { user: "How is it deployed?", assistant: "Through a cron job." },
            ],
          });
          assert.match(state.situation, /earlier_conversation/);
        }
      }
      assertNoPassFailure(pi.notifications);
    } finally {
      await pi.dispose();
    }
  });
}

for (const pruneExchanges of [false, true]) {
  test(`Pi ${piVersion}: pruneExchanges ${pruneExchanges}: an unrelated old exchange ${pruneExchanges ? "is omitted" : "is never sent and stays"}`, async () => {
    const pi = await startSession({
      guardSettings: { pruneExchanges, exchangeBreakEven: false },
      classifier: answering((id, _q, request) => {
        if (/^exchange_\d+$/.test(id)) return String((request.state as Loose).exchanges[id].user).includes("unrelated") ? 0.05 : 0.9;
        return 0.95;
      }),
    });
    try {
      pi.script({ tool: "bash", args: { command: "seq 1 800" }, id: "s1" }, "Listed.");
      await pi.prompt("An unrelated task: list numbers");
      for (const p of ["Two", "Three", "Four"]) {
        pi.script(`${p} done.`);
        await pi.prompt(p);
      }
      // The first run's small output makes a request either way: the pass ran.
      assert.ok(pi.classifierCalls.length >= 1);
      const exchangeRequests = pi.classifierCalls.filter((c) => (c.request.state as Loose).exchanges);
      const branch = pi.branch();
      const prompt = branch.find((e: Loose) => e.type === "message" && e.message.role === "user");
      pi.script("Five done.");
      await pi.prompt("Five");
      const next = pi.requests.at(-1)!.messages;
      if (pruneExchanges) {
        assert.equal(exchangeRequests.length, 1);
        assert.deepEqual(
          Object.values((exchangeRequests[0].request.state as Loose).exchanges).map((x: Loose) => x.user),
          ["An unrelated task: list numbers"],
        );
        assert.ok(edited(branch).includes(prompt.id), "the old exchange is omitted");
        assert.ok(!next.some((m) => m.role === "toolResult" && m.toolCallId === "s1"));
      } else {
        assert.deepEqual(exchangeRequests, [], "no exchange item is sent");
        assert.ok(!pi.classifierCalls.some((c) => Object.keys(c.request.questions).some((q) => q.startsWith("exchange_"))));
        assert.deepEqual(edited(pi.branch()), [], "nothing is omitted");
        assert.equal(
          textOf(next.find((m) => m.role === "toolResult" && m.toolCallId === "s1")),
          textOf(toolResultEntry(branch, "s1").message),
          "the old output stays",
        );
        assert.equal(textOf(next.find((m) => m.role === "user")), "An unrelated task: list numbers");
      }
      assertNoPassFailure(pi.notifications);
    } finally {
      await pi.dispose();
    }
  });
}
