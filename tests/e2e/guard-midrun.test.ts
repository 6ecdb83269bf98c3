// Mid-run checkpoints inside real Pi (docs/GUARD.md "Mid-run checkpoints",
// issue 9 parts 1, 2, 5, 6): the scripted long run of tests/harness/long-run.ts
// ("fix all failing tests": 32 tool calls over a real project, suite logs,
// reads, a grep, edits) with the stand-in classifier. A checkpoint fires at the
// turn where the eligible outputs reach the batch, its drafts make the very
// next request smaller, its requests carry the checkpoint's state; an output
// kept mid-run is judged again at run end and a distilled one is not; the
// break-even skips a checkpoint that would not pay off and lets a later one
// fire; a failing, hanging or malformed classifier changes nothing and a user
// abort cancels the checkpoint.
import assert from "node:assert/strict";
import { test } from "node:test";
import { type Behaviour, hanging, malformed, providerError } from "../harness/classifier.ts";
import { assertNoPassFailure, guardRecords } from "../harness/guard-checks.ts";
import { entriesOf, textOf } from "../harness/inspect.ts";
import { longRunScript, oracleClassifier, project, startLongRun } from "../harness/long-run.ts";
import { type Loose, piVersion } from "../harness/pi.ts";
import type { PiSession, Step } from "../harness/session.ts";

/** The defaults the gates use (docs/GUARD.md "Settings"). */
/** `midRunMinAgeTurns`' default (the economy suite's choice; the original context-guard had 4). */
const MIN_AGE_TURNS = 1;
/** `midRunMinTurns` and `midRunBatchChars`' defaults (the economy suite's choice; the original had no first turn and a 60,000 batch). */
const MIN_TURNS = 8;
const BATCH_CHARS = 10_000;
const SMALL_MIN_CHARS = 400;

/** Per branch entry, the turn it belongs to (assistant messages so far in the run). */
function turns(branch: Loose[]): number[] {
  let turn = 0;
  return branch.map((e) => {
    if (e.type === "message" && e.message.role === "assistant") turn++;
    return turn;
  });
}

/** The mid-run records with the turn whose turn_end appended them. */
function checkpoints(branch: Loose[]): { turn: number; data: Loose }[] {
  const at = turns(branch);
  return branch.flatMap((e, i) =>
    e.type === "custom" && e.customType === "context-guard" && e.data.phase === "mid-run" ? [{ turn: at[i], data: e.data }] : [],
  );
}

/**
 * The first turn at whose end the outputs eligible by docs/GUARD.md "Mid-run checkpoints" reach the batch,
 * counted here from the raw branch: tool results of the run of at least 400 characters, not `edit`/`write`,
 * whose call is at least `midRunMinAgeTurns` turns old; not before turn `midRunMinTurns`.
 */
function firstBatchTurn(branch: Loose[]): number | undefined {
  const at = turns(branch);
  const outputs = branch.flatMap((e, i) =>
    e.type === "message" && e.message.role === "toolResult" && !["edit", "write"].includes(e.message.toolName)
      ? [{ turn: at[i], chars: textOf(e.message).length }]
      : [],
  );
  for (let turn = MIN_TURNS; turn <= at.at(-1)!; turn++) {
    const pending = outputs.filter((o) => o.chars >= SMALL_MIN_CHARS && turn - o.turn >= MIN_AGE_TURNS).reduce((n, o) => n + o.chars, 0);
    if (pending >= BATCH_CHARS) return turn;
  }
  return undefined;
}

const size = (messages: Loose[]) =>
  messages.reduce(
    (n, m) =>
      n +
      (typeof m.content === "string"
        ? m.content.length
        : (m.content ?? []).reduce((k: number, b: Loose) => k + (b.text?.length ?? JSON.stringify(b).length), 0)),
    0,
  );
const isCheckpointRequest = (r: Loose) => r.state.agent_progress !== undefined;

/** The oracle classifier, except that mid-run the first source read is needed whole (so it is kept). */
function keepingFirstReadMidRun(path: string): Behaviour {
  const oracle = oracleClassifier();
  return async (request, signal) => {
    const state = request.state as Loose;
    if (isCheckpointRequest(request) && typeof state.tool_arguments === "string" && state.tool_arguments.includes(path)) {
      return keepWhole(request, signal);
    }
    return oracle(request, signal);
  };
}

const keepWhole: Behaviour = async (request) => ({
  answers: Object.fromEntries(
    Object.entries(request.questions).map(([id, q]) => [
      id,
      q.type === "choice" ? { type: "choice", choice: "whole", probabilities: { whole: 0.9 }, confidence: 0.9 } : { type: "bool", probability: 0.95 },
    ]),
  ),
  stopReason: "stop",
});

async function guardText(pi: PiSession): Promise<string> {
  const before = pi.notifications.length;
  await pi.prompt("/guard details");
  return pi.notifications
    .slice(before)
    .map((n) => n.message)
    .join("\n");
}

test(`Pi ${piVersion}: a checkpoint fires where the eligible outputs reach the batch and the next request is smaller`, async () => {
  const firstRead = project().bugs[0].path;
  const { pi, prompt } = await startLongRun({ guardSettings: { midRunBreakEven: false }, classifier: keepingFirstReadMidRun(firstRead) });
  try {
    await pi.prompt(prompt);
    assertNoPassFailure(pi.notifications);
    const branch = pi.branch();
    const fired = checkpoints(branch);
    const expected = firstBatchTurn(branch);
    assert.ok(expected !== undefined && expected < 33, `the run reaches the batch mid-run (turn ${expected})`);
    assert.ok(fired.length >= 2, `checkpoints fired: ${JSON.stringify(fired.map((c) => c.turn))}`);
    assert.equal(fired[0].turn, expected, "the first checkpoint fires at the turn where the eligible outputs reach the batch");

    // Its drafts are in the very next provider request of the run (requests[k] asks for turn k + 1).
    const first = fired[0];
    const before = pi.requests[first.turn - 1].messages;
    const after = pi.requests[first.turn].messages;
    assert.ok(size(after) < size(before), `the request after the checkpoint is smaller: ${size(before)} → ${size(after)}`);
    const distilled = (first.data.results as Loose[]).filter((r) => r.outcome !== "kept");
    assert.ok(distilled.length >= 2, JSON.stringify(first.data.results));
    const results = after.filter((m: Loose) => m.role === "toolResult");
    const shown = results.filter((m: Loose) => textOf(m).startsWith("[context-guard] "));
    assert.equal(shown.length, distilled.length, "every distilled output shows its note in the next request");
    assert.ok(first.data.savedChars > 0);

    // The checkpoint's requests: no final answer; progress, later calls and superseded.
    const midRun = pi.classifierCalls.map((c) => c.request).filter(isCheckpointRequest);
    assert.ok(midRun.length > 0);
    for (const r of midRun) {
      const s = r.state as Loose;
      assert.equal(s.final_answer, undefined);
      assert.equal(typeof s.agent_progress.latest_note, "string");
      if (s.chunks) assert.ok(Array.isArray(s.later_tool_calls) && s.later_tool_calls.length > 0, JSON.stringify(Object.keys(s)));
    }
    const log = midRun.find((r) => (r.state as Loose).tool === "bash") as Loose;
    assert.equal(log.state.superseded, "the same command was run again later in the run");
    assert.ok(log.state.later_tool_calls.includes("bash `node test/run.mjs`"));
    assert.equal(log.state.agent_progress.earlier_notes.includes("Running the suite to see what fails."), true);
    assert.match(log.questions.chunk_1.instructions, /^To finish user_question, will the agent still need the lines in chunk_1\?/);

    // The read kept mid-run is judged again at run end; the outputs distilled mid-run are not.
    const runEnd = guardRecords(branch)
      .filter((d) => d.phase === "run-end")
      .at(-1);
    const keptMidRun = fired.flatMap((c) => (c.data.results as Loose[]).filter((r) => r.outcome === "kept")).map((r) => r.entryId);
    const distilledMidRun = fired.flatMap((c) => (c.data.results as Loose[]).filter((r) => r.outcome !== "kept")).map((r) => r.entryId);
    const judgedAtEnd = (runEnd.results as Loose[]).map((r) => r.entryId);
    assert.ok(keptMidRun.length > 0, "the first read was kept mid-run");
    for (const id of keptMidRun) assert.ok(judgedAtEnd.includes(id), `${id}, kept mid-run, is judged at run end`);
    for (const id of distilledMidRun) assert.ok(!judgedAtEnd.includes(id), `${id}, distilled mid-run, is not judged again`);
    // No output is judged by two checkpoints.
    const judgedMidRun = fired.flatMap((c) => (c.data.results as Loose[]).map((r) => r.entryId));
    assert.equal(new Set(judgedMidRun).size, judgedMidRun.length);

    // The status said so while the checkpoints ran, and /guard counts and shows them.
    const statuses = pi.statuses.get("context-guard") ?? [];
    assert.ok(statuses.filter((s) => s?.includes("🛡 distilling…")).length >= fired.length + 1, JSON.stringify(statuses));
    const text = await guardText(pi);
    assert.match(text, new RegExp(`asked at 1 run end and ${fired.length} mid-run checkpoints:`));
    // This test turns the break-even off: the line names the batch and the room trigger, not the money rule.
    assert.match(
      text,
      /mid-run checkpoints: on \(from turn 8, outputs at least 1 turn old, in batches of 10\.0k chars, or past 40\.0k tokens of context when a batch takes out 10\.0k\)/,
    );
    assert.match(text, /last mid-run checkpoint \(\d+ ms, \d+ requests?, [\d.]+k chars kept out\):\n {4}(distilled|removed|kept) /);
    assert.doesNotMatch(text, /not in this version/);
  } finally {
    await pi.dispose();
  }
});

test(`Pi ${piVersion}: the break-even skips a checkpoint that would not pay off, and later in the run one fires`, async () => {
  // Ten turns, then the answer: the batch is reached early, but 9–10 turns cannot pay for the rewrite. The room
  // trigger is off here, so the rule alone decides (faux has no catalog price: the rule runs in tokens).
  const p = project();
  const short = [...longRunScript(p).slice(0, 10), "Stopping here for now."];
  const { pi, prompt } = await startLongRun({ script: short, guardSettings: { midRunRoomTokens: 0 } });
  try {
    await pi.prompt(prompt);
    assertNoPassFailure(pi.notifications);
    const branch = pi.branch();
    const reached = firstBatchTurn(branch);
    assert.ok(reached !== undefined && reached <= 10, `the batch is reached at turn ${reached}`);
    assert.deepEqual(checkpoints(branch), [], "no checkpoint fired");
    const text = await guardText(pi);
    assert.match(text, /last checkpoint skipped \(turn 10\): not paying off, [\d.]+k chars × 10 later requests < 16 × [\d.]+k chars of cache rewrite/);
  } finally {
    await pi.dispose();
  }
  // The whole run at the defaults: once the context is past the room trigger (Pi's estimate, or the guard's own
  // where Pi has none yet), a checkpoint fires, after the batch was reached.
  const long = await startLongRun({});
  try {
    await long.pi.prompt(long.prompt);
    const branch = long.pi.branch();
    const fired = checkpoints(branch);
    assert.ok(fired.length > 0, "a checkpoint fired");
    assert.ok(fired[0].turn > firstBatchTurn(branch)!, `it fired at turn ${fired[0].turn}, after the batch was reached`);
  } finally {
    await long.pi.dispose();
  }
});

/** The long run's script with each request's time recorded. */
function timed(steps: Step[], times: number[]): Step[] {
  return steps.map((s) => (request) => {
    times.push(Date.now());
    return typeof s === "function" ? s(request) : s;
  });
}

for (const [name, behaviour] of [
  ["an erroring", providerError()],
  ["a malformed", malformed("missing")],
  ["a hanging", hanging],
] as [string, Behaviour][]) {
  test(`Pi ${piVersion}: ${name} classifier changes nothing mid-run and delays it by at most timeoutMs + 500 ms`, async () => {
    const times: number[] = [];
    const timeoutMs = 1500;
    const { pi, prompt } = await startLongRun({
      guardSettings: { midRunBreakEven: false, timeoutMs },
      classifier: behaviour,
      script: timed(longRunScript(), times),
    });
    try {
      await pi.prompt(prompt);
      assertNoPassFailure(pi.notifications);
      const branch = pi.branch();
      assert.deepEqual(entriesOf(branch, "context_edit"), [], "no output was edited");
      const fired = checkpoints(branch);
      assert.ok(fired.length > 0, "checkpoints ran and recorded why they kept everything");
      for (const c of fired)
        assert.ok(
          (c.data.results as Loose[]).every((r) => r.outcome === "kept"),
          JSON.stringify(c.data.results),
        );
      // Every request carries the whole run so far.
      for (let k = 1; k < pi.requests.length; k++) assert.ok(size(pi.requests[k].messages) > size(pi.requests[k - 1].messages), `request ${k + 1} grew`);
      // From a checkpoint's first classifier call to the next provider request: at most timeoutMs + 500 ms.
      for (const c of fired) {
        const next = times[c.turn];
        const started = pi.classifierCalls.filter((call) => call.startedAt <= next).at(-1)!.startedAt;
        assert.ok(next - started <= timeoutMs + 500, `turn ${c.turn}: the checkpoint held the run ${next - started} ms`);
      }
    } finally {
      await pi.dispose();
    }
  });
}

test(`Pi ${piVersion}: a user abort during a checkpoint cancels its requests and edits nothing`, async () => {
  let session: Loose;
  const timeoutMs = 6000;
  // The classifier hangs (ignoring its own abort); the user presses Escape while it does.
  const abortWhileJudging: Behaviour = (request, signal) => {
    setTimeout(() => void session.abort(), 100);
    return hanging(request, signal);
  };
  const { pi, prompt } = await startLongRun({ guardSettings: { midRunBreakEven: false, timeoutMs }, classifier: abortWhileJudging });
  session = pi.session;
  try {
    const started = Date.now();
    await pi.prompt(prompt);
    assert.ok(pi.classifierCalls.length > 0, "a checkpoint started");
    const waited = Date.now() - pi.classifierCalls[0].startedAt;
    assert.ok(waited < timeoutMs, `the abort cancelled the checkpoint (${waited} ms after it asked; ${Date.now() - started} ms in all)`);
    const branch = pi.branch();
    assert.deepEqual(entriesOf(branch, "context_edit"), [], "nothing was edited");
    assert.deepEqual(checkpoints(branch), [], "nothing was recorded");
    assertNoPassFailure(pi.notifications);
  } finally {
    await pi.dispose();
  }
});
