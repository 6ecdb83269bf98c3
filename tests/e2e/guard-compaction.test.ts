// Distill before compacting (issue 9 part 3), inside real Pi: a run whose
// extension tool returns two outputs of ~400k characters under a 200k-token
// window. Pi's estimate after the second output passes its threshold
// (200,000 − 16,384); with the guard on, the turn_end checkpoint distills
// both outputs and Pi does not compact; with the guard off, or when the
// classifier keeps everything or fails, nothing is appended and Pi compacts
// exactly as it would have.
import assert from "node:assert/strict";
import { test } from "node:test";
import { type Behaviour, keepChunks, keepEverything, keepMatching, providerError } from "../harness/classifier.ts";
import { assertNoPassFailure, guardRecords } from "../harness/guard-checks.ts";
import { entriesOf, textOf, toolResults } from "../harness/inspect.ts";
import { type Loose, piVersion } from "../harness/pi.ts";
import { type PiSession, startSession } from "../harness/session.ts";
import { dumpLogTool, NEEDLE, serviceLog } from "../harness/service-logs.ts";

const LOGS: Record<string, string> = { alpha: serviceLog("alpha", 400_000), beta: serviceLog("beta", 400_000), gamma: serviceLog("gamma", 680_000) };

/** The inline extension: a tool that returns one of the logs. */
const dumpTool = dumpLogTool((service) => LOGS[service]);

const SUMMARY = "## Goal\nFind the failing volume.\n(faux summary)";
const ANSWER = "The alpha and beta workers failed on a full disk quota.";

/** The run: two dumps, then the answer; a compaction's summary request takes the step before the answer. */
async function run(options: {
  classifier?: Behaviour;
  guard: boolean;
  compacts: boolean;
  guardSettings?: Record<string, unknown>;
  piSettings?: Record<string, unknown>;
}): Promise<PiSession> {
  const pi = await startSession({
    contextWindow: 200_000,
    extensions: [dumpTool],
    classifier: options.classifier,
    guardSettings: { ...options.guardSettings, ...(options.guard ? {} : { enabled: false }) },
    piSettings: options.piSettings,
    script: [
      { tool: "dump_log", args: { service: "alpha" }, id: "a" },
      { tool: "dump_log", args: { service: "beta" }, id: "b" },
      ...(options.compacts ? [SUMMARY] : []),
      ANSWER,
    ],
  });
  await pi.prompt("Why did the workers stop? Dump the alpha and beta logs.");
  return pi;
}

const compactions = (pi: PiSession) => entriesOf(pi.branch(), "compaction");
const edits = (pi: PiSession) => entriesOf(pi.branch(), "context_edit");

/** The guard-off run's shape, which the guard must leave exactly as it was when it cannot keep Pi under. */
function compactedShape(pi: PiSession) {
  const compaction = compactions(pi)[0];
  return {
    compactions: compactions(pi).length,
    tokensBefore: compaction?.tokensBefore,
    summary: compaction?.summary,
    requests: pi.requests.length,
    types: pi.branch().map((e: Loose) => (e.type === "message" ? `message:${e.message.role}` : e.type)),
    pending: pi.pendingSteps(),
  };
}

/** The run's first compaction came right after the second output, before the answer's request. */
function assertCompactedAfterTheOutputs(pi: PiSession, threshold = 200_000 - 16_384): void {
  const types = compactedShape(pi).types;
  const second = types.lastIndexOf("message:toolResult");
  assert.equal(types[second + 1], "compaction", `entries: ${types.join(" ")}`);
  const compaction = compactions(pi)[0];
  assert.ok(compaction.tokensBefore > threshold, `tokensBefore ${compaction.tokensBefore}`);
  // A split turn: Pi summarizes the turn's prefix, with the scripted reply.
  assert.ok(compaction.summary.endsWith(SUMMARY), `the summary reply came from the script: ${compaction.summary}`);
  // The answer's request came after it: the summary in, the first log out (Pi keeps the turn it cut
  // at, with the second log).
  const answer = JSON.stringify(pi.requests.find((r) => JSON.stringify(r.messages).includes("(faux summary)"))?.messages ?? []);
  assert.ok(answer.includes("(faux summary)"), "a request after the compaction carries the summary");
  assert.ok(!answer.includes(`alpha 000300 ${NEEDLE}`), "the first log was summarized away");
}

test(`Pi ${piVersion}: with the guard off the run compacts (the summary reply taken from the script)`, async () => {
  const pi = await run({ guard: false, compacts: true });
  try {
    assertCompactedAfterTheOutputs(pi);
    assert.equal(edits(pi).length, 0);
  } finally {
    await pi.dispose();
  }
});

test(`Pi ${piVersion}: with the guard on, the turn_end checkpoint distills both outputs and Pi does not compact`, async () => {
  const pi = await run({ guard: true, compacts: false, classifier: keepMatching(NEEDLE) });
  try {
    assert.equal(compactions(pi).length, 0, "no compaction entry on the branch");
    assert.equal(pi.pendingSteps(), 0, "no summary request took a step");
    assert.equal(pi.requests.length, 3, "the two dumps and the answer");
    // The next request, the answer's, carries the distilled replacements: the needle lines verbatim,
    // most of each log gone.
    const results = toolResults(pi.requests[2].messages);
    assert.equal(results.length, 2);
    for (const [i, name] of ["alpha", "beta"].entries()) {
      const text = textOf(results[i]);
      assert.match(text, /^\[context-guard\]/, `${name}: ${text.slice(0, 120)}`);
      assert.ok(text.includes(`${name} 000300 ${NEEDLE} /data/${name}/300`), `${name}'s needle line is kept`);
      assert.ok(text.length < 40_000, `${name}: ${text.length} characters`);
    }
    // The edits came at the second turn's end, in one checkpoint record (phase mid-run), before the run ended.
    const branch = pi.branch();
    const firstEdit = branch.findIndex((e: Loose) => e.type === "context_edit");
    const answer = branch.findIndex((e: Loose) => e.type === "message" && e.message.role === "assistant" && textOf(e.message) === ANSWER);
    assert.ok(firstEdit > 0 && firstEdit < answer, `edits at ${firstEdit}, the answer at ${answer}`);
    const records = guardRecords(branch);
    assert.equal(records[0].phase, "mid-run");
    assert.deepEqual(new Set(edits(pi).map((e: Loose) => e.targetId)).size, 2);
    // Pi's own estimate of the answer's request is far under the threshold.
    assert.ok(pi.session.getContextUsage().tokens < 50_000, `${pi.session.getContextUsage().tokens} tokens`);
    await pi.prompt("/guard details");
    const report = pi.notifications.at(-1)?.message ?? "";
    assert.match(report, /before Pi compacts: its estimate \d+\.\dk > threshold 183\.6k; 2 outputs distilled → \d+(\.\d)?k?, so Pi does not compact/);
    assertNoPassFailure(pi.notifications);
  } finally {
    await pi.dispose();
  }
});

for (const [name, classifier] of [
  ["keeps everything", keepEverything],
  ["errors", providerError()],
] as const) {
  test(`Pi ${piVersion}: when the classifier ${name}, nothing is appended and Pi compacts exactly as with the guard off`, async () => {
    const off = await run({ guard: false, compacts: true });
    const on = await run({ guard: true, compacts: true, classifier });
    try {
      assertCompactedAfterTheOutputs(on);
      assert.equal(edits(on).length, 0, "no edit");
      const offShape = compactedShape(off);
      const onShape = compactedShape(on);
      // The run-end pass may add its own record after the answer; up to there the branches match.
      const upToAnswer = (types: string[]) => types.slice(0, types.lastIndexOf("message:assistant") + 1);
      assert.deepEqual(upToAnswer(onShape.types), upToAnswer(offShape.types));
      assert.equal(onShape.tokensBefore, offShape.tokensBefore, "Pi compacted at the same estimate");
      assert.equal(onShape.compactions, offShape.compactions);
      assert.equal(onShape.pending, offShape.pending);
      assert.ok(on.classifierCalls.length > 0, "the checkpoint did ask");
      await on.prompt("/guard details");
      const report = on.notifications.at(-1)?.message ?? "";
      assert.match(
        report,
        /before Pi compacts: its estimate \d+\.\dk > threshold 183\.6k; the checkpoint gave no edits \([^)]+\), so nothing is appended and Pi compacts/,
      );
      assertNoPassFailure(on.notifications);
    } finally {
      await off.dispose();
      await on.dispose();
    }
  });
}

// The run's last turn: one output of ~680k characters (~170k tokens) stays under the threshold after
// its turn, and the long answer's own usage passes it. Pi checks after that turn, before
// agent_before_settle, so only the last turn_end can act.
const LONG_ANSWER = `The gamma workers failed on a full disk quota. ${"Details follow. ".repeat(5_000)}`;

test(`Pi ${piVersion}: the run's last turn too: its answer passes the threshold, the checkpoint distills and Pi does not compact`, async () => {
  const script = (compacts: boolean) => [{ tool: "dump_log", args: { service: "gamma" }, id: "g" }, LONG_ANSWER, ...(compacts ? [SUMMARY] : [])];
  const off = await startSession({ contextWindow: 200_000, extensions: [dumpTool], guardSettings: { enabled: false }, script: script(true) });
  const on = await startSession({ contextWindow: 200_000, extensions: [dumpTool], classifier: keepMatching(NEEDLE), script: script(false) });
  try {
    for (const pi of [off, on]) await pi.prompt("Why did the gamma workers stop? Dump the log.");
    // Guard off: Pi compacts after the answer, at run end (the summary request took the last step).
    const offTypes = compactedShape(off).types;
    assert.equal(offTypes.at(-1), "compaction", offTypes.join(" "));
    assert.equal(off.pendingSteps(), 0);
    assert.equal(off.requests.length, 3);
    // Guard on: the edit came at the last turn's end, and nothing compacted.
    assert.equal(compactions(on).length, 0, "no compaction entry on the branch");
    assert.equal(on.pendingSteps(), 0);
    assert.equal(on.requests.length, 2);
    assert.equal(edits(on).length, 1);
    assert.equal(guardRecords(on.branch())[0].phase, "mid-run");
    // The next request carries the replacement.
    on.script("You are welcome.");
    await on.prompt("Thanks.");
    const result = textOf(toolResults(on.requests.at(-1)!.messages)[0]);
    assert.match(result, /^\[context-guard\]/);
    assert.ok(result.includes(`gamma 000300 ${NEEDLE} /data/gamma/300`));
    // About fourteen needle chunks of ~5,700 characters each (the chunk target above ~480k).
    assert.ok(result.length < LOGS.gamma.length / 5, `${result.length} characters`);
    assert.equal(compactions(on).length, 0);
    assertNoPassFailure(on.notifications);
  } finally {
    await off.dispose();
    await on.dispose();
  }
});

test(`Pi ${piVersion}: edits that keep too much are not appended: Pi compacts exactly as with the guard off`, async () => {
  // A reserve of 50,000 puts the threshold at 150,000: after the second output Pi's estimate is ~201k;
  // a classifier that keeps four chunks in five (maxKeepRatio raised so they still count as distilled)
  // would leave ~161k.
  const piSettings = { compaction: { reserveTokens: 50_000 } };
  const fourInFive = keepChunks((request) =>
    Object.keys((request.state.chunks ?? {}) as Record<string, string>)
      .map((id) => Number(id.replace("chunk_", "")))
      .filter((n) => n % 5 !== 0),
  );
  const off = await run({ guard: false, compacts: true, piSettings });
  const on = await run({ guard: true, compacts: true, piSettings, classifier: fourInFive, guardSettings: { maxKeepRatio: 0.9 } });
  try {
    assertCompactedAfterTheOutputs(on, 150_000);
    assert.equal(edits(on).length, 0, "no edit");
    assert.equal(guardRecords(on.branch()).filter((r: Loose) => r.phase === "mid-run").length, 0, "no checkpoint record either");
    const offShape = compactedShape(off);
    const onShape = compactedShape(on);
    const upToAnswer = (types: string[]) => types.slice(0, types.lastIndexOf("message:assistant") + 1);
    assert.deepEqual(upToAnswer(onShape.types), upToAnswer(offShape.types));
    assert.equal(onShape.tokensBefore, offShape.tokensBefore, "Pi compacted at the same estimate");
    assert.ok(on.classifierCalls.length > 0, "the checkpoint did ask");
    await on.prompt("/guard details");
    const report = on.notifications.at(-1)?.message ?? "";
    if (piVersion === "1.3.0") {
      // Pi 1.3.0's faux provider counts the prompt twice in its usage, so there the run's last turn is
      // past the threshold too, after the compaction summarized the run's prompt away: /guard shows
      // that later decision.
      assert.match(
        report,
        /before Pi compacts: its estimate \d+\.\dk > threshold 150\.0k; the checkpoint gave no edits \(no-run\), so nothing is appended and Pi compacts/,
      );
    } else {
      const line =
        /before Pi compacts: its estimate (\d+\.\d)k > threshold 150\.0k; distilled it would still be (\d+\.\d)k, so nothing is appended and Pi compacts/.exec(
          report,
        );
      assert.ok(line, report);
      const [before, after] = [Number(line[1]), Number(line[2])];
      assert.ok(after > 150 && after < before * 0.9, `${before}k → ${after}k`);
    }
    assertNoPassFailure(on.notifications);
  } finally {
    await off.dispose();
    await on.dispose();
  }
});
