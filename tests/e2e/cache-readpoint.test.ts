// The read point and the write anchor inside real Pi (docs/GUARD.md "The
// cache pin (Anthropic)", issue 10 part 3). A first prompt runs 14 sequential
// tool calls against the loopback Anthropic server, whose cache counts
// breakpoints, the 20-block lookback and TTLs as Anthropic documents; the
// guard distills one large output at its end. The first request of the next
// prompt is the first after that edit: every test reads what the server
// received and what its cache read.
//
// Messages of that request: 0 the first prompt, call i's tool_use at 2i+1 and
// its result at 2i+2, 29 the first answer, 30 the second prompt. Pi's own
// breakpoint on message 30 looks back 20 blocks, to message 10 at most, so
// without a read point nothing between the question and the edit is read.
//
// The cache clock is manual, and Date.now (which the pin's log reads) follows
// it while a test runs, so a TTL passes without waiting.
import assert from "node:assert/strict";
import { afterEach, test } from "node:test";
import { ANTHROPIC_MODEL, anthropicSession, breakpointsOf, manualClock, promptBlocks, startAnthropicServer } from "../harness/anthropic-server.ts";
import { keepMatching } from "../harness/classifier.ts";
import { guardRecords } from "../harness/guard-checks.ts";
import type { Loose } from "../harness/pi.ts";
import { type Step, startSession } from "../harness/session.ts";

const CALLS = 14;
const realNow = Date.now;
afterEach(() => {
  Date.now = realNow;
});

/** Tokens the server counts for the prefix that ends with message `m`'s last block. */
function tokensThrough(body: Loose, m: number): number {
  const blocks = promptBlocks(body);
  const before = (body.tools?.length ?? 0) + (Array.isArray(body.system) ? body.system.length : 1);
  const upTo = before + body.messages.slice(0, m + 1).reduce((n: number, x: Loose) => n + (typeof x.content === "string" ? 1 : x.content.length), 0);
  return blocks.slice(0, upTo).reduce((n, b) => n + b.tokens, 0);
}

interface Case {
  /** The call whose output is large (and distilled at the first run's end). */
  large: number;
  pin?: boolean;
  /** Minutes on the cache clock between the two prompts. */
  idleMinutes?: number;
  /** Switch the session to this Anthropic model between the prompts. */
  switchTo?: string;
}

async function twoPrompts(c: Case) {
  const files: Record<string, string> = {};
  const script: Step[] = [];
  for (let i = 0; i < CALLS; i++) {
    const lines = i === c.large ? 300 : 30;
    files[`logs/part${i}.txt`] =
      Array.from({ length: lines }, (_, k) => `part ${i} line ${k}: ${k % 37 === 5 ? "KEEP this failure" : "ok, nothing to see here"}`).join("\n") + "\n";
    script.push({ tool: "bash", args: { command: `cat logs/part${i}.txt` } });
  }
  script.push("Read all parts.", "Summary: the failures are the KEEP lines.");
  const clock = manualClock(1_000_000);
  const base = realNow();
  Date.now = () => base + clock.now();
  const server = await startAnthropicServer(script, { clock });
  const loopback = anthropicSession(server);
  const pi = await startSession({
    ...loopback.options,
    files,
    classifier: keepMatching("KEEP"),
    // The edit under test is the first run's end: no checkpoint during it.
    // The pin's read points after an edit, whatever the edit costs: the run end distils without the money rule.
    guardSettings: { pinAnthropicCache: c.pin ?? true, midRun: false, runEndBreakEven: false },
  });
  try {
    await loopback.select(pi);
    await pi.prompt("Read every log part, one call each.");
    const records = guardRecords(pi.branch());
    const distilled = records.flatMap((r) => r.results).filter((x: Loose) => x.outcome === "distilled");
    assert.equal(distilled.length, 1, `one output distilled: ${JSON.stringify(records)}`);
    assert.match(distilled[0].label, new RegExp(`part${c.large}\\.txt`));
    if (c.idleMinutes) clock.advance(c.idleMinutes * 60_000);
    if (c.switchTo) await pi.session.setModel(loopback.registry().find("anthropic", c.switchTo));
    await pi.prompt("Summarize.");
    assert.equal(server.bodies.length, CALLS + 2);
    for (const u of server.usage) assert.equal(u.rejected, undefined, "Anthropic would accept every body");
    await pi.prompt("/guard details");
    const guard =
      pi.notifications
        .map((n) => n.message)
        .filter((m) => m.startsWith("context-guard: on"))
        .at(-1) ?? "";
    return { body: server.bodies[CALLS + 1], usage: server.usage[CALLS + 1], guard };
  } finally {
    await pi.dispose();
    await server.close();
  }
}

test("after an edit the next request reads from the read point: the latest entry written before the edit", async () => {
  const on = await twoPrompts({ large: 3 });
  // Read point (call 2's result, message 6) and write anchor (the distilled call 3's result, message 8);
  // Pi's 3 and these with the question would be 6, so the system breakpoint makes room for one and the
  // question, whose prefix the read point's entry holds, stays out.
  assert.deepEqual(breakpointsOf(on.body), ["tools[4]", "messages[6][0]", "messages[8][0]", "messages[30][0]"]);
  assert.equal(on.usage.read, tokensThrough(on.body, 6), "read through the read point");
  const off = await twoPrompts({ large: 3, pin: false });
  assert.deepEqual(breakpointsOf(off.body), ["tools[4]", "system[0]", "messages[30][0]"]);
  assert.ok(off.usage.read < tokensThrough(off.body, 0), `without the pin only tools and system are read: ${off.usage.read}`);
  assert.ok(on.usage.written < off.usage.written, `the pin writes less again: ${on.usage.written} < ${off.usage.written}`);
  assert.match(on.guard, /\n {2}cache pin: on; last request: read point \+ write anchor \(system breakpoint dropped\)\n/);
  assert.match(off.guard, /\n {2}cache pin: off \(pinAnthropicCache false\)\n/);
});

test("a read point past its TTL is not used: the write anchor takes its place", async () => {
  const { body, usage } = await twoPrompts({ large: 3, idleMinutes: 6 });
  assert.deepEqual(breakpointsOf(body), ["tools[4]", "messages[0][0]", "messages[8][0]", "messages[30][0]"]);
  assert.equal(usage.read, 0, "every entry expired after 5 minutes");
});

test("an edit before every logged entry leaves the question and the write anchor", async () => {
  const { body, usage } = await twoPrompts({ large: 0 });
  // The first output changed: no tool result before it holds an entry; the anchor ends its batch.
  assert.deepEqual(breakpointsOf(body), ["tools[4]", "messages[0][0]", "messages[2][0]", "messages[30][0]"]);
  assert.equal(usage.read, tokensThrough(body, 0), "the question's entry is read");
});

test("after a model switch only the question is pinned: another model's entries are not this model's", async () => {
  const { body, usage, guard } = await twoPrompts({ large: 3, switchTo: "claude-haiku-4-5" });
  assert.equal(body.model, "claude-haiku-4-5");
  assert.notEqual(body.model, ANTHROPIC_MODEL);
  assert.deepEqual(breakpointsOf(body), ["tools[4]", "system[0]", "messages[0][0]", "messages[30][0]"]);
  assert.equal(usage.read, 0, "the new model has no entries at the server");
  assert.match(guard, /\n {2}cache pin: on; last request: question\n/);
});
