// Waiting for the cache to lapse (issue 20, "timing"; docs/GUARD.md "Waiting for the cache to lapse"),
// inside real Pi on the Anthropic loopback server: a session of six prompts (as the economy suite's) with pauses
// of 2, 10, 2, 10 and 2 minutes on the shifted clock the server and Pi share, with a judge that finds every
// old exchange unrelated. At a run end the money rule defers their omission (writing the context again
// costs more than they save); the first prompt after a 10-minute pause finds the 5-minute cache lapsed, and
// the omission goes in before that prompt's first request, at no rewrite; after a 2-minute pause it keeps
// waiting. With Pi's idle cache warming on, the cache counts as kept alive, and the omission keeps waiting.
import assert from "node:assert/strict";
import { test } from "node:test";
import { anthropicSession, startAnthropicServer } from "../harness/anthropic-server.ts";
import { answering } from "../harness/classifier.ts";
import { shiftedClock } from "../harness/clock.ts";
import { LONG_RUN_PI_SETTINGS, oracleClassifier, oracleLines, pausedSession, project, promptWithPauses, putNodeOnPath } from "../harness/long-run.ts";
import { type Loose, piVersion } from "../harness/pi.ts";
import { startSession } from "../harness/session.ts";

/** Sonnet 4.5 in Pi's catalog, dollars per million tokens. */
const PRICE = { input: 3, write: 3.75, write1h: 6, read: 0.3 };
const cost = (u: { read: number; written: number; written1h: number; uncached: number }) =>
  (u.read * PRICE.read + (u.written - u.written1h) * PRICE.write + u.written1h * PRICE.write1h + u.uncached * PRICE.input) / 1e6;

/** The oracle's judge for outputs; every old exchange unrelated (P 0.05, under the 0.2 threshold). */
function judge(p: ReturnType<typeof project>) {
  const oracle = oracleClassifier(oracleLines(p));
  const exchanges = answering((id) => (id.startsWith("exchange_") ? 0.05 : undefined));
  return async (request: Loose, signal: AbortSignal | undefined) => {
    const a = await oracle(request, signal);
    const b = await exchanges(request, signal);
    return { ...a, answers: { ...a.answers, ...b.answers } };
  };
}

interface Run {
  branch: Loose[];
  bodies: Loose[];
  usage: Loose[];
  /** Index of each prompt's first request. */
  firsts: number[];
  guardLine: string | undefined;
}

async function runSession(pauses: number[], cacheWarming: "off" | "idle"): Promise<Run> {
  putNodeOnPath();
  const p = project(pauses.length + 1);
  const prompts = pausedSession(p, pauses);
  const clock = shiftedClock();
  try {
    const server = await startAnthropicServer(
      prompts.flatMap((x) => x.steps),
      { clock },
    );
    const loopback = anthropicSession(server);
    const pi = await startSession({
      ...loopback.options,
      files: p.files,
      classifier: judge(p),
      // The exchanges' waiting alone: the outputs are distilled at each run end as before issue 26 (their own
      // waiting is tests/e2e/guard-wait.test.ts's).
      guardSettings: { runEndBreakEven: false },
      piSettings: { ...LONG_RUN_PI_SETTINGS, ...loopback.options.piSettings, cacheWarming },
    });
    try {
      await loopback.select(pi);
      const firsts = await promptWithPauses(pi, server, clock, prompts);
      await pi.prompt("/guard details");
      const guardLine = pi.notifications.map((n) => n.message).find((m) => m.includes("context-guard") && m.includes("break-even"));
      return { branch: pi.branch(), bodies: [...server.bodies], usage: [...server.usage], firsts, guardLine };
    } finally {
      await pi.dispose();
      await server.close();
      delete process.env.ANTHROPIC_API_KEY;
    }
  } finally {
    clock.restore();
  }
}

/** For each entry, the index of the prompt (0-based) it belongs to. */
function promptOf(branch: Loose[]): number[] {
  let k = -1;
  return branch.map((e) => {
    if (e.type === "message" && e.message.role === "user") k++;
    return k;
  });
}

const records = (branch: Loose[]) => branch.map((e, i) => ({ e, i })).filter(({ e }) => e.type === "custom" && e.customType === "context-guard");
const lapsedDecisions = (r: Loose) => ((r.data.breakEven ?? []) as Loose[]).filter((b) => (b.lapsedMs ?? 0) > 0);

/** Pauses ending in 2 minutes, and the same with the last one 10 minutes: the last run end before it defers. */
const SUITE = [2, 10, 2, 10, 2];
const LAST_LONG = [...SUITE.slice(0, -1), 10];

test(`Pi ${piVersion}: an exchange omission held back by the money rule goes in free after a 10-minute pause, not after a 2-minute one`, async () => {
  // The fifth run end defers an omission; the sixth prompt comes 2 minutes later.
  const short = await runSession(SUITE, "off");
  const deferredIn = (run: Run) =>
    records(run.branch)
      .filter(({ e }) => e.data.results.some((r: Loose) => r.kind === "exchange" && r.reason === "deferred"))
      .map(({ e, i }) => ({ k: promptOf(run.branch)[i], ids: e.data.results.filter((r: Loose) => r.reason === "deferred").map((r: Loose) => r.entryId) }));
  const waited = deferredIn(short).find((d) => d.k === 4);
  assert.ok(waited, `the fifth run end deferred an exchange omission (deferred at prompts ${deferredIn(short).map((d) => d.k + 1)})`);
  assert.equal(
    records(short.branch).filter(({ e }) => lapsedDecisions(e).length > 0).length,
    0,
    "nothing went in on a cold cache: no deferral preceded a 10-minute pause",
  );
  const rawText = (run: Run, id: string): string => {
    const content = run.branch.find((x: Loose) => x.id === id).message.content;
    return typeof content === "string" ? content : content[0].text;
  };
  const textOf = (run: Run, id: string) => JSON.stringify(rawText(run, id)).slice(1, -1);
  /** The start of the stub that omits exchange `id`, as it appears in a request's JSON. */
  const stubOf = (run: Run, id: string) =>
    JSON.stringify(`[context-guard] Omitted an earlier exchange judged unrelated to the current work: "${rawText(run, id).slice(0, 30)}`).slice(1, -1);
  const sixth = JSON.stringify(short.bodies[short.firsts[5]]);
  for (const id of waited.ids) assert.ok(sixth.includes(textOf(short, id)), "after 2 minutes the exchange is still in the sixth prompt's first request");
  for (const id of waited.ids) assert.ok(!sixth.includes(stubOf(short, id)), "and not its stub");

  // The same session with the last pause 10 minutes: the omission goes in before the sixth prompt's first request.
  const cold = await runSession(LAST_LONG, "off");
  const at = promptOf(cold.branch);
  const pauses = [0, ...LAST_LONG];
  assert.ok(
    deferredIn(cold).some((d) => d.k === 4),
    "the fifth run end deferred it here too",
  );
  // The opening passes: records whose decisions were weighed on a lapsed cache.
  const openings = records(cold.branch).filter(({ e }) => lapsedDecisions(e).length > 0);
  assert.ok(openings.length > 0, "an omission went in on a lapsed cache");
  for (const { e, i } of openings) {
    const k = at[i];
    assert.equal(pauses[k], 10, `prompt ${k + 1}'s opening pass follows a 10-minute pause, not ${pauses[k]}`);
    for (const b of lapsedDecisions(e)) {
      assert.ok(b.lapsedMs > 10 * 60_000 && b.lapsedMs < 11 * 60_000, `idle ${b.lapsedMs} ms`);
      assert.equal(b.rewriteChars, 0, "no rewrite counted on a cold cache");
      assert.equal(b.paidOff, true);
    }
    // Its edits sit right after the prompt's first reply, before any tool result of the prompt's run.
    const omitted = e.data.results.filter((r: Loose) => r.kind === "exchange" && r.outcome === "removed");
    assert.ok(omitted.length > 0, "it omitted exchanges");
    const first = cold.firsts[k];
    const body = JSON.stringify(cold.bodies[first]);
    const before = JSON.stringify(cold.bodies[first - 1]);
    for (const r of omitted) {
      const text = textOf(cold, r.entryId);
      assert.ok(before.includes(text), "the last request before the pause carried the exchange");
      assert.ok(!before.includes(stubOf(cold, r.entryId)), "and not its stub");
      assert.ok(body.includes(stubOf(cold, r.entryId)), `prompt ${k + 1}'s first request carries the stub instead`);
    }
    // Its replies and tool results are gone from that request: fewer messages than the one before the pause, plus the prompt.
    assert.ok(cold.bodies[first].messages.length < cold.bodies[first - 1].messages.length, "the exchange's messages are gone from the first request");
    // The first request after the pause read nothing from the lapsed cache: it wrote everything anyway.
    assert.equal(cold.usage[first].read, 0, "the cache had lapsed");
    // The next request reads what the first wrote: the edit is in Pi's projection, byte for byte.
    assert.ok(cold.usage[first + 1].read > 0, "the request after it reads the prefix the first wrote");
  }
  // After the 2-minute pauses, nothing went in at a prompt's start.
  for (const k of pauses.keys()) if (pauses[k] === 2) assert.ok(!openings.some(({ i }) => at[i] === k), `nothing at prompt ${k + 1}`);
  console.log(
    (cold.guardLine ?? "")
      .split("\n")
      .filter((l) => l.includes("break-even"))
      .join("\n"),
  );
  assert.match(
    cold.guardLine ?? "",
    /break-even: exchanges [\d.]+k saved: cache lapsed after 10 min idle, nothing written again for it; saves \$[\d.]+ over ~\d+ later requests \(anthropic\) → paid off/,
  );

  // Pi's idle cache warming on: Pi could keep the cache alive for 30 minutes, so the omission keeps waiting.
  const warm = await runSession(LAST_LONG, "idle");
  assert.equal(records(warm.branch).filter(({ e }) => lapsedDecisions(e).length > 0).length, 0, "no edit on a cache Pi may keep warm");
  assert.ok(
    records(warm.branch).some(({ e }) => e.data.results.some((r: Loose) => r.kind === "exchange" && r.reason === "deferred")),
    "the omission still waits",
  );
  // The same requests, with and without the edit: the request carrying it, and the one after it, cost no more.
  for (const { i } of openings) {
    const first = cold.firsts[at[i]];
    assert.equal(warm.firsts[at[i]], first);
    for (const n of [first, first + 1]) {
      const [withEdit, without] = [cost(cold.usage[n]), cost(warm.usage[n])];
      assert.ok(withEdit <= without, `request ${n + 1}: $${withEdit.toFixed(5)} with the edit, $${without.toFixed(5)} without`);
      console.log(
        `request ${n + 1} (prompt ${at[i] + 1}): $${withEdit.toFixed(5)} with the edit (written ${cold.usage[n].written}, read ${cold.usage[n].read}), $${without.toFixed(5)} without (written ${warm.usage[n].written}, read ${warm.usage[n].read})`,
      );
    }
  }
});
