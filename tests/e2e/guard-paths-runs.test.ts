// Runs that end in other ways, inside real Pi: a run the user aborts and a run
// that ends in a model error are never judged; a user abort while the
// classifier is judging changes nothing; deferred old exchanges are omitted at
// a later run end once their savings pay for the cache rewrite.
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { answering, type Behaviour, hanging, keepMatching } from "../harness/classifier.ts";
import { assertKeptFor, assertNoPassFailure, guardRecords } from "../harness/guard-checks.ts";
import { entriesOf, textOf, toolResultEntry } from "../harness/inspect.ts";
import { ai, type Loose, piVersion } from "../harness/pi.ts";
import { startSession } from "../harness/session.ts";

/** A log of `lines` lines; the lines in `marked` carry `=== KEEP`. */
const log = (name: string, lines: number, marked: number[] = []) =>
  `${Array.from({ length: lines }, (_, i) => `${name} ${i + 1}: ${marked.includes(i + 1) ? "=== KEEP this line" : "routine entry, nothing new"}`).join("\n")}\n`;

const files = {
  "first.log": log("first", 900),
  "second.log": log("second", 900),
  "new.log": log("new", 900, [150, 720]),
};

/** Every tool call in a provider request has its result and every result its call. */
function assertPaired(messages: Loose[]) {
  const calls = messages.flatMap((m) =>
    (m.role === "assistant" && Array.isArray(m.content) ? m.content : []).filter((b: Loose) => b.type === "toolCall").map((b: Loose) => b.id),
  );
  const results = messages.filter((m) => m.role === "toolResult").map((m) => m.toolCallId);
  assert.deepEqual([...results].sort(), [...calls].sort(), "tool calls and results pair up");
}

test(`Pi ${piVersion}: aborted runs and a model error are not judged; the next completed run is`, async () => {
  // The outcome every agent_before_settle handler saw, and whether each settle was an abort.
  const settles: string[] = [];
  let abortAtTurnEnd = false;
  const user = (pi: Loose) => {
    pi.on("agent_before_settle", (event: Loose) => void settles.push(`before_settle:${event.outcome}`));
    pi.on("agent_settled", (event: Loose) => void settles.push(`settled:${event.aborted ? "aborted" : "done"}`));
    // Escape pressed right after a turn: Pi's own abort, as the TUI's Escape calls it.
    pi.on("turn_end", (_event: Loose, ctx: Loose) => {
      if (!abortAtTurnEnd) return;
      abortAtTurnEnd = false;
      ctx.abort();
    });
  };
  const pi = await startSession({ files, extensions: [user], classifier: keepMatching("=== KEEP") });
  const edits = () => entriesOf(pi.branch(), "context_edit");
  try {
    // 1. The user aborts while a tool runs: two large outputs are already in the run.
    pi.script(
      [
        { tool: "bash", args: { command: "cat first.log" }, id: "a1" },
        { tool: "bash", args: { command: "cat second.log" }, id: "a2" },
      ],
      () => {
        // Abort once the command has started, as a person would while it hangs.
        const poll = setInterval(() => {
          if (!existsSync(join(pi.cwd, "started"))) return;
          clearInterval(poll);
          void pi.session.abort();
        }, 20);
        return { tool: "bash", args: { command: "touch started; sleep 30" }, id: "a3" };
      },
    );
    const started = Date.now();
    await pi.prompt("Read both logs, then wait for the job.");
    assert.ok(Date.now() - started < 20_000, `the abort ended the 30 s command (${Date.now() - started} ms)`);
    assert.equal(toolResultEntry(pi.branch(), "a3").message.isError, true, "the running command was cut");
    assert.ok(textOf(toolResultEntry(pi.branch(), "a1").message).length >= 30_000, "a large output was in the run");
    assert.equal(pi.pendingSteps(), 0);

    // 2. The user aborts between turns, after the model got both outputs.
    abortAtTurnEnd = true;
    const asked = pi.requests.length;
    pi.script([
      { tool: "bash", args: { command: "cat first.log" }, id: "b1" },
      { tool: "bash", args: { command: "cat second.log" }, id: "b2" },
    ]);
    await pi.prompt("Read them again.");
    assert.equal(pi.requests.length, asked + 1, "no turn after the abort");
    assert.ok(toolResultEntry(pi.branch(), "b2"), "the turn's outputs are in the session");

    // 3. The model errs at the end of a run with two large outputs (a non-retryable error).
    pi.script(
      [
        { tool: "bash", args: { command: "cat first.log" }, id: "c1" },
        { tool: "bash", args: { command: "cat second.log" }, id: "c2" },
      ],
      () => ai.fauxAssistantMessage("", { stopReason: "error", errorMessage: "invalid request: the model rejected it" }),
    );
    await pi.prompt("Compare the two logs.");
    const last = pi.branch().findLast((e: Loose) => e.type === "message" && e.message.role === "assistant");
    assert.equal(last.message.stopReason, "error");

    // Pi skips agent_before_settle for an aborted run; the failed run reaches the guard, which declines it.
    assert.deepEqual(settles, ["settled:aborted", "settled:aborted", "before_settle:error", "settled:done"]);
    assert.equal(pi.classifierCalls.length, 0, "no classifier request for an aborted or failed run");
    assert.deepEqual(edits(), [], "no context_edit");
    assert.deepEqual(guardRecords(pi.branch()), [], "no record");
    assert.equal(pi.status("context-guard"), "🛡 0 saved");

    // 4. The next run completes: its own output is judged and distilled, nothing of the earlier runs.
    pi.script({ tool: "bash", args: { command: "cat new.log" }, id: "d1" }, "The KEEP lines are 150 and 720.");
    await pi.prompt("Where are the KEEP lines in new.log?");
    const branch = pi.branch();
    const large = pi.classifierCalls.filter((c) => (c.request.state as Loose).chunks);
    assert.ok(large.length >= 1, "the completed run's output was judged");
    for (const c of large) {
      const state = c.request.state as Loose;
      assert.equal(state.user_question, "Where are the KEEP lines in new.log?", "the question is the new prompt only");
      assert.equal(state.tool_arguments, JSON.stringify({ command: "cat new.log" }));
    }
    const target = toolResultEntry(branch, "d1").id;
    assert.deepEqual(
      edits().map((e: Loose) => e.targetId),
      [target],
      "one edit, on the new output",
    );
    // One run-end pass; a mid-run checkpoint may judge the old exchanges first (age gate 1), never an output.
    const all = guardRecords(branch);
    const records = all.filter((r: Loose) => r.phase === "run-end");
    assert.equal(records.length, 1, JSON.stringify(all.map((r: Loose) => [r.phase, r.results.map((x: Loose) => [x.kind, x.outcome])])));
    for (const r of all.filter((r: Loose) => r.phase === "mid-run")) {
      for (const x of r.results) assert.equal(x.kind, "exchange", `a checkpoint of this run judged only old exchanges: ${JSON.stringify(x)}`);
    }
    assert.deepEqual(
      records[0].results.filter((r: Loose) => r.kind === "large").map((r: Loose) => [r.entryId, r.outcome]),
      [[target, "distilled"]],
    );
    // The old exchanges the pass may judge are kept (the stand-in finds them related).
    for (const r of records[0].results.filter((r: Loose) => r.kind !== "large")) assert.equal(r.outcome, "kept", JSON.stringify(r));

    pi.script("Done.");
    await pi.prompt("Thanks.");
    const next = pi.requests.at(-1)!.messages;
    assertPaired(next);
    const visible = next.find((m) => m.role === "toolResult" && m.toolCallId === "d1");
    assert.match(textOf(visible), /^\[context-guard\] Distilled the output of bash `cat new\.log`/);
    assert.ok(textOf(visible).includes("new 150: === KEEP this line") && textOf(visible).includes("new 720: === KEEP this line"));
    assertNoPassFailure(pi.notifications);
  } finally {
    await pi.dispose();
  }
});

test(`Pi ${piVersion}: a user abort while the classifier hangs changes nothing and the session goes on`, async () => {
  const timeoutMs = 1_000;
  // Settling may take the budget plus this: the pass's own work and Pi's appends (as guard-failures).
  const marginMs = 400;
  const seen: { signalAtSettle: unknown; settledAborted: boolean | undefined } = { signalAtSettle: "not called", settledAborted: undefined };
  const spy = (pi: Loose) => {
    pi.on("agent_before_settle", (_event: Loose, ctx: Loose) => void (seen.signalAtSettle = ctx.signal));
    pi.on("agent_settled", (event: Loose) => void (seen.settledAborted = event.aborted));
  };
  let abortedAt = 0;
  const abortedSignals: boolean[] = [];
  // The classifier never answers (and ignores abort); the user presses Escape while it is asked.
  const hangThenUserAborts: Behaviour = (request, signal) => {
    if (!abortedAt) {
      abortedAt = Date.now();
      setTimeout(() => void pi.session.abort(), 50);
    }
    signal?.addEventListener("abort", () => abortedSignals.push(true), { once: true });
    return hanging(request, signal);
  };
  const pi = await startSession({
    files,
    extensions: [spy],
    guardSettings: { timeoutMs },
    classifier: hangThenUserAborts,
    script: [
      [
        { tool: "bash", args: { command: "cat first.log" }, id: "g1" },
        { tool: "bash", args: { command: "cat second.log" }, id: "g2" },
      ],
      "Both logs are routine.",
    ],
  });
  try {
    await pi.prompt("Anything unusual in the logs?");
    const settledAfter = Date.now() - abortedAt;
    assert.ok(abortedAt > 0, "the classifier was asked");
    assert.equal(seen.settledAborted, true, "Pi took the user's abort");
    // Pi 1.3.0 and 1.6.0 run agent_before_settle after the agent's run, with no
    // ctx.signal, and an abort there only suppresses a continuation: the pass
    // cannot see it, so the requests end at the time budget, not earlier.
    assert.equal(seen.signalAtSettle, undefined, "no ctx.signal at agent_before_settle (if Pi adds one, expect an earlier end)");
    assert.ok(settledAfter < timeoutMs + marginMs, `settled ${settledAfter} ms after the first request (budget ${timeoutMs} + ${marginMs})`);
    assert.equal(abortedSignals.length, pi.classifierCalls.length, "the pass aborted every request it started");

    const branch = pi.branch();
    assert.deepEqual(entriesOf(branch, "context_edit"), [], "nothing is changed");
    const records = guardRecords(branch);
    assert.equal(records.length, 1, "the pass's record is committed (Pi keeps drafts of an aborted settle)");
    assertKeptFor(records[0], { reason: "timeout", trace: "timeout", timedOut: true });
    assert.equal(records[0].savedChars, 0);
    assert.equal(records[0].requests, pi.classifierCalls.length);
    assert.equal(pi.status("context-guard"), "🛡 0 saved", "the status is not left at distilling…");
    assertNoPassFailure(pi.notifications);

    // The session goes on: the next run is judged, and only its own output is edited.
    pi.setClassifier(keepMatching("=== KEEP"));
    pi.script({ tool: "bash", args: { command: "cat new.log" }, id: "n1" }, "Lines 150 and 720.");
    await pi.prompt("Where are the KEEP lines in new.log?");
    assert.deepEqual(
      entriesOf(pi.branch(), "context_edit").map((e: Loose) => e.targetId),
      [toolResultEntry(pi.branch(), "n1").id],
    );
    assert.equal(guardRecords(pi.branch()).at(-1).timedOut, false);
    assertNoPassFailure(pi.notifications);
  } finally {
    await pi.dispose();
  }
});

test(`Pi ${piVersion}: deferred old exchanges are omitted at a later run end, once their savings pay off`, async () => {
  // The rule (crates/guard/src/exchange.rs `pays_off`, docs/GUARD.md "Whole items"): the
  // unrelated exchanges of one run end are omitted together when they save ≥ exchangeMinSavingChars
  // (8,000) and saved × requests so far (assistant entries in the context) ≥ 16 × the cache they
  // rewrite (the context from the first omitted prompt on, beyond what the pass's other edits
  // rewrite; none here).
  //   exchange 1 ≈ 6.3k chars (two seq outputs), exchange 2 ≈ 7.3k chars.
  //   "Four":  only exchange 1 is old enough: saves ≈ 6.1k < 8,000 (and 6.1k × 6 < 16 × ≈6.3k) → deferred.
  //   "Five":  both: save ≈ 13.2k ≥ 8,000, but 13.2k × 7 requests ≈ 92k < 16 × ≈13.6k ≈ 218k → deferred.
  //   "Six":   its 20 turns make 28 requests: 13.2k × 28 ≈ 369k ≥ 16 × ≈14.4k ≈ 230k → both omitted.
  const pi = await startSession({
    classifier: answering((id, _q, request) => {
      if (/^exchange_\d+$/.test(id)) return String((request.state as Loose).exchanges[id].user).includes("unrelated") ? 0.05 : 0.9;
      return 0.95;
    }),
  });
  const exchangeResults = () =>
    (guardRecords(pi.branch()).at(-1)?.results ?? []).filter((r: Loose) => r.kind === "exchange").map((r: Loose) => [r.label, r.outcome, r.reason, r.jev]);
  const one = "An unrelated task: list numbers";
  const two = "Another unrelated task: list more numbers";
  try {
    pi.script({ tool: "bash", args: { command: "seq 1 900; seq 1 700" }, id: "e1" }, "Listed.");
    await pi.prompt(one);
    pi.script({ tool: "bash", args: { command: "seq 2001 2900; seq 1 700" }, id: "e2" }, "Listed again.");
    await pi.prompt(two);
    pi.script("Three done.");
    await pi.prompt("Three");
    assert.deepEqual(exchangeResults(), [], "no exchange is old enough yet");

    pi.script("Four done.");
    await pi.prompt("Four");
    assert.deepEqual(exchangeResults(), [[one, "kept", "deferred", "p.05"]]);
    const four = guardRecords(pi.branch())
      .at(-1)
      .results.find((r: Loose) => r.kind === "exchange");
    assert.ok(four.beforeChars < 8_000, `exchange 1 alone is under the minimum saving (${four.beforeChars} chars)`);
    assert.equal(entriesOf(pi.branch(), "context_edit").length, 0);

    pi.script("Five done.");
    await pi.prompt("Five");
    assert.deepEqual(exchangeResults(), [
      [one, "kept", "deferred", "p.05"],
      [two, "kept", "deferred", "p.05"],
    ]);
    const five = guardRecords(pi.branch())
      .at(-1)
      .results.filter((r: Loose) => r.kind === "exchange");
    assert.ok(five[0].beforeChars + five[1].beforeChars > 9_000, "together they pass the minimum: the ratio defers them");
    assert.deepEqual(entriesOf(pi.branch(), "context_edit"), [], "nothing omitted while deferred");

    // Twenty quick turns (outputs too small to be judged) add requests, and little context.
    pi.script(...Array.from({ length: 20 }, (_, i) => ({ tool: "bash", args: { command: `true ${i}` } })), "Checked twenty times.");
    await pi.prompt("Six: check it twenty times");
    assert.deepEqual(exchangeResults(), [
      [one, "removed", "unrelated", "p.05"],
      [two, "removed", "unrelated", "p.05"],
    ]);

    // The drafts: a stub on each prompt, null on every other entry of the two exchanges.
    const branch = pi.branch();
    const users = branch.filter((e: Loose) => e.type === "message" && e.message.role === "user");
    const record = guardRecords(branch).at(-1);
    const stubs: string[] = [];
    for (const [k, prompt] of [users[0], users[1]].entries()) {
      const inside = branch.slice(branch.indexOf(prompt) + 1, branch.indexOf(users[k + 1])).filter((e: Loose) => e.type === "message");
      assert.equal(inside.length, 3, "assistant, tool result, assistant");
      const result = record.results.filter((r: Loose) => r.kind === "exchange")[k];
      assert.deepEqual(result.omitted, [prompt.id, ...inside.map((e: Loose) => e.id)]);
      const edit = entriesOf(branch, "context_edit").find((e: Loose) => e.targetId === prompt.id);
      const stub = edit.replacement.content[0].text as string;
      assert.match(
        stub,
        /^\[context-guard\] Omitted an earlier exchange judged unrelated to the current work: "[^"]+" \(4 messages, ~\d+(\.\d)?k tokens\)\. Full exchange: recall\(\{"entryId":"[^"]+"\}\)\.$/,
      );
      assert.ok(stub.includes(`"${k === 0 ? one : two}"`) && stub.includes(`recall({"entryId":"${prompt.id}"})`));
      assert.equal(result.afterChars, stub.length);
      for (const e of inside) assert.equal(entriesOf(branch, "context_edit").find((x: Loose) => x.targetId === e.id)?.replacement, null);
      stubs.push(stub);
    }
    assert.equal(entriesOf(branch, "context_edit").length, 8, "2 stubs and 6 omissions, nothing else");
    assert.equal(
      record.savedChars,
      record.results.reduce((s: number, r: Loose) => s + r.beforeChars - r.afterChars, 0),
    );

    // The next request: the two stubs in place, the omitted calls and results gone, every call paired.
    pi.script("Seven done.");
    await pi.prompt("Seven");
    const next = pi.requests.at(-1)!.messages;
    assertPaired(next);
    assert.deepEqual(
      next
        .filter((m) => m.role === "user")
        .slice(0, 2)
        .map(textOf),
      stubs,
    );
    assert.ok(!next.some((m) => m.role === "toolResult" && (m.toolCallId === "e1" || m.toolCallId === "e2")));
    assert.ok(!next.some((m) => m.role === "assistant" && ["Listed.", "Listed again."].includes(textOf(m))));
    assertNoPassFailure(pi.notifications);
  } finally {
    await pi.dispose();
  }
});
