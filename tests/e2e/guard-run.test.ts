// The run and its question inside real Pi: the classifier request field by
// field, steering messages that continue the run and join the question, and
// other extensions' drafts that survive the pass.
import assert from "node:assert/strict";
import { test } from "node:test";
import { keepMatching } from "../harness/classifier.ts";
import { fixtureRepo } from "../harness/fixture-repo.ts";
import { assertNoPassFailure } from "../harness/guard-checks.ts";
import { entriesOf, textOf, toolResultEntry } from "../harness/inspect.ts";
import { type Loose, piVersion } from "../harness/pi.ts";
import { startSession } from "../harness/session.ts";

test(`Pi ${piVersion}: one request per segment, its state and questions field by field`, async () => {
  const pi = await startSession({
    files: fixtureRepo(),
    classifier: keepMatching("=== 503"),
    guardSettings: { maxChunksPerSegment: 20 },
    script: [{ tool: "bash", args: { command: "rg -n status src/services" }, id: "g" }, "Services 03, 10, 17, 24, 31, 38, 45, 52 and 59 retry on 503."],
  });
  try {
    await pi.prompt("Which services retry on 503?");
    const raw = textOf(toolResultEntry(pi.branch(), "g").message);
    const calls = pi.classifierCalls;
    assert.ok(calls.length >= 2, `${calls.length} requests`);
    let next = 1;
    for (const [i, call] of calls.entries()) {
      assert.equal(call.model, "fakejev/jev-test");
      assert.equal(call.timeoutMs, 8_000);
      const state = call.request.state as Loose;
      assert.deepEqual(Object.keys(state), ["situation", "user_question", "final_answer", "tool", "tool_arguments", "output_size", "chunks"]);
      assert.match(state.situation, /coding agent/);
      assert.equal(state.user_question, "Which services retry on 503?");
      assert.equal(state.final_answer, "Services 03, 10, 17, 24, 31, 38, 45, 52 and 59 retry on 503.");
      assert.equal(state.tool, "bash");
      assert.equal(state.tool_arguments, JSON.stringify({ command: "rg -n status src/services" }));
      assert.equal(state.output_size, `${raw.replace(/\n$/, "").split("\n").length} lines, part ${i + 1} of ${calls.length}`);
      // Chunks are numbered across the whole output.
      const ids = Object.keys(state.chunks);
      assert.ok(ids.length <= 20);
      assert.deepEqual(
        ids,
        ids.map((_, k) => `chunk_${next + k}`),
      );
      const q = call.request.questions as Loose;
      assert.deepEqual(Object.keys(q), ["keep_whole", "focus", ...ids]);
      assert.equal(q.keep_whole.type, "bool");
      assert.equal(q.focus.type, "choice");
      assert.deepEqual(Object.keys(q.focus.criteria), ["whole", "none", ...ids]);
      for (const id of ids) assert.equal(q[id].type, "bool");
      next += ids.length;
    }
    assertNoPassFailure(pi.notifications);
  } finally {
    await pi.dispose();
  }
});

test(`Pi ${piVersion}: history goes in earlier_conversation; notes of the run in agent_notes_during_the_run`, async () => {
  const pi = await startSession({
    files: fixtureRepo(),
    classifier: keepMatching("=== 503"),
    script: [
      "The project renders build badges.",
      { say: "Looking for the retry lines now.", calls: [{ tool: "bash", args: { command: "rg -n status src/services" } }] },
      "Nine services retry on 503.",
    ],
  });
  try {
    await pi.prompt("What does this project do?");
    assert.equal(pi.classifierCalls.length, 0, "a run without large outputs asks nothing");
    await pi.prompt("Which services retry on 503?");
    const state = pi.classifierCalls[0].request.state as Loose;
    assert.deepEqual(Object.keys(state).slice(0, 5), ["situation", "earlier_conversation", "user_question", "final_answer", "agent_notes_during_the_run"]);
    assert.match(state.situation, /earlier_conversation/);
    assert.deepEqual(state.earlier_conversation.recent_exchanges, [{ user: "What does this project do?", assistant: "The project renders build badges." }]);
    assert.equal(state.agent_notes_during_the_run, "Looking for the retry lines now.");
    assertNoPassFailure(pi.notifications);
  } finally {
    await pi.dispose();
  }
});

test(`Pi ${piVersion}: a steering message continues the run and joins the question`, async () => {
  const pi = await startSession({
    files: fixtureRepo(),
    classifier: keepMatching("=== 503"),
  });
  try {
    pi.script(
      () => {
        // Sent while the model is working, as a person types during a run.
        void pi.session.prompt("Also check 502.", { streamingBehavior: "steer" });
        return { tool: "bash", args: { command: "rg -n status src/services" }, id: "g" };
      },
      { tool: "bash", args: { command: "rg -n 502 src" }, id: "g2" },
      "Nine services retry on 503; none handle 502.",
    );
    await pi.prompt("Which services retry on 503?");
    const branch = pi.branch();
    const users = branch.filter((e: Loose) => e.type === "message" && e.message.role === "user");
    assert.equal(users.length, 2, "the steering message is in the session");
    const state = pi.classifierCalls[0].request.state as Loose;
    assert.equal(state.user_question, "Which services retry on 503?\n\n[The user added during the run] Also check 502.");
    // The output from before the steering message was still distilled.
    const target = toolResultEntry(branch, "g").id;
    assert.ok(entriesOf(branch, "context_edit").some((e: Loose) => e.targetId === target));
    assertNoPassFailure(pi.notifications);
  } finally {
    await pi.dispose();
  }
});

test(`Pi ${piVersion}: other extensions' drafts survive the pass`, async () => {
  const other = (pi: Loose) =>
    pi.on("agent_before_settle", (event: Loose) => ({
      entries: [...event.entries, { type: "custom", customType: "other-extension", data: { note: "kept" } }],
    }));
  const pi = await startSession({
    files: fixtureRepo(),
    classifier: keepMatching("=== 503"),
    extensions: [other],
    script: [{ tool: "bash", args: { command: "rg -n status src/services" } }, "Nine services retry on 503."],
  });
  try {
    await pi.prompt("Which services retry on 503?");
    const branch = pi.branch();
    assert.equal(entriesOf(branch, "custom", "other-extension").length, 1);
    assert.equal(entriesOf(branch, "custom", "context-guard").length, 1);
    assert.equal(entriesOf(branch, "context_edit").length, 1);
    assertNoPassFailure(pi.notifications);
  } finally {
    await pi.dispose();
  }
});
