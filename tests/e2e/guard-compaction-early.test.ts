// Judging early before Pi compacts (issue 27), inside real Pi: a run of ten turns, each a tool call that
// takes 0.6 s and returns a log of ~100k characters (~25k tokens) under a 200k window, so that Pi's
// estimate passes its threshold (183,616) after the eighth. The judge answers in 1.5 s, more than two
// turns. With the guard off, Pi compacts after the eighth turn. With the guard on (its regular mid-run
// checkpoints off, so that only this acts), the guard starts the no-gate checkpoint in the background
// once the estimate is expected to pass the threshold within the turns its judge takes and one more; the
// edits land at a later turn end before the crossing, no turn waits for the judge, and Pi never compacts.
import assert from "node:assert/strict";
import { test } from "node:test";
import { keepMatching, slowJudge } from "../harness/classifier.ts";
import { assertNoPassFailure, guardRecords } from "../harness/guard-checks.ts";
import { entriesOf, textOf, toolResults } from "../harness/inspect.ts";
import { type Loose, piVersion } from "../harness/pi.ts";
import { dumpLogTool, NEEDLE, serviceLog } from "../harness/service-logs.ts";
import { type Call, type PiSession, type ProviderRequest, startSession } from "../harness/session.ts";

const TURNS = 10;
const TOOL_MS = 600;
const JUDGE_MS = 1_500;
const SUMMARY = "## Goal\nFind the failing volume.\n(faux summary)";
const ANSWER = "Every worker failed on a full disk quota.";

const dumpTool = dumpLogTool((service) => serviceLog(service, 100_000), TOOL_MS);

interface Run {
  pi: PiSession;
  /** When each request to the main model was made, ms (a compaction's summary request left out). */
  at: number[];
  /** Compaction summary requests. */
  summaries: number;
  wall: number;
}

/** Pi's summary request (its system message, here the first message, is the summarization prompt). */
const summarizing = (request: ProviderRequest) =>
  `${request.systemPrompt ?? ""}${JSON.stringify(request.messages[0] ?? "")}`.includes("You are a context summarization assistant");

async function run(guard: boolean): Promise<Run> {
  const at: number[] = [];
  let summaries = 0;
  const turns: (Call | string)[] = [...Array.from({ length: TURNS }, (_, k) => ({ tool: "dump_log", args: { service: `svc${k}` }, id: `d${k}` })), ANSWER];
  // One step for every request: Pi's summary request (when it compacts) gets the summary, the others the run's turns.
  const step = (request: ProviderRequest) => {
    if (summarizing(request)) {
      summaries++;
      return SUMMARY;
    }
    at.push(Date.now());
    return turns.shift() ?? ANSWER;
  };
  const pi = await startSession({
    contextWindow: 200_000,
    extensions: [dumpTool],
    classifier: slowJudge(JUDGE_MS, keepMatching(NEEDLE)),
    guardSettings: guard ? { midRun: false, waitForJudge: false } : { enabled: false },
    script: Array.from({ length: 2 * TURNS }, () => step),
  });
  const start = Date.now();
  await pi.prompt("Why did the workers stop? Dump every service's log, one a turn.");
  return { pi, at, summaries, wall: Date.now() - start };
}

const compactions = (pi: PiSession) => entriesOf(pi.branch(), "compaction");

test(`Pi ${piVersion}: before Pi compacts, the judge starts turns early; its edits land before the crossing and no turn waits`, {
  timeout: 120_000,
  // Pi 1.3.0's faux provider counts the prompt twice in its usage: once an edit is on the branch, Pi's own
  // estimate there jumps by the whole context at the next reply, not by a turn's output: a stand-in's
  // arithmetic, not a growth any judge could be early for.
  skip: piVersion === "1.3.0" ? "Pi 1.3.0's faux usage doubles the context (see the comment)" : false,
}, async () => {
  const off = await run(false);
  const on = await run(true);
  try {
    // Guard off: Pi compacts once, after output `crossing` (the eighth here; Pi 1.3.0's faux usage counts
    // the prompt twice, so there it may come a turn sooner).
    const offTypes = off.pi.branch().map((e: Loose) => (e.type === "message" ? e.message.role : e.type));
    assert.equal(compactions(off.pi).length, 1, offTypes.join(" "));
    assert.ok(off.summaries >= 1, `${off.summaries} summary requests`);
    const crossing = offTypes.slice(0, offTypes.indexOf("compaction")).filter((t: string) => t === "toolResult").length;
    assert.ok(crossing >= 7, offTypes.join(" "));

    // Guard on: no compaction, no summary request.
    assert.equal(compactions(on.pi).length, 0, "no compaction entry on the branch");
    assert.equal(on.summaries, 0);
    const branch = on.pi.branch();
    const records = guardRecords(branch).filter((r: Loose) => r.phase === "mid-run");
    assert.ok(records.length >= 1, "a checkpoint landed");
    // The first edit landed at the latest at the turn end Pi would have compacted after: before the next reply.
    const replies = branch.filter((e: Loose) => e.type === "message" && e.message.role === "assistant");
    const firstEdit = branch.findIndex((e: Loose) => e.type === "context_edit");
    const next = branch.indexOf(replies[crossing]);
    assert.ok(firstEdit > 0 && firstEdit < next, `the first edit at entry ${firstEdit}, reply ${crossing + 1} at ${next}`);
    // Its answers came later than planned: the record says by how many requests and milliseconds.
    const first = records[0];
    assert.ok(first.late && first.late.requests >= 1 && first.late.ms >= JUDGE_MS, `delay recorded: ${JSON.stringify(first.late)}`);
    // No turn waited for the judge: each request followed the previous one by the tool's time and little more.
    const gaps = on.at.slice(1).map((t, i) => t - on.at[i]);
    assert.ok(Math.max(...gaps) < TOOL_MS + JUDGE_MS / 2, `gaps between requests: ${gaps.join(", ")} ms`);
    assert.ok(on.wall <= off.wall * 1.1 + 300, `wall ${on.wall} ms against ${off.wall} ms with the guard off`);
    // Pi's estimate of the answer's request is under the threshold; the needles went to the model verbatim.
    const last = toolResults(on.pi.requests.at(-1)!.messages);
    const distilled = last.filter((r: Loose) => /^\[context-guard\]/.test(textOf(r)));
    assert.ok(distilled.length >= 3, `${distilled.length} outputs distilled in the answer's request`);
    for (const r of distilled) assert.ok(textOf(r).includes(NEEDLE), "the needle line is kept");
    assert.ok(on.pi.session.getContextUsage().tokens < 183_616, `${on.pi.session.getContextUsage().tokens} tokens`);

    // How early, for the notes: the turn the judge started at, the turn its edits landed at.
    const requestsBefore = (index: number) => branch.slice(0, index).filter((e: Loose) => e.type === "message" && e.message.role === "assistant").length;
    console.log(
      `# judged early: planned after turn ${requestsBefore(firstEdit) - first.late.requests}, landed after turn ${requestsBefore(firstEdit)} (${first.late.ms} ms later); guard off compacts after turn ${crossing}; wall ${on.wall} ms on, ${off.wall} ms off; largest gap between requests ${Math.max(...gaps)} ms`,
    );
    await on.pi.prompt("/guard details");
    const report = on.pi.notifications.at(-1)?.message ?? "";
    assert.match(
      report,
      /before Pi compacts: its estimate \d+\.\dk grows ~\d+\.\dk a turn and would pass threshold 183\.6k within \d+ turns, the judge's answers take \d+ turns?: judging began early/,
    );
    assertNoPassFailure(on.pi.notifications);
  } finally {
    await off.pi.dispose();
    await on.pi.dispose();
  }
});
