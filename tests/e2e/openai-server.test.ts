// The loopback OpenAI server (tests/harness/openai-server.ts) with real Pi:
// Pi's own `openai` provider (gpt-4.1, the Responses API, the official SDK)
// pointed at it, a scripted run with real `read` and `bash` calls, and the
// prompt cache it reports checked against an independent count. Then the
// server alone: its cache rules on hand-built bodies, and the errors it
// answers a body OpenAI would reject with.
import assert from "node:assert/strict";
import { test } from "node:test";
import {
  IDLE_TTL_MS,
  INCREMENT_TOKENS,
  MINIMUM_TOKENS,
  manualClock,
  OPENAI_MODEL,
  type OpenAiServer,
  openAiSession,
  promptText,
  startOpenAiServer,
  tokensOf,
} from "../harness/openai-server.ts";
import type { Loose } from "../harness/pi.ts";
import { startSession } from "../harness/session.ts";

/** 8,000 characters: 100 lines of 80, every 13th marked KEEP (the last is line 091). */
const BIG =
  Array.from({ length: 100 }, (_, i) => {
    const n = String(i + 1).padStart(3, "0");
    const head = `line ${n} ${(i + 1) % 13 === 0 ? "KEEP" : "ok  "}: `;
    return head + "abcdefghijklmnopqrstuvwxyz0123456789".repeat(3).slice(0, 79 - head.length);
  }).join("\n") + "\n";

/**
 * The cache read the server must report for request `i`, counted without its
 * hash chain: the longest common prefix with any earlier live request (from
 * `from` on), in whole tokens, at most each prompt's tokens minus one, rounded
 * down to 1,024 + k·128 (0 below 1,024).
 */
function expectedRead(texts: string[], i: number, from: number): number {
  const limit = (t: string) => Math.min(Math.floor(t.length / 4), tokensOf(t) - 1);
  let best = 0;
  for (let j = from; j < i; j++) {
    const [a, b] = [texts[i], texts[j]];
    let common = 0;
    while (common < a.length && common < b.length && a[common] === b[common]) common++;
    const tokens = Math.min(Math.floor(common / 4), limit(a), limit(b));
    if (tokens >= MINIMUM_TOKENS) best = Math.max(best, tokens - ((tokens - MINIMUM_TOKENS) % INCREMENT_TOKENS));
  }
  return best;
}

const items = (body: Loose, type: string): Loose[] => (body.input as Loose[]).filter((x) => x.type === type);

test("Pi's openai provider runs a scripted run on the loopback Responses API and records the cache it reports", async () => {
  const clock = manualClock(0);
  const server = await startOpenAiServer(
    [
      { tool: "read", args: { path: "notes/big.txt" } },
      { say: "Finding the last KEEP line.", calls: [{ tool: "bash", args: { command: "grep -n KEEP notes/big.txt | tail -1" } }] },
      "The last KEEP line is line 091.",
      "Nothing else.",
      "Still nothing.",
    ],
    { clock },
  );
  const loopback = openAiSession(server);
  const pi = await startSession({ ...loopback.options, files: { "notes/big.txt": BIG } });
  try {
    await loopback.select(pi);
    await pi.prompt("Read notes/big.txt and tell me its last KEEP line.");
    assert.equal(server.bodies.length, 3, "read, bash, answer");
    clock.advance(IDLE_TTL_MS - 1_000);
    await pi.prompt("Anything else?");
    // Request 4 refreshed the entries; a full TTL after it they have lapsed.
    clock.advance(IDLE_TTL_MS);
    await pi.prompt("And now?");
    assert.equal(server.bodies.length, 5);
    assert.equal(server.pendingSteps(), 0);
    for (const u of server.usage) assert.equal(u.rejected, undefined, `the server accepted every body: ${u.rejected}`);

    // What Pi sent: its openai provider's Responses body, with the tool calls and their real outputs.
    for (const body of server.bodies) {
      assert.equal(body.model, OPENAI_MODEL);
      assert.equal(body.stream, true);
      assert.ok(typeof body.prompt_cache_key === "string" && body.prompt_cache_key.length > 0, "Pi keys the cache by its session");
      assert.equal(body.input[0].role, "system", "Pi's system prompt leads the input");
    }
    const toolNames = server.bodies[0].tools.map((t: Loose) => t.name);
    assert.ok(toolNames.includes("read") && toolNames.includes("bash"), `tools: ${toolNames}`);
    const [readCall] = items(server.bodies[1], "function_call");
    assert.equal(readCall.name, "read");
    assert.deepEqual(JSON.parse(readCall.arguments), { path: "notes/big.txt" });
    const [readOutput] = items(server.bodies[1], "function_call_output");
    assert.equal(readOutput.call_id, readCall.call_id);
    assert.ok(readOutput.output.includes(BIG.split("\n")[91]), "the read result carries the file");
    const bashCall = items(server.bodies[2], "function_call").find((c) => c.name === "bash");
    const bashOutput = items(server.bodies[2], "function_call_output").find((o) => o.call_id === bashCall.call_id);
    assert.match(bashOutput.output, /^91:line 091 KEEP: /m, "bash ran grep in the work folder");

    // What Pi recorded: the provider's replies, the tools it ran, the usage the server reported.
    const branch = pi.branch().filter((e: Loose) => e.type === "message");
    const results = branch.map((e: Loose) => e.message).filter((m: Loose) => m.role === "toolResult");
    assert.deepEqual(
      results.map((m: Loose) => [m.toolName, m.isError]),
      [
        ["read", false],
        ["bash", false],
      ],
    );
    const replies = branch.map((e: Loose) => e.message).filter((m: Loose) => m.role === "assistant");
    assert.deepEqual(
      replies.map((m: Loose) => [m.provider, m.api, m.model, m.stopReason]),
      [
        ["openai", "openai-responses", OPENAI_MODEL, "toolUse"],
        ["openai", "openai-responses", OPENAI_MODEL, "toolUse"],
        ["openai", "openai-responses", OPENAI_MODEL, "stop"],
        ["openai", "openai-responses", OPENAI_MODEL, "stop"],
        ["openai", "openai-responses", OPENAI_MODEL, "stop"],
      ],
    );
    assert.deepEqual(
      replies[1].content.map((b: Loose) => b.type),
      ["text", "toolCall"],
    );
    assert.equal(replies[1].content[0].text, "Finding the last KEEP line.");
    const price = loopback.registry().find("openai", OPENAI_MODEL).cost;
    replies.forEach((m: Loose, i: number) => {
      const u = server.usage[i];
      assert.deepEqual(
        { input: m.usage.input, cacheRead: m.usage.cacheRead, cacheWrite: m.usage.cacheWrite, output: m.usage.output },
        { input: u.uncached, cacheRead: u.read, cacheWrite: 0, output: u.output },
        `request ${i + 1}: Pi recorded what the server reported`,
      );
      assert.ok(Math.abs(m.usage.cost.cacheRead - (u.read * price.cacheRead) / 1e6) < 1e-12, "priced at the catalog's cacheRead");
    });

    // The cache: nothing to read first, then a 128-step prefix of what came before, then lapsed.
    const texts = server.bodies.map(promptText);
    const reads = server.usage.map((u) => u.read);
    server.usage.forEach((u, i) => assert.equal(u.read + u.uncached, tokensOf(texts[i]), `request ${i + 1}: input_tokens is the whole prompt`));
    assert.equal(reads[0], 0, "the first request finds an empty cache");
    for (const i of [1, 2, 3]) {
      const size = tokensOf(texts[i]);
      assert.ok(reads[i] >= MINIMUM_TOKENS && (reads[i] - MINIMUM_TOKENS) % INCREMENT_TOKENS === 0, `request ${i + 1} read ${reads[i]}`);
      assert.ok(reads[i] < size, `request ${i + 1}: read ${reads[i]} of ${size}`);
      assert.equal(reads[i], expectedRead(texts, i, 0), `request ${i + 1}: the longest earlier prefix, rounded down`);
      assert.ok(reads[i] > tokensOf(texts[i - 1]) - INCREMENT_TOKENS - 1, `request ${i + 1} reads nearly all of request ${i}`);
    }
    assert.ok(expectedRead(texts, 4, 0) > 0, "request 5 shares a long prefix with the earlier ones");
    assert.equal(reads[4], 0, "past the idle TTL the entries have lapsed");
  } finally {
    await pi.dispose();
    await server.close();
  }
});

test("a body OpenAI would reject reaches Pi as the API's 400, and takes no scripted turn", async () => {
  const server = await startOpenAiServer(["never sent"]);
  const loopback = openAiSession(server);
  const spoil = (pi: Loose) => pi.on("before_provider_request", (event: Loose) => ({ ...event.payload, frequency_of_cheese: 1 }));
  const pi = await startSession({ ...loopback.options, extensions: [...(loopback.options.extensions ?? []), spoil] });
  try {
    await loopback.select(pi);
    await pi.prompt("Hello.");
    assert.ok(server.bodies.length >= 1);
    assert.equal(server.bodies[0].frequency_of_cheese, 1, "the hook's body reached the server");
    assert.equal(server.usage[0].rejected, "Unknown parameter: 'frequency_of_cheese'.");
    assert.ok(
      server.usage.every((u) => u.rejected !== undefined),
      "Pi's retries (if any) were rejected too",
    );
    assert.equal(server.pendingSteps(), 1);
    const last = pi
      .branch()
      .filter((e: Loose) => e.type === "message" && e.message.role === "assistant")
      .at(-1)?.message;
    assert.equal(last?.stopReason, "error");
    assert.match(last?.errorMessage ?? "", /400.*Unknown parameter: 'frequency_of_cheese'/s);
  } finally {
    await pi.dispose();
    await server.close();
  }
});

// ---------------------------------------------------------------------------
// The server alone
// ---------------------------------------------------------------------------

/** POSTs `body` to the server; a stream's `response.completed` usage, or the error body. */
async function post(
  server: OpenAiServer,
  body: unknown,
  { path = "/v1/responses", key = "sk-test" } = {},
): Promise<{ status: number; usage?: Loose; events?: Loose[]; error?: Loose }> {
  const res = await fetch(server.url + path, {
    method: "POST",
    headers: { "content-type": "application/json", ...(key ? { authorization: `Bearer ${key}` } : {}) },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
  const text = await res.text();
  if (!res.headers.get("content-type")?.startsWith("text/event-stream")) return { status: res.status, error: JSON.parse(text).error };
  const events = text
    .split("\n\n")
    .filter(Boolean)
    .map((block) => {
      const [eventLine, dataLine] = block.split("\n");
      const data = JSON.parse(dataLine.replace(/^data: /, ""));
      assert.equal(eventLine, `event: ${data.type}`);
      return data;
    });
  return { status: res.status, events, usage: events.at(-1).response.usage };
}

const SYSTEM = "You are a careful assistant. ".repeat(220); // 6,380 characters: ~1,595 tokens before the tools
const TOOLS = [
  { type: "function", name: "read", description: "Read a file", parameters: { type: "object", properties: { path: { type: "string" } } }, strict: false },
];
/** What a repeat of a prompt reads: its whole tokens but the last, rounded down to 1,024 + k·128. */
function allSteps(text: string): number {
  const whole = Math.min(Math.floor(text.length / 4), tokensOf(text) - 1);
  return whole - ((whole - MINIMUM_TOKENS) % INCREMENT_TOKENS);
}
const request = (user: string[], extra: Record<string, unknown> = {}) => ({
  model: OPENAI_MODEL,
  stream: true,
  store: false,
  input: [{ role: "system", content: SYSTEM }, ...user.map((text) => ({ role: "user", content: [{ type: "input_text", text }] }))],
  tools: TOOLS,
  ...extra,
});

test("the server's cache: 1,024-token minimum, 128-token steps, exact prefixes, tools after the system prompt, key, TTL", async () => {
  const clock = manualClock(0);
  const server = await startOpenAiServer([], { clock });
  try {
    const cached = async (body: Loose) => {
      const r = await post(server, body);
      assert.equal(r.status, 200, JSON.stringify(r.error));
      assert.equal(r.usage.input_tokens, tokensOf(promptText(body)));
      assert.equal(r.usage.total_tokens, r.usage.input_tokens + r.usage.output_tokens);
      return r.usage.input_tokens_details.cached_tokens as number;
    };
    const short = { model: OPENAI_MODEL, stream: true, input: "x".repeat(4 * 1000) };
    assert.equal(await cached(short), 0);
    assert.equal(await cached(short), 0, "a prompt under 1,024 tokens is never cached");

    const a = request(["first question ".repeat(40)]);
    const aText = promptText(a);
    assert.equal(await cached(a), 0);
    const again = await cached(a);
    assert.equal(again, allSteps(aText), "the same prompt reads all its whole 128-token steps");
    assert.ok(again < tokensOf(aText));

    const b = request(["first question ".repeat(40), "a follow-up"]);
    assert.equal(await cached(b), again, "a longer prompt reads the earlier one's prefix");

    // One character changed inside the system prompt, past token 1,200: the hit stops at the step before it.
    const edited = request(["first question ".repeat(40)]);
    edited.input[0].content = `${SYSTEM.slice(0, 4 * 1200)}!${SYSTEM.slice(4 * 1200 + 1)}`;
    assert.equal(await cached(edited), 1152);

    // The tools come after the system prompt: a changed tool keeps the system prompt's steps.
    const toolsStart = promptText(a).indexOf('{"tools"');
    const otherTools = request(["first question ".repeat(40)], { tools: [{ ...TOOLS[0], description: "Read a text file" }] });
    const expected = Math.floor(toolsStart / 4);
    assert.equal(await cached(otherTools), expected - ((expected - MINIMUM_TOKENS) % INCREMENT_TOKENS));

    assert.equal(await cached(request(["first question ".repeat(40)], { prompt_cache_key: "another-session" })), 0, "another key finds nothing");

    clock.advance(IDLE_TTL_MS - 1);
    assert.equal(await cached(b), again, "just inside the idle TTL");
    clock.advance(IDLE_TTL_MS);
    assert.equal(await cached(b), 0, "a full idle TTL after the last use");

    // (Its own key: the last request stored the system prompt's steps again.)
    const long = request(["kept for a day ".repeat(40)], { prompt_cache_retention: "24h", prompt_cache_key: "day" });
    assert.equal(await cached(long), 0);
    clock.advance(2 * 60 * 60_000);
    assert.equal(await cached(long), allSteps(promptText(long)), "24h retention outlives two idle hours");
  } finally {
    await server.close();
  }
});

test("the server streams text and tool calls as the Responses API does", async () => {
  const server = await startOpenAiServer([{ say: "Looking.", calls: [{ tool: "read", args: { path: "a.txt" }, id: "call_abc" }] }]);
  try {
    const r = await post(server, request(["hi"]));
    const types = r.events!.map((e) => e.type);
    assert.deepEqual(types.slice(0, 2), ["response.created", "response.in_progress"]);
    assert.equal(types.at(-1), "response.completed");
    assert.deepEqual(
      r.events!.map((e) => e.sequence_number),
      types.map((_, i) => i),
    );
    const done = r.events!.filter((e) => e.type === "response.output_item.done").map((e) => e.item);
    assert.deepEqual(
      done.map((i) => [i.type, i.status]),
      [
        ["message", "completed"],
        ["function_call", "completed"],
      ],
    );
    assert.equal(done[0].content[0].text, "Looking.");
    assert.deepEqual([done[1].call_id, done[1].name, JSON.parse(done[1].arguments)], ["call_abc", "read", { path: "a.txt" }]);
    assert.match(done[1].id, /^fc_/);
    const args = r
      .events!.filter((e) => e.type === "response.function_call_arguments.delta")
      .map((e) => e.delta)
      .join("");
    assert.equal(args, done[1].arguments);
    assert.deepEqual(r.events!.at(-1).response.output, done);
    assert.equal(r.events!.at(-1).response.status, "completed");
  } finally {
    await server.close();
  }
});

test("the server answers a body OpenAI would reject with OpenAI's error, and takes no scripted turn", async () => {
  const server = await startOpenAiServer(["unused"]);
  try {
    const call = { type: "function_call", id: "fc_1", call_id: "call_1", name: "read", arguments: "{}" };
    const output = { type: "function_call_output", call_id: "call_1", output: "text" };
    const cases: [unknown, number, RegExp, string | null][] = [
      ["{not json", 400, /could not parse the JSON body/, null],
      [{ stream: true, input: "hi" }, 400, /^Missing required parameter: 'model'\.$/, "model"],
      [{ ...request(["hi"]), temprature: 1 }, 400, /^Unknown parameter: 'temprature'\.$/, "temprature"],
      [{ ...request(["hi"]), prompt_cache_key: "k".repeat(65) }, 400, /string too long\. Expected a string with maximum length 64/, "prompt_cache_key"],
      [
        { ...request(["hi"]), prompt_cache_retention: "1h" },
        400,
        /^Invalid value: '1h'\. Supported values are: 'in_memory', '24h'\.$/,
        "prompt_cache_retention",
      ],
      [{ ...request(["hi"]), max_output_tokens: 8 }, 400, /Expected a value >= 16, but got 8/, "max_output_tokens"],
      [{ ...request(["hi"]), previous_response_id: "resp_1" }, 400, /Previous response with id 'resp_1' not found/, "previous_response_id"],
      [{ ...request(["hi"]), stream: false }, 400, /only streamed requests/, "stream"],
      [{ ...request(["hi"]), input: [{ role: "robot", content: "hi" }] }, 400, /^Invalid value: 'robot'\./, "input[0].role"],
      [
        { ...request(["hi"]), input: [{ role: "assistant", content: [{ type: "input_text", text: "hi" }] }] },
        400,
        /^Invalid value: 'input_text'\. Supported values are: 'output_text', 'refusal'\./,
        "input[0].content[0].type",
      ],
      [{ ...request(["hi"]), input: [output] }, 400, /^No tool call found for function call output with call_id call_1\.$/, "input"],
      [{ ...request(["hi"]), input: [call] }, 400, /^No tool output found for function call call_1\.$/, "input"],
      [{ ...request(["hi"]), input: [{ ...call, id: "call_1" }, output] }, 400, /Expected an ID that begins with 'fc'/, "input[0].id"],
      [{ ...request(["hi"]), tools: [{ type: "function", name: "read file" }] }, 400, /does not match pattern/, "tools[0].name"],
    ];
    for (const [body, status, message, param] of cases) {
      const r = await post(server, body);
      assert.equal(r.status, status, `${JSON.stringify(body).slice(0, 80)}: ${JSON.stringify(r.error)}`);
      assert.match(r.error.message, message);
      assert.equal(r.error.type, "invalid_request_error");
      assert.equal(r.error.param, param);
    }
    assert.equal((await post(server, request(["hi"]), { key: "" })).status, 401, "no bearer key");
    assert.equal((await post(server, request(["hi"]), { path: "/v1/chat/completions" })).status, 404, "only the Responses API is here");
    assert.equal(server.pendingSteps(), 1, "no rejected body took a turn");
    // Every body that parsed is recorded (all cases but the first, and the one without a key), with the reason.
    assert.equal(server.bodies.length, cases.length);
    assert.ok(server.usage.every((u) => u.rejected !== undefined && u.read === 0));
    // A well-formed call and output pair is accepted.
    assert.equal((await post(server, { ...request(["hi"]), input: [{ role: "user", content: "hi" }, call, output] })).status, 200);
    assert.equal(server.pendingSteps(), 0);
  } finally {
    await server.close();
  }
});
