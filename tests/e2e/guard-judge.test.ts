// A chat model as the judge inside real Pi (issue 13): `model` names Pi's
// `anthropic/claude-haiku-4-5`, Pi's own anthropic provider talks to the
// loopback Messages server (tests/harness/anthropic-server.ts), and the server
// plays the judge: it reads the state and the question ids from the prompt the
// core wrote and answers with scripted JSON. Shown here: the same probabilities
// distill exactly as the stand-in classifier's; malformed and refused replies
// keep everything; the judge's tokens and cost reach the record and `/guard`;
// and with the main model on the same loopback provider, the two kinds of
// requests stay apart (the judge's carry no cache marks).
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { test } from "node:test";
import { type ClassifyRequest, keepChunks } from "../harness/classifier.ts";
import { fixtureRepo } from "../harness/fixture-repo.ts";
import { anthropicSession, ANTHROPIC_MODEL, startAnthropicServer, type AnthropicServer } from "../harness/anthropic-server.ts";
import { assertKeptFor, assertNoPassFailure, guardRecords } from "../harness/guard-checks.ts";
import { entriesOf, textOf } from "../harness/inspect.ts";
import { piVersion, type Loose } from "../harness/pi.ts";
import { type PiSession, type SessionOptions, startSession, type Step } from "../harness/session.ts";

const JUDGE = "claude-haiku-4-5";
const judgeSettings = { model: `anthropic/${JUDGE}`, timeoutMs: 20_000 };

/** The run every test makes: a large search (in path order: ripgrep's own order varies) and a large read, then the answer. */
const script = (): Step[] => [
  { tool: "bash", args: { command: "rg -n --sort path status src/services" }, id: "grep1" },
  { tool: "read", args: { path: "src/lib/status.ts", offset: 3 }, id: "read1" },
  "The services at 3 mod 7 retry on 503; status codes 250-259 are in the table.",
];
const question = "Which services retry when the upstream answers 503?";

/** The chunks a test keeps: those holding a needed line (as the stand-in classifier decides). */
const needed = /=== 503|STATUS_CODE_25\d /;
const keptChunks = (state: Loose) =>
  Object.entries((state.chunks ?? {}) as Record<string, string>)
    .filter(([, text]) => needed.test(text))
    .map(([id]) => Number(id.replace("chunk_", "")));

/** Whether a body is a judge request: the core's system prompt (guard/judge.rs `SYSTEM`). */
const isJudge = (body: Loose) => JSON.stringify(body.system ?? "").includes("You are the judge of a context guard");

/** The judge's prompt of a body: the state and the ids it asks about. */
function promptOf(body: Loose): { state: Loose; ids: string[] } {
  const text = textOf(body.messages[0]);
  const state = JSON.parse(text.slice("state:\n".length, text.indexOf("\n\nquestions:\n")));
  const ids = /\nAnswer every id: (.*)\.\nReply with the JSON object only\.$/.exec(text)?.[1].split(", ") ?? [];
  return { state, ids };
}

/** The reply `keepChunks` would give as a classifier, in the judge's JSON (same probabilities). */
function replyLikeTheStandIn(body: Loose): string {
  const { state, ids } = promptOf(body);
  const kept = keptChunks(state);
  const answers: Record<string, unknown> = {};
  for (const id of ids) {
    if (id === "keep_whole") answers[id] = 0.05;
    else if (id === "focus") answers[id] = kept.length ? { choice: `chunk_${kept[0]}`, probability: 0.7 } : { choice: "none", probability: 0.8 };
    else if (/^chunk_\d+$/.test(id)) answers[id] = kept.includes(Number(id.slice(6))) ? 0.9 : 0.1;
    else answers[id] = 0.9;
  }
  return JSON.stringify({ answers });
}

/**
 * A loopback server whose judge requests are answered by `judge(body)` and whose other requests (a main
 * model on the same provider) take `main`'s steps in order. One step function for every request, so the
 * two never take each other's turn.
 */
async function judgeServer(judge: (body: Loose) => string, main: Step[] = []): Promise<AnthropicServer> {
  const steps = [...main];
  const step = (body: Loose) => {
    if (isJudge(body)) return judge(body);
    const next = steps.shift() ?? "done";
    return typeof next === "function" ? next(body) : next;
  };
  return startAnthropicServer(Array.from({ length: 200 }, () => step as Step));
}

/** A faux main model and the judge on the loopback server; the registry kept for the catalog's prices. */
async function judgeSession(server: AnthropicServer, options: SessionOptions = {}, withKey = true) {
  if (withKey) process.env.ANTHROPIC_API_KEY = "loopback-key";
  else delete process.env.ANTHROPIC_API_KEY;
  const loopback = anthropicSession(server);
  const pi = await startSession({
    ...loopback.options,
    files: fixtureRepo(),
    script: script(),
    guardSettings: judgeSettings,
    ...options,
    extensions: [...(loopback.options.extensions ?? []), ...(options.extensions ?? [])],
  });
  const { registry } = loopback;
  return { pi, loopback, registry, price: () => registry().find("anthropic", JUDGE).cost as { input: number; output: number } };
}

/** The raw outputs, then the edits of a session by tool call id, the entry id in the text made neutral (it differs between sessions). */
function editsByCall(pi: PiSession): Record<string, string> {
  const branch = pi.branch();
  const out: Record<string, string> = {};
  for (const e of branch) if (e.message?.role === "toolResult") out[`raw ${e.message.toolCallId}`] = textOf(e.message);
  for (const edit of entriesOf(branch, "context_edit")) {
    const target = branch.find((e: Loose) => e.id === edit.targetId);
    out[target.message.toolCallId] = textOf(edit.replacement).replaceAll(edit.targetId, "<entry>");
  }
  return out;
}

/** What the record says of each result, by tool call id (usage and timing left out: they differ by design). */
function resultsByCall(pi: PiSession): Record<string, unknown> {
  const branch = pi.branch();
  const [record] = guardRecords(branch);
  const out: Record<string, unknown> = {};
  for (const r of record.results) {
    const entry = branch.find((e: Loose) => e.id === r.entryId);
    assert.ok(r.beforeChars > r.afterChars && r.afterChars > 0, `${r.label}: ${r.beforeChars} → ${r.afterChars} chars`);
    out[entry.message.toolCallId] = [r.kind, r.outcome, r.reason, r.jev, r.beforeChars, r.afterChars];
  }
  return out;
}

test(`Pi ${piVersion}: a chat model judging with the stand-in's probabilities distills exactly as the stand-in`, async () => {
  const standIn = await startSession({ files: fixtureRepo(), script: script(), classifier: keepChunks((r: ClassifyRequest) => keptChunks(r.state)) });
  let expected: { edits: Record<string, string>; results: Record<string, unknown> };
  try {
    await standIn.prompt(question);
    expected = { edits: editsByCall(standIn), results: resultsByCall(standIn) };
    assert.deepEqual(Object.keys(expected.edits).sort(), ["grep1", "raw grep1", "raw read1", "read1"], "the stand-in distilled both outputs");
  } finally {
    await standIn.dispose();
  }

  const server = await judgeServer(replyLikeTheStandIn);
  const { pi, price } = await judgeSession(server);
  try {
    await pi.prompt(question);
    assert.equal(pi.classifierCalls.length, 0, "the stand-in classifier was not asked");
    const judged = server.bodies.filter(isJudge);
    assert.ok(judged.length >= 2, `the judge was asked (${judged.length} requests)`);
    assert.equal(judged.length, server.bodies.length, "every loopback request is the judge's (the main model is faux)");
    for (const body of judged) {
      assert.equal(body.model, JUDGE);
      assert.equal(body.messages.length, 1, "one user message: the core's prompt");
      assert.match(textOf(body.messages[0]), /^state:\n\{/);
      assert.doesNotMatch(JSON.stringify(body), /cache_control/, "cacheRetention none: no cache marks on a judge request");
    }
    assert.deepEqual(editsByCall(pi), expected.edits, "the same outputs, the same replacements");
    assert.deepEqual(resultsByCall(pi), expected.results, "the same results, reasons and traces");

    // The judge's usage from Pi: every input token the server reported, priced by Pi's catalog.
    const [record] = guardRecords(pi.branch());
    assert.equal(record.model, `anthropic/${JUDGE}`);
    assert.equal(record.requests, judged.length);
    const usage = server.usage.filter((u) => u.model === JUDGE);
    const tokens = usage.reduce((n, u) => n + u.uncached + u.read + u.written, 0);
    const cost = usage.reduce((n, u) => n + ((u.uncached + u.read + u.written) * price().input + u.output * price().output) / 1e6, 0);
    assert.ok(tokens > 0 && cost > 0, `tokens ${tokens}, cost ${cost}`);
    assert.equal(record.inputTokens, tokens);
    assert.ok(Math.abs(record.costUsd - cost) < 1e-12, `record ${record.costUsd} vs priced ${cost}`);

    // /guard shows it.
    await pi.prompt("/guard details");
    const shown = pi.notifications.at(-1)?.message ?? "";
    assert.match(
      shown,
      new RegExp(
        `the judge was asked at 1 run end and 0 mid-run checkpoints: ${judged.length} requests, [0-9.k]+ input tokens, \\$${cost.toFixed(4).replace(".", "\\.")}`,
      ),
      shown,
    );
    assert.match(shown, /anthropic\/claude-haiku-4-5/);
    assertNoPassFailure(pi.notifications);
  } finally {
    await pi.dispose();
    await server.close();
  }
});

const unreadable: [string, (body: Loose) => string][] = [
  ["a refusal", () => "I can't help with that."],
  ["a cut-off answer", (body) => replyLikeTheStandIn(body).slice(0, 40)],
  ["an answer in another shape", () => JSON.stringify({ result: { keep_whole: 0.1 } })],
];

for (const [name, reply] of unreadable) {
  test(`Pi ${piVersion}: ${name} from the judge keeps every output, its cost counted`, async () => {
    const server = await judgeServer(reply);
    const { pi } = await judgeSession(server);
    try {
      await pi.prompt(question);
      const judged = server.bodies.filter(isJudge);
      assert.ok(judged.length >= 2, "the judge was asked");
      const [record] = guardRecords(pi.branch());
      assertKeptFor(record, { reason: "no-answer", trace: "no-answer (keep_whole)", timedOut: false });
      assert.equal(entriesOf(pi.branch(), "context_edit").length, 0, "nothing edited");
      assert.equal(
        record.inputTokens,
        server.usage.reduce((n, u) => n + u.uncached + u.read + u.written, 0),
        "the tokens spent are counted",
      );
      assert.ok(record.costUsd > 0);
      assertNoPassFailure(pi.notifications);
    } finally {
      await pi.dispose();
      await server.close();
    }
  });
}

/**
 * The loopback server behind a proxy that holds each request `delayMs` (or forever) before passing it on:
 * a slow judge. It counts the requests in flight at once.
 */
async function slowJudge(server: AnthropicServer, delayMs: number | "never") {
  let inFlight = 0;
  let most = 0;
  const proxy = createServer((req, res) => {
    const body: Buffer[] = [];
    req.on("data", (c: Buffer) => body.push(c));
    req.on("end", async () => {
      most = Math.max(most, ++inFlight);
      res.on("close", () => inFlight--);
      if (delayMs === "never") return; // held until the client gives up
      await new Promise((r) => setTimeout(r, delayMs));
      const answer = await fetch(server.url + req.url, { method: "POST", headers: { "content-type": "application/json" }, body: Buffer.concat(body) });
      res.writeHead(answer.status, { "content-type": answer.headers.get("content-type") ?? "text/event-stream" });
      res.end(Buffer.from(await answer.arrayBuffer()));
    });
  });
  await new Promise<void>((resolve) => proxy.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
  return {
    /** The loopback server with its URL pointing at the proxy, for `anthropicSession`. */
    server: { ...server, url },
    most: () => most,
    inFlight: () => inFlight,
    close: () =>
      new Promise<void>((resolve) => {
        proxy.closeAllConnections();
        proxy.close(() => resolve());
      }),
  };
}

test(`Pi ${piVersion}: a slow judge runs at most \`concurrency\` requests at once, and one past \`timeoutMs\` keeps everything`, async () => {
  // The two large outputs' segments: more requests than the limit.
  const server = await judgeServer(replyLikeTheStandIn);
  const slow = await slowJudge(server, 150);
  const { pi } = await judgeSession(slow.server, { guardSettings: { ...judgeSettings, concurrency: 2 } });
  try {
    await pi.prompt(question);
    const judged = server.bodies.filter(isJudge);
    assert.ok(judged.length >= 3, `more requests than the limit: ${judged.length}`);
    assert.equal(slow.most(), 2, "never more than 2 judge requests in flight");
    assert.equal(entriesOf(pi.branch(), "context_edit").length, 2, "both outputs distilled");
  } finally {
    await pi.dispose();
    await slow.close();
    await server.close();
  }

  const silent = await judgeServer(replyLikeTheStandIn);
  const hung = await slowJudge(silent, "never");
  const timeoutMs = 800;
  const second = await judgeSession(hung.server, { guardSettings: { ...judgeSettings, timeoutMs } });
  try {
    const started = Date.now();
    await second.pi.prompt(question);
    const settled = Date.now() - started;
    assert.ok(settled < timeoutMs + 1_000, `settled after ${settled} ms (budget ${timeoutMs})`);
    const [record] = guardRecords(second.pi.branch());
    assertKeptFor(record, { reason: "timeout", trace: "timeout", timedOut: true });
    // The held requests were aborted at the deadline, not left open.
    await new Promise((r) => setTimeout(r, 200));
    assert.equal(hung.inFlight(), 0, "no judge request still open");
    assert.equal(entriesOf(second.pi.branch(), "context_edit").length, 0);
    assertNoPassFailure(second.pi.notifications);
  } finally {
    await second.pi.dispose();
    await hung.close();
    await silent.close();
  }
});

test(`Pi ${piVersion}: no request without the judge's credential, and the status names its provider`, async () => {
  const server = await judgeServer(replyLikeTheStandIn);
  const { pi } = await judgeSession(server, {}, false);
  try {
    await pi.prompt(question);
    assert.equal(server.bodies.length, 0, "no request reached the provider");
    assert.equal(pi.status("context-guard"), "🛡 no anthropic key");
    assert.equal(entriesOf(pi.branch(), "context_edit").length, 0);
  } finally {
    await pi.dispose();
    await server.close();
  }
});

test(`Pi ${piVersion}: the main model and the judge on the same loopback provider keep their requests apart`, async () => {
  const server = await judgeServer(replyLikeTheStandIn, [...script(), "Thanks, noted."]);
  // What the pin's two hooks see: the payloads of before_provider_request and the replies of message_end.
  const hooked: string[] = [];
  const ended: string[] = [];
  const recorder = (pi: Loose) => {
    pi.on("before_provider_request", (event: Loose) => void hooked.push(String(event.payload?.model)));
    pi.on("message_end", (event: Loose) => void (event.message?.role === "assistant" && ended.push(String(event.message.model))));
  };
  // A judge cheap enough to be worth asking after a three-request run of claude-sonnet-4-5 (the last test).
  const judge = "claude-haiku-5-5";
  // A run end that distils whatever the rewrite costs, so that the next main request carries the edit.
  const guardSettings = { ...judgeSettings, model: `anthropic/${judge}`, midRun: false, runEndBreakEven: false };
  const { pi, loopback } = await judgeSession(server, { guardSettings, extensions: [recorder] });
  try {
    await loopback.select(pi);
    await pi.prompt(question);
    await pi.prompt("Thanks.");
    const main = server.bodies.filter((b) => !isJudge(b));
    const judged = server.bodies.filter(isJudge);
    assert.equal(main.length, 4, "the main model's 3 + 1 requests, each with its own step");
    assert.ok(judged.length >= 2, "the judge was asked");
    for (const body of main) {
      assert.equal(body.model, ANTHROPIC_MODEL);
      assert.doesNotMatch(JSON.stringify(body), /You are the judge|Answer every id/, "no judge text in a main request");
    }
    for (const body of judged) {
      assert.equal(body.model, judge);
      // One user message, the core's prompt; Pi adds an empty mid-conversation system message for
      // models that take one (claude-haiku-5-5's `supportsMidConvoSystemMessages`), nothing else.
      const shape = body.messages.map((m: Loose) => (m.role === "user" ? "user" : `${m.role} ${JSON.stringify(m.content)}`));
      assert.deepEqual(
        shape.filter((s: string) => s !== "system []"),
        ["user"],
        JSON.stringify(shape),
      );
      // Neither Pi's breakpoints nor the pin's: the pin sees only the main model's payloads.
      assert.doesNotMatch(JSON.stringify(body), /cache_control/);
    }
    // The judge ran between the run's last main request and the next prompt's: the next request is distilled.
    const firstJudge = server.bodies.findIndex(isJudge);
    assert.equal(firstJudge, 3, "the judge's requests come after the run's three main requests");
    const last = main.at(-1);
    const results = last.messages.flatMap((m: Loose) => (Array.isArray(m.content) ? m.content : [])).filter((b: Loose) => b.type === "tool_result");
    assert.equal(results.length, 2);
    for (const r of results) assert.match(JSON.stringify(r.content), /\[context-guard\]/, "the next main request carries the distilled output");
    // The pin marked the main model's requests only (Pi's own marks are there too).
    assert.ok(main.every((b) => /cache_control/.test(JSON.stringify(b))));
    assert.equal(guardRecords(pi.branch())[0].requests, judged.length);
    // The pin never saw a judge request: neither to mark it nor to log its reply.
    assert.deepEqual(
      hooked,
      main.map(() => ANTHROPIC_MODEL),
    );
    assert.deepEqual(
      ended,
      main.map(() => ANTHROPIC_MODEL),
    );
    assertNoPassFailure(pi.notifications);
  } finally {
    await pi.dispose();
    await server.close();
  }
});

test(`Pi ${piVersion}: /guard model lists the models with a credential, classifiers first, and saves a choice`, async () => {
  const server = await judgeServer(replyLikeTheStandIn);
  // The stand-in classifier is the configured model; the anthropic provider has a credential.
  const { pi } = await judgeSession(server, { guardSettings: { timeoutMs: 20_000 } });
  const file = join(pi.agentDir, "context-guard.json");
  try {
    await pi.prompt("/guard model");
    const list = pi.notifications.at(-1)?.message ?? "";
    assert.match(
      list,
      /^context-guard: model fakejev\/jev-test\nclassifiers with a credential:\n {2}fakejev\/jev-test {2}\(current\)\nchat models with a credential \(the judge\), cheapest input first:\n/,
    );
    assert.match(list, /\n {2}anthropic\/claude-haiku-4-5 {2}\$\d+\.\d\d\/\$\d+\.\d\d per M tokens in\/out\n/);
    assert.match(list, /\n\/guard model <provider\/id> saves the choice\.$/);
    assert.equal(server.bodies.length, 0, "listing sends nothing");

    const before = readFileSync(file, "utf8");
    for (const [arg, says] of [
      ["nope", /"nope" is not a model as "provider\/id"; the settings file was not changed/],
      ["anthropic/no-such-model", /Pi knows no model anthropic\/no-such-model; nothing changed/],
    ] as const) {
      await pi.prompt(`/guard model ${arg}`);
      assert.match(pi.notifications.at(-1)?.message ?? "", says);
      assert.equal(readFileSync(file, "utf8"), before, "the file is unchanged");
    }

    await pi.prompt(`/guard model anthropic/${JUDGE}`);
    assert.match(pi.notifications.at(-1)?.message ?? "", new RegExp(`model anthropic/${JUDGE} \\(a chat model, the judge; saved to .*context-guard\\.json\\)`));
    assert.equal(JSON.parse(readFileSync(file, "utf8")).model, `anthropic/${JUDGE}`);
    // The next run is judged by it.
    await pi.prompt(question);
    assert.equal(pi.classifierCalls.length, 0);
    assert.ok(server.bodies.filter(isJudge).length >= 2, "the chat model judged the run");
    assert.equal(entriesOf(pi.branch(), "context_edit").length, 2);
    assertNoPassFailure(pi.notifications);
  } finally {
    await pi.dispose();
    await server.close();
  }
});

test(`Pi ${piVersion}: without the classifier's key, /guard suggests the cheapest model of the session's provider and switches nothing`, async () => {
  const server = await judgeServer(replyLikeTheStandIn, ["Hello."]);
  // No settings: the default classifier, whose provider (openrouter) has no key offline.
  const { pi, loopback, registry } = await judgeSession(server, { guardSettings: "{}" });
  try {
    await loopback.select(pi);
    const anthropic = (registry().getAvailable() as Loose[]).filter((m) => m.provider === "anthropic" && Number.isFinite(m.cost?.input));
    const cheapest = anthropic.reduce((a, b) => (b.cost.input < a.cost.input ? b : a));
    await pi.prompt("/guard details");
    const shown = pi.notifications.at(-1)?.message ?? "";
    assert.match(
      shown,
      new RegExp(`^context-guard: on, but idle: no openrouter key; try /guard model anthropic/${cheapest.id.replace(/\./g, "\\.")}\n`),
      shown,
    );
    assert.match(shown, /\n {2}model: openrouter\/~typesafe\/jev-latest\n/, "the model is unchanged");
    await pi.prompt("Hi.");
    assert.equal(server.bodies.filter(isJudge).length, 0, "no judge was asked");
  } finally {
    await pi.dispose();
    await server.close();
  }
});

test(`Pi ${piVersion}: a judge that costs more than its edits can save is not asked; a cheap one is`, async () => {
  // The main model on the loopback provider (claude-sonnet-4-5, cache read $0.30/M in Pi's catalog), three
  // requests in the run: the edits save at most judged/4 tokens × $0.30/M × 3 requests. claude-fable-5 reads
  // at $10/M: judging costs at least judged/4 tokens × $10/M, so it is never worth it. claude-haiku-5-5 at
  // $0.10/M is (guard/pass/plan.rs `weigh_judge`).
  for (const [judge, asked] of [
    ["claude-fable-5", false],
    ["claude-haiku-5-5", true],
  ] as const) {
    const server = await judgeServer(replyLikeTheStandIn, script());
    // The judge's own weighing alone: with `runEndBreakEven` on, the money rule also counts the judge's
    // cost and makes the outputs wait (tests/e2e/guard-wait.test.ts).
    const guardSettings = { ...judgeSettings, model: `anthropic/${judge}`, midRun: false, runEndBreakEven: false };
    const { pi, loopback, registry } = await judgeSession(server, { guardSettings });
    try {
      await loopback.select(pi);
      const cost = (id: string) => registry().find("anthropic", id).cost as { input: number; cacheRead: number };
      const saving = cost(ANTHROPIC_MODEL).cacheRead * 3;
      assert.equal(cost(judge).input > saving, !asked, `${judge} at $${cost(judge).input}/M against $${saving}/M saved`);
      await pi.prompt(question);
      const main = server.bodies.filter((b) => !isJudge(b));
      const judged = server.bodies.filter(isJudge);
      assert.equal(main.length, 3, "the run's three main requests");
      const edits = entriesOf(pi.branch(), "context_edit").length;
      if (asked) {
        assert.ok(judged.length >= 2, `${judge} was asked (${judged.length} requests)`);
        assert.ok(judged.every((b) => b.model === judge));
        assert.equal(edits, 2, "both outputs distilled");
      } else {
        // Not for want of a model or a credential: the judge was found and weighed.
        assert.doesNotMatch(pi.status("context-guard") ?? "", /not found|no anthropic key/);
        assert.equal(judged.length, 0, `no request to ${judge}`);
        assert.equal(edits, 0, "nothing edited");
        assert.equal(guardRecords(pi.branch()).length, 0, "a skipped pass appends no record");
      }
      // /guard shows the skip with its figures: at least judged/4 × $10/M against at most judged/4 × $0.90/M,
      // so the cost is at least 10/0.9 times the saving (the system prompts add to it).
      await pi.prompt("/guard details");
      const shown = pi.notifications.at(-1)?.message ?? "";
      const line = /last run end skipped \(3 requests so far\): judge not worth it, at least \$(\d+\.\d{4}) of judging > at most \$(\d+\.\d{4}) saved/.exec(
        shown,
      );
      assert.equal(Boolean(line), !asked, shown);
      if (line) {
        const [judging, saved] = [Number(line[1]), Number(line[2])];
        assert.ok(saved > 0 && judging >= (saved * cost(judge).input) / saving - 0.0001, `$${judging} against $${saved}`);
      }
      assertNoPassFailure(pi.notifications);
    } finally {
      await pi.dispose();
      await server.close();
    }
  }
});
