// The money rule and the room trigger inside real Pi (issue 20 part 6), on
// each provider through Pi's own provider and its loopback server (the cache
// counted as the provider documents it, prices from Pi's catalog):
//
// - the room trigger: with a small batch the first checkpoint is reached
//   early in the long run, where its rewrite cannot pay off over the few
//   requests so far; past `midRunRoomTokens` it fires anyway (its record says
//   `room`), and the next request is smaller than the same request of the same
//   run with the trigger off, whose `/guard` says its decisions in dollars;
// - the 5-request run (one bug) has no checkpoint at the defaults and costs
//   what it costs with the guard off, request by request.
import assert from "node:assert/strict";
import { test } from "node:test";
import { type AnthropicServer, anthropicSession, startAnthropicServer } from "../harness/anthropic-server.ts";
import { assertNoPassFailure } from "../harness/guard-checks.ts";
import { longRunScript, project, shortRunScript, startLongRun } from "../harness/long-run.ts";
import { openAiSession, startOpenAiServer } from "../harness/openai-server.ts";
import { type Loose, piVersion } from "../harness/pi.ts";

type Provider = "anthropic" | "openai";
type Server = Pick<AnthropicServer, "bodies" | "usage" | "close">;

interface Run {
  bodies: number[];
  usage: { read: number; written: number; uncached: number }[];
  records: Loose[];
  /** Per mid-run record, the requests made before it (its turn). */
  checkpointTurns: number[];
  guardText: string;
}

async function runOn(provider: Provider, bugs: number, settings: Record<string, unknown>): Promise<Run> {
  const p = project(bugs);
  const short = bugs === 1;
  const script = short ? shortRunScript(p) : longRunScript(p);
  const server: Server = provider === "anthropic" ? await startAnthropicServer(script) : await startOpenAiServer(script);
  const loopback = provider === "anthropic" ? anthropicSession(server as AnthropicServer) : openAiSession(server as never);
  const { pi, prompt } = await startLongRun({ short, bugs, guardSettings: settings, ...loopback.options });
  try {
    await loopback.select(pi);
    assert.ok(pi.session.model?.cost?.cacheRead > 0, `${provider}: the session's model has a cache price in Pi's catalog`);
    await pi.prompt(prompt);
    assertNoPassFailure(pi.notifications);
    await pi.prompt("/guard details");
    const records = pi
      .branch()
      .filter((e: Loose) => e.type === "custom" && e.customType === "context-guard")
      .map((e: Loose) => e.data);
    let turns = 0;
    const checkpointTurns: number[] = [];
    for (const e of pi.branch()) {
      if (e.type === "message" && e.message.role === "assistant") turns++;
      if (e.type === "custom" && e.customType === "context-guard" && e.data?.phase === "mid-run") checkpointTurns.push(turns);
    }
    return {
      bodies: server.bodies.map((b) => JSON.stringify(b).length),
      usage: server.usage.map((u) => ({ read: u.read, written: u.written, uncached: u.uncached })),
      records,
      checkpointTurns,
      guardText: pi.notifications.at(-1)?.message ?? "",
    };
  } finally {
    await pi.dispose();
    await server.close();
    delete process.env.ANTHROPIC_API_KEY;
    delete process.env.OPENAI_API_KEY;
  }
}

/** The request (1-based) after which each mid-run record was appended, with the record. */
function checkpointsOf(run: Run): Loose[] {
  return run.records.filter((r) => r.phase === "mid-run");
}

// A batch of 20,000 characters is reached at the second turn: 2 later requests cannot repay a rewrite.
const EARLY = { midRunBatchChars: 20_000, midRunRoomTokens: 4_000, midRunRoomMinTokens: 2_000 };

for (const provider of ["anthropic", "openai"] as Provider[]) {
  test(`Pi ${piVersion}, ${provider}: past midRunRoomTokens a checkpoint fires without the money rule, and the next request is smaller`, async () => {
    const withRoom = await runOn(provider, 10, EARLY);
    const without = await runOn(provider, 10, { ...EARLY, midRunRoomTokens: 0 });
    const roomy = checkpointsOf(withRoom).filter((r) => (r.breakEven ?? []).some((b: Loose) => b.room === true));
    assert.ok(roomy.length > 0, `a checkpoint let through by the room trigger: ${JSON.stringify(checkpointsOf(withRoom).map((r) => r.breakEven))}`);
    const decision = roomy[0].breakEven.find((b: Loose) => b.room);
    assert.ok(decision.gainMicros < decision.costMicros, `the money rule alone would have said no: ${JSON.stringify(decision)}`);
    assert.ok(decision.expectedChars / 4 >= EARLY.midRunRoomMinTokens);
    // The same run with the trigger off: the first checkpoint of the room run is not there.
    const first = checkpointsOf(withRoom)[0];
    assert.ok(
      !checkpointsOf(without).some((r) => JSON.stringify(r.results) === JSON.stringify(first.results)),
      "with the trigger off that checkpoint does not fire",
    );
    // /guard says the decisions in dollars (the catalog has prices).
    assert.match(
      without.guardText,
      /break-even: checkpoint [\d.]+k? pending, [\d.]+k? expected to go: saves \$[\d.]+ over ~\d+ later requests [≥<] \$[\d.]+ to write [\d.]+k? tokens again/,
    );
    // The request after the room checkpoint, against the same request without it.
    const after = withRoom.bodies.findIndex((_, i) => i > 0 && withRoom.bodies[i] < without.bodies[i]);
    assert.ok(after > 0, `a later request is smaller with the room trigger: ${withRoom.bodies.slice(0, 8)} vs ${without.bodies.slice(0, 8)}`);
    assert.equal(withRoom.bodies.length, without.bodies.length, "the same run, request for request");
  });

  test(`Pi ${piVersion}, ${provider}: the 5-request run has no checkpoint and costs what guard off costs`, async () => {
    const on = await runOn(provider, 1, {});
    const off = await runOn(provider, 1, { enabled: false });
    assert.equal(on.bodies.length, 5);
    assert.deepEqual(checkpointsOf(on), [], "no checkpoint");
    assert.deepEqual(on.usage, off.usage, "every request read, wrote and sent uncached exactly the same tokens");
  });
}

// The pin's write anchor (docs/GUARD.md "The cache pin"): each checkpoint edits the outputs since the last
// one, and the request after it reads up to the last one's anchor, not only up to the question.
test(`Pi ${piVersion}, anthropic: each checkpoint's next request reads up to where the one before left its anchor`, async () => {
  const run = await runOn("anthropic", 10, {});
  const after = run.checkpointTurns.map((t) => run.usage[t]);
  assert.ok(after.length >= 3, `checkpoints at turns ${run.checkpointTurns}`);
  for (let k = 1; k < after.length; k++) {
    assert.ok(after[k].read > after[k - 1].read, `checkpoint ${k + 1} (turn ${run.checkpointTurns[k]}) reads past the one before: ${after.map((u) => u.read)}`);
  }
  // And writes again only what follows its own first edit: less than half of what it reads.
  for (const u of after.slice(1)) assert.ok(u.written < u.read / 2, `written ${u.written} against read ${u.read}`);
});
