// The loopback Anthropic server's prompt cache (tests/harness/anthropic-server.ts)
// against Anthropic's documented rules, with worked numbers. Every block below
// weighs exactly 100 tokens (its JSON is 400 characters), and each case is
// built so that a plain longest-common-prefix count gives a different answer.
import assert from "node:assert/strict";
import { test } from "node:test";
import { ANTHROPIC_MODEL, manualClock, PromptCache, promptBlocks, startAnthropicServer } from "../harness/anthropic-server.ts";

type Block = Record<string, unknown>;
const MIN = 60_000;

/** A text block of exactly `tokens` tokens: `{"type":"text","text":""}` is 25 characters. */
const text = (tag: string, tokens = 100): Block => ({ type: "text", text: tag.padEnd(tokens * 4 - 25, ".") });
const blocks = (n: number, tag = "b") => Array.from({ length: n }, (_, i) => text(`${tag}${i}`));
/** `list` with `cache_control` on the blocks at `at` (`ttl: "1h"` on those in `hour`). */
const mark = (list: Block[], at: number[], hour: number[] = []) =>
  list.map((b, i) => (at.includes(i) ? { ...b, cache_control: { type: "ephemeral", ...(hour.includes(i) ? { ttl: "1h" } : {}) } } : b));
/** One user message holding `list`. */
const request = (list: Block[], model = ANTHROPIC_MODEL) => ({ model, max_tokens: 1000, stream: true, messages: [{ role: "user", content: list }] });
/** A cache with a manual clock and (unless the test is about it) no minimum length. */
const fresh = (minimumTokens = 0) => {
  const clock = manualClock();
  return { clock, cache: new PromptCache({ clock, minimumTokens }) };
};
const counts = (read: number, written: number, uncached: number, written1h = 0) => ({ read, written, written1h, uncached });

test("a block weighs ceil(its JSON without cache_control / 4); string content is one text block", () => {
  const [plain] = promptBlocks(request([text("a")]));
  const [marked] = promptBlocks(request(mark([text("a")], [0], [0])));
  assert.equal(plain.tokens, 100);
  assert.equal(marked.json, plain.json, "cache_control is not content");
  assert.equal(marked.breakpointTtlMs, 60 * MIN);
  const odd = promptBlocks({ model: "m", messages: [{ role: "user", content: "x".repeat(10) }] });
  assert.equal(odd[0].json, JSON.stringify({ type: "text", text: "x".repeat(10) }));
  assert.equal(odd[0].tokens, Math.ceil(35 / 4)); // 25 + 10 characters
  // Order: tools, then system, then messages.
  const order = promptBlocks({ model: "m", system: "s", tools: [{ name: "t", input_schema: {} }], messages: [{ role: "user", content: "u" }] });
  assert.deepEqual(
    order.map((b) => b.section),
    ["tools", "system", "+user"],
  );
});

test("no breakpoint: nothing is written or read, however often the prompt repeats", () => {
  const { cache } = fresh();
  const body = request(blocks(10));
  assert.deepEqual(cache.count(body), counts(0, 0, 1000));
  assert.deepEqual(cache.count(body), counts(0, 0, 1000)); // a common-prefix count would read 1,000
  assert.equal(cache.entries.size, 0);
});

test("written = from the read to the last breakpoint, uncached = after it; a moved breakpoint reads the earlier entry", () => {
  const { cache } = fresh();
  const history = blocks(15);
  // Breakpoint on block 7 of 10: 800 written, 200 after it.
  assert.deepEqual(cache.count(request(mark(history.slice(0, 10), [7]))), counts(0, 800, 200));
  // Five blocks later the breakpoint sits on block 12: it looks back to 7 (blocks 8 and 9 were
  // sent before but never cached), writes 8..12 and leaves 13, 14 uncached. A common-prefix
  // count would read 1,000.
  assert.deepEqual(cache.count(request(mark(history, [12]))), counts(800, 500, 200));
  assert.equal(cache.entries.size, 2);
});

test("the lookback reaches the breakpoint and the 20 blocks before it, not 21", () => {
  const history = blocks(30);
  const within = fresh().cache;
  assert.deepEqual(within.count(request(mark(history, [4]))), counts(0, 500, 2500));
  assert.deepEqual(within.count(request(mark(history, [24]))), counts(500, 2000, 500)); // 20 blocks on: read
  const beyond = fresh().cache;
  assert.deepEqual(beyond.count(request(mark(history, [4]))), counts(0, 500, 2500));
  assert.deepEqual(beyond.count(request(mark(history, [25]))), counts(0, 2600, 400)); // 21 blocks on: miss
  // Another breakpoint within reach reads it; the request reads the longest hit of all its
  // breakpoints and writes an entry at each breakpoint past it (6 and 25).
  const rescued = fresh().cache;
  rescued.count(request(mark(history, [4])));
  assert.deepEqual(rescued.count(request(mark(history, [6, 25]))), counts(500, 2100, 400));
  assert.equal(rescued.entries.size, 3);
  assert.deepEqual(rescued.count(request(mark(history, [6, 26]))), counts(2600, 100, 300)); // 25 now in reach of 26
});

test("entries live 5 minutes from their last read; an untouched one expires", () => {
  const { clock, cache } = fresh();
  const p = request(mark(blocks(5, "p"), [4]));
  const q = request(mark(blocks(5, "q"), [4]));
  assert.deepEqual(cache.count(p), counts(0, 500, 0));
  assert.deepEqual(cache.count(q), counts(0, 500, 0));
  clock.advance(4 * MIN);
  assert.deepEqual(cache.count(p), counts(500, 0, 0)); // refreshes p at 4 min
  clock.advance(1 * MIN + 1);
  assert.deepEqual(cache.count(q), counts(0, 500, 0)); // q untouched for 5 min: gone, written again
  assert.deepEqual(cache.count(p), counts(500, 0, 0)); // p read 1 min ago: alive (refreshed again)
  clock.advance(5 * MIN);
  assert.deepEqual(cache.count(p), counts(0, 500, 0));
});

test('ttl "1h": an entry lives an hour from its last read, and its writes are counted apart', () => {
  const { clock, cache } = fresh();
  const p = request(mark(blocks(5), [4], [4]));
  assert.deepEqual(cache.count(p), counts(0, 500, 0, 500));
  clock.advance(30 * MIN);
  assert.deepEqual(cache.count(p), counts(500, 0, 0)); // a 5-minute entry would be gone
  clock.advance(59 * MIN);
  assert.deepEqual(cache.count(p), counts(500, 0, 0));
  clock.advance(60 * MIN);
  assert.deepEqual(cache.count(p), counts(0, 500, 0, 500));
  // A 1-hour breakpoint before a 5-minute one: each writes the part that ends at it.
  assert.deepEqual(fresh().cache.count(request(mark(blocks(10, "m"), [4, 9], [4]))), counts(0, 1000, 0, 500));
});

test("prefixes under the minimum (1,024 tokens by default) are never written, so never read", () => {
  const { cache } = fresh(1024);
  assert.equal(new PromptCache().minimumTokens, 1024);
  const history = blocks(11);
  const short = request(mark(history.slice(0, 10), [9])); // 1,000 tokens
  assert.deepEqual(cache.count(short), counts(0, 0, 1000));
  assert.deepEqual(cache.count(short), counts(0, 0, 1000));
  // Breakpoints at 4 (500 tokens: too short) and 10 (1,100): one entry, all of it written.
  assert.deepEqual(cache.count(request(mark(history, [4, 10]))), counts(0, 1100, 0));
  assert.equal(cache.entries.size, 1);
  assert.deepEqual(cache.count(request(mark(history, [10]))), counts(1100, 0, 0));
  // The breakpoint back on 4: nothing was ever cached there (a common-prefix count would read 1,100).
  assert.deepEqual(cache.count(request(mark(history, [4]))), counts(0, 0, 1100));
});

test("models do not share entries", () => {
  const { cache } = fresh();
  const list = mark(blocks(5), [4]);
  assert.deepEqual(cache.count(request(list, "claude-sonnet-4-5")), counts(0, 500, 0));
  assert.deepEqual(cache.count(request(list, "claude-opus-4-1")), counts(0, 500, 0));
  assert.deepEqual(cache.count(request(list, "claude-sonnet-4-5")), counts(500, 0, 0));
});

test("an edit in the middle of the history misses from the edited block on", () => {
  const { cache } = fresh();
  // Three blocks a message, user and assistant taking turns.
  const chat = (list: Block[]) => ({
    model: ANTHROPIC_MODEL,
    max_tokens: 1000,
    messages: Array.from({ length: Math.ceil(list.length / 3) }, (_, i) => ({ role: i % 2 ? "assistant" : "user", content: list.slice(3 * i, 3 * i + 3) })),
  });
  const history = blocks(34);
  assert.deepEqual(cache.count(chat(mark(history.slice(0, 30), [9, 29]))), counts(0, 3000, 0));
  // Block 12 edited (same size), two blocks added: the breakpoint on 9 reads its entry; the one
  // on 31 finds nothing within 11..31 with the edited prefix. A common-prefix count reads 1,200.
  const edited = history.map((b, i) => (i === 12 ? text("edited") : b));
  assert.deepEqual(cache.count(chat(mark(edited.slice(0, 32), [9, 31]))), counts(1000, 2200, 0));
  assert.deepEqual(cache.count(chat(mark(edited, [9, 33]))), counts(3200, 200, 0));
});

test("what Anthropic rejects: more than 4 breakpoints, an unknown ttl, 1h after 5m, no messages", () => {
  const cache = new PromptCache();
  assert.throws(() => cache.count(request(mark(blocks(6), [0, 1, 2, 3, 4]))), /A maximum of 4 blocks with cache_control may be provided. Found 5/);
  assert.throws(() => cache.count(request([{ ...text("a"), cache_control: { type: "ephemeral", ttl: "10m" } }])), /ttl: must be "5m" or "1h"/);
  assert.throws(() => cache.count(request(mark(blocks(2), [0, 1], [1]))), /1h may not follow one with ttl 5m/);
  assert.throws(() => cache.count({ model: "m" }), /messages: Field required/);
});

/** The events of one streamed reply, by type. */
const events = (sse: string) =>
  sse
    .split("\n\n")
    .filter((e) => e.trim())
    .map((e) =>
      JSON.parse(
        e
          .split("\n")
          .find((l) => l.startsWith("data: "))!
          .slice(6),
      ),
    );

test("through HTTP: a Pi-shaped conversation's usage in message_start, recorded beside the body", async () => {
  const clock = manualClock(1_000);
  const server = await startAnthropicServer(["first", "second"], { clock, minimumTokens: 0 });
  try {
    const tools = [
      { name: "read", description: "Read a file", input_schema: { type: "object", properties: { path: { type: "string" } } } },
      {
        name: "bash",
        description: "Run a command",
        input_schema: { type: "object", properties: { command: { type: "string" } } },
        cache_control: { type: "ephemeral" },
      },
    ];
    const system = [{ ...text("You are a coding agent", 300), cache_control: { type: "ephemeral" } }];
    const question = text("Fix the failing test", 50).text as string;
    const post = (body: unknown) =>
      fetch(`${server.url}/v1/messages`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
    const toolTokens = tools.map((t) => Math.ceil(JSON.stringify({ ...t, cache_control: undefined }).length / 4));

    // First request: Pi's breakpoints on the last tool, the system prompt and the newest user
    // block (the question, sent as a block to carry the marker). Everything is written.
    const first = events(
      await (
        await post({
          model: ANTHROPIC_MODEL,
          max_tokens: 1000,
          stream: true,
          tools,
          system,
          messages: [{ role: "user", content: [{ type: "text", text: question, cache_control: { type: "ephemeral" } }] }],
        })
      ).text(),
    );
    const total1 = toolTokens[0] + toolTokens[1] + 300 + 50;
    assert.deepEqual(first[0].message.usage, {
      input_tokens: 0,
      output_tokens: 1,
      cache_read_input_tokens: 0,
      cache_creation_input_tokens: total1,
      cache_creation: { ephemeral_5m_input_tokens: total1, ephemeral_1h_input_tokens: 0 },
    });

    // Second request, a minute later: the question is a string again (Pi's shape for older
    // messages) and the marker moved to the new last block; it reads all of the first request.
    clock.advance(MIN);
    const answer = text("first", 20);
    const reply = await post({
      model: ANTHROPIC_MODEL,
      max_tokens: 1000,
      stream: true,
      tools,
      system,
      messages: [
        { role: "user", content: question },
        { role: "assistant", content: [answer] },
        { role: "user", content: [{ ...text("And the next one", 30), cache_control: { type: "ephemeral" } }] },
      ],
    });
    assert.equal(reply.status, 200);
    const second = events(await reply.text());
    assert.deepEqual(second[0].message.usage, {
      input_tokens: 0,
      output_tokens: 1,
      cache_read_input_tokens: total1,
      cache_creation_input_tokens: 50,
      cache_creation: { ephemeral_5m_input_tokens: 50, ephemeral_1h_input_tokens: 0 },
    });
    const delta = second.find((e) => e.type === "message_delta");
    assert.equal(delta.usage.output_tokens, Math.ceil("second".length / 4));
    assert.deepEqual(server.usage, [
      { read: 0, written: total1, written1h: 0, uncached: 0, output: Math.ceil("first".length / 4), model: ANTHROPIC_MODEL, at: 1_000 },
      { read: total1, written: 50, written1h: 0, uncached: 0, output: 2, model: ANTHROPIC_MODEL, at: 1_000 + MIN },
    ]);

    // A fifth breakpoint: Anthropic's 400, the body and the rejection recorded, no step taken.
    const rejected = await post({ model: ANTHROPIC_MODEL, max_tokens: 1000, tools, system, messages: [{ role: "user", content: mark(blocks(3), [0, 1, 2]) }] });
    assert.equal(rejected.status, 400);
    assert.match((await rejected.json()).error.message, /Found 5/);
    assert.equal(server.bodies.length, 3);
    assert.match(server.usage[2].rejected ?? "", /Found 5/);
    assert.equal(server.pendingSteps(), 0);
  } finally {
    await server.close();
  }
});
