// The Anthropic question pin inside real Pi (docs/GUARD.md "The cache pin
// (Anthropic)", issue 10 part 2): Pi's own `anthropic` provider talks to the
// loopback Messages server, real tools run on a real folder. The same scripted
// run goes twice, with the pin and with `pinAnthropicCache: false` (its bodies
// are Pi's own: a recorder hook, which runs after this package's, sees the
// payload object the server got, byte for byte, with only Pi's 3 breakpoints).
// The pin's only change to a body is Pi's rolling cache_control copied onto
// the question.
import assert from "node:assert/strict";
import { test } from "node:test";
import { anthropicSession, breakpointsOf, startAnthropicServer } from "../harness/anthropic-server.ts";
import type { Loose } from "../harness/pi.ts";
import { type Step, startSession } from "../harness/session.ts";

/** Pi's payload with the question pin as docs/GUARD.md "The cache pin (Anthropic)" describes it, written independently of the extension. */
function pinnedByTheBook(pis: Loose): Loose {
  const body = structuredClone(pis);
  const messages: Loose[] = body.messages;
  let last = messages.length - 1;
  while (last >= 0 && messages[last].role === "system") last--;
  const rolling = [...messages]
    .reverse()
    .flatMap((m) => (Array.isArray(m.content) ? [...m.content].reverse() : []))
    .find((b) => b.cache_control)?.cache_control;
  for (let i = last - 1; i >= 0; i--) {
    const m = messages[i];
    if (m.role !== "user") continue;
    if (typeof m.content === "string") {
      m.content = [{ type: "text", text: m.content, cache_control: rolling }];
      return body;
    }
    const k = m.content.map((b: Loose) => b.type).lastIndexOf("text");
    if (k < 0) continue;
    if (!m.content[k].cache_control) m.content[k] = { ...m.content[k], cache_control: rolling };
    return body;
  }
  return body;
}

async function run(calls: number, guardSettings: Record<string, unknown> = {}) {
  const script: Step[] = [...Array(calls).keys()].map((i) => ({ tool: "bash", args: { command: `echo step ${i}; seq 1 ${50 + i}` } }));
  script.push("All steps ran.");
  const server = await startAnthropicServer(script);
  const loopback = anthropicSession(server);
  // The payload as the last hook returns it (extensions passed here run after this package's).
  const hooked: string[] = [];
  const recorder = (pi: Loose) => pi.on("before_provider_request", (event: Loose) => void hooked.push(JSON.stringify(event.payload)));
  const pi = await startSession({
    ...loopback.options,
    extensions: [...(loopback.options.extensions ?? []), recorder],
    guardSettings,
    files: { "README.md": "steps\n" },
  });
  try {
    await loopback.select(pi);
    await pi.prompt("Run the steps one by one.");
    assert.equal(server.pendingSteps(), 0, "the script ran to its end");
    assert.equal(server.bodies.length, calls + 1);
    assert.equal(hooked.length, server.bodies.length, "one payload per request sent");
    // Each run has its own temporary folder, named in the system prompt: the one difference between runs.
    const same = (body: Loose) => JSON.parse(JSON.stringify(body).replaceAll(pi.cwd, "<cwd>"));
    return { hooked, raw: server.bodies, sent: server.bodies.map(same) };
  } finally {
    await pi.dispose();
    await server.close();
  }
}

/** Pi's own breakpoints: the last tool, system[0], the last message's last block. */
function pisOwn(body: Loose): string[] {
  const last = body.messages.length - 1;
  return [`tools[${body.tools.length - 1}]`, "system[0]", `messages[${last}][${body.messages[last].content.length - 1}]`];
}

for (const calls of [1, 5, 12]) {
  test(`the question pin after ${calls} sequential tool call(s): Pi's rolling cache_control, TTL included, on the question`, async () => {
    const own = await run(calls, { pinAnthropicCache: false });
    const { sent } = await run(calls);
    for (let r = 0; r < sent.length; r++) {
      assert.deepEqual(breakpointsOf(own.sent[r]), pisOwn(own.sent[r]), `request ${r} without the pin: Pi's 3 breakpoints`);
      assert.equal(JSON.stringify(own.raw[r]), own.hooked[r], `request ${r} without the pin: the payload object Pi built, byte for byte`);
      // The first request ends with the question: Pi's own breakpoint is on it, nothing to add.
      assert.deepEqual(sent[r], r === 0 ? own.sent[r] : pinnedByTheBook(own.sent[r]), `request ${r}: Pi's body and the pin, nothing else`);
      assert.ok(breakpointsOf(sent[r]).length <= 4, `request ${r}: ${breakpointsOf(sent[r])}`);
    }
    for (let r = 1; r < sent.length; r++) {
      const rolling = own.sent[r].messages.at(-1).content.at(-1).cache_control;
      assert.deepEqual(sent[r].messages[0].content.at(-1).cache_control, rolling, `request ${r}: the question carries Pi's cache_control`);
      assert.equal(breakpointsOf(sent[r]).length, 4);
    }
  });
}

test("the guard switched off leaves Pi's body alone too", async () => {
  const { hooked, raw, sent } = await run(2, { enabled: false });
  for (let r = 0; r < sent.length; r++) {
    assert.equal(JSON.stringify(raw[r]), hooked[r], `request ${r}`);
    assert.deepEqual(breakpointsOf(sent[r]), pisOwn(sent[r]), `request ${r}`);
  }
});
