// Every edit through the money rule (issue 26; docs/GUARD.md "When an edit pays off"), inside real Pi on
// the Anthropic loopback server (Anthropic's prompt cache, Sonnet 4.5's catalog prices): a run that reads
// five handlers (~60 KB), then short follow-up questions. With a judge that keeps 65% of what it reads, the
// run end's edits could not pay: they wait (`deferred` in the record), every request carries the outputs
// whole, and the run costs what guard off costs. After a 10-minute pause the cache has lapsed: the outputs
// that waited go in before the next prompt's first request, at no rewrite. With the oracle's judge (keeps
// what the work needs) the same run end's edits pay off at once.
import assert from "node:assert/strict";
import { test } from "node:test";
import { anthropicSession, type RequestUsage, startAnthropicServer } from "../harness/anthropic-server.ts";
import type { Behaviour } from "../harness/classifier.ts";
import { shiftedClock } from "../harness/clock.ts";
import { keepingClassifier, LONG_RUN_PI_SETTINGS, oracleClassifier, putNodeOnPath } from "../harness/long-run.ts";
import { type Loose, piVersion } from "../harness/pi.ts";
import { followUps, SEARCH_PROMPT, searchOracle, searchProject, searchScript } from "../harness/search-run.ts";
import { startSession } from "../harness/session.ts";

/** Sonnet 4.5 in Pi's catalog, dollars per million tokens. */
const PRICE = { input: 3, write: 3.75, read: 0.3 };
const cost = (u: RequestUsage) => (u.read * PRICE.read + u.written * PRICE.write + u.uncached * PRICE.input) / 1e6;

interface Run {
  branch: Loose[];
  usage: RequestUsage[];
  bodies: Loose[];
  guard: string;
  status: string | undefined;
}

/** The audit of 5 handlers, then `asked` follow-ups after `pauseMinutes` each, then `/guard`. */
async function run(settings: Record<string, unknown>, judge: "keeps 65%" | "oracle", asked: number, pauseMinutes: number): Promise<Run> {
  putNodeOnPath();
  const p = searchProject(5);
  const questions = followUps(p, asked);
  const classifier: Behaviour = judge === "oracle" ? oracleClassifier(searchOracle(p)) : keepingClassifier(searchOracle(p), 0.65);
  const clock = shiftedClock();
  try {
    const server = await startAnthropicServer([...searchScript(p), ...questions.flatMap((q) => q.steps)], { clock });
    const loopback = anthropicSession(server);
    const pi = await startSession({
      ...loopback.options,
      files: p.files,
      classifier,
      guardSettings: settings,
      piSettings: { ...LONG_RUN_PI_SETTINGS, ...loopback.options.piSettings },
    });
    try {
      await loopback.select(pi);
      await pi.prompt(SEARCH_PROMPT);
      for (const q of questions) {
        clock.advance(pauseMinutes * 60_000);
        await pi.prompt(q.text);
      }
      await pi.prompt("/guard details");
      const guard = pi.notifications.map((n) => n.message).findLast((m) => m.includes("context-guard:")) ?? "";
      return { branch: pi.branch(), usage: [...server.usage], bodies: [...server.bodies], guard, status: pi.status("context-guard") };
    } finally {
      await pi.dispose();
      await server.close();
      delete process.env.ANTHROPIC_API_KEY;
    }
  } finally {
    clock.restore();
  }
}

const records = (branch: Loose[]) => branch.filter((e) => e.type === "custom" && e.customType === "context-guard").map((e) => e.data);
const edits = (branch: Loose[]) => branch.filter((e) => e.type === "context_edit");
const total = (r: Run) => r.usage.reduce((n, u) => n + cost(u), 0);
const readTexts = (branch: Loose[]) =>
  branch
    .filter((e) => e.type === "message" && e.message.role === "toolResult" && e.message.toolName === "read")
    .map((e) => e.message.content[0].text as string);

test(`Pi ${piVersion}: with a judge that keeps 65%, a short follow-up costs what guard off costs; the outputs wait, then go in free on a lapsed cache`, async () => {
  const off = await run({ enabled: false }, "keeps 65%", 1, 0);
  const on = await run({}, "keeps 65%", 1, 0);
  assert.equal(on.usage.length, off.usage.length, "the same requests");
  assert.equal(edits(on.branch).length, 0, "nothing edited: no edit pays off before a short follow-up");
  const runEnd = records(on.branch)[0];
  assert.equal(runEnd.phase, "run-end");
  const large = runEnd.results.filter((r: Loose) => r.kind === "large");
  assert.ok(large.length >= 5, `the reads were judged: ${JSON.stringify(runEnd.results.map((r: Loose) => r.reason))}`);
  // Each kept whole: waiting for its edit to pay, or not worth one at all (the judge kept nearly all of it).
  for (const r of large) {
    assert.ok(["deferred", "not-worth"].includes(r.reason), r.reason);
    assert.equal(r.afterChars, r.beforeChars, "kept whole");
  }
  const waiting = large.filter((r: Loose) => r.reason === "deferred");
  assert.ok(waiting.length >= 2, "some reads wait");
  for (const r of waiting) assert.ok(r.judgedChars > 0 && r.judgedChars < r.beforeChars, "what the judge would have left, to learn from");
  const decision = runEnd.breakEven.find((b: Loose) => b.rule === "outputs");
  assert.equal(decision.paidOff, false);
  assert.ok(decision.costMicros > decision.gainMicros, JSON.stringify(decision));
  assert.equal(decision.later, 1, "at the end of the run that read them, only the next request counts");
  // Every request carried every read whole, and cost exactly what it cost with the guard off.
  for (const text of readTexts(on.branch))
    assert.ok(JSON.stringify(on.bodies.at(-1)).includes(JSON.stringify(text).slice(1, 2_000)), "the last request carries each read");
  assert.equal(total(on).toFixed(6), total(off).toFixed(6), "guard on costs exactly guard off");
  assert.match(
    on.guard,
    /break-even: outputs [\d.]+k saved, [\d.]+k expected to go: saves \$[\d.]+ over ~\d+ later requests < \$[\d.]+ to write [\d.]+k tokens again \(anthropic, [^)]+\) → deferred/,
  );

  // Two follow-ups, 10 minutes apart: the 5-minute cache lapses, and the outputs that waited go in before the
  // first follow-up's first request, which writes the whole context anyway.
  const cold = await run({}, "keeps 65%", 2, 10);
  const lapsed = records(cold.branch).filter((r) => (r.breakEven ?? []).some((b: Loose) => b.rule === "outputs" && b.lapsedMs > 10 * 60_000));
  assert.equal(lapsed.length, 1, `one opening pass took them: ${JSON.stringify(records(cold.branch).map((r) => r.breakEven))}`);
  const went = lapsed[0].results.filter((r: Loose) => r.kind === "large" && r.outcome === "distilled");
  assert.ok(went.length >= 2, "the reads that waited are distilled");
  for (const b of lapsed[0].breakEven.filter((b: Loose) => b.rule === "outputs")) assert.equal(b.rewriteChars, 0, "no rewrite counted on a cold cache");
  const coldOff = await run({ enabled: false }, "keeps 65%", 2, 10);
  assert.ok(total(cold) <= total(coldOff), `$${total(cold).toFixed(5)} with the guard against $${total(coldOff).toFixed(5)} without`);
  // Each distilled read points to its whole output (`recall`, byte for byte: tests/e2e/guard-recall.test.ts).
  for (const e of edits(cold.branch)) assert.match(JSON.stringify(e), /recall\(\{\\"entryId\\":\\"/);
});

test(`Pi ${piVersion}: with a judge that keeps what the work needs, the run end's edits pay off at once`, async () => {
  const off = await run({ enabled: false }, "oracle", 1, 0);
  const on = await run({}, "oracle", 1, 0);
  const runEnd = records(on.branch)[0];
  const decision = runEnd.breakEven.find((b: Loose) => b.rule === "outputs");
  assert.equal(decision.paidOff, true, JSON.stringify(decision));
  assert.ok(decision.gainMicros >= decision.costMicros);
  assert.ok(edits(on.branch).length >= 5, "the reads are distilled at the run end");
  assert.ok(total(on) < total(off), `$${total(on).toFixed(5)} with the guard against $${total(off).toFixed(5)} without`);
  // The status bar says its units: tokens kept out, and where the bill has prices, the dollars (issue 28).
  assert.match(on.status ?? "", /^🛡 −[\d.]+k tok · saved (\$\d+\.\d\d|<\$0\.01)$/);
  // /guard's first line answers "does it save me money?" with the same figure.
  const short = /saved (\$\d+\.\d\d|<\$0\.01)$/.exec(on.status ?? "")?.[0];
  assert.ok(on.guard.startsWith(`context-guard: on — ${short} on this session's bill so far (est.)\n`), on.guard.split("\n")[0]);
  assert.ok(on.guard.includes(`[${on.status}]`), "its status in brackets is the status bar's, dollars and all");
  // Off, the rule is not weighed: the same edits, and no outputs decision in the record.
  const ungated = await run({ runEndBreakEven: false }, "oracle", 1, 0);
  assert.equal(edits(ungated.branch).length, edits(on.branch).length);
  assert.ok(!(records(ungated.branch)[0].breakEven ?? []).some((b: Loose) => b.rule === "outputs"));
});
