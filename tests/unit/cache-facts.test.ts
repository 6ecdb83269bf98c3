// The idle time the guard reads from Pi's message timestamps (extension/guard/cache-facts.ts): the time
// from the main model's last reply to the branch's latest message, and nothing when the stamps are
// missing, broken or go backwards (the core then never takes the cache for lapsed).
import assert from "node:assert/strict";
import { test } from "node:test";
import { idleMs } from "../../extension/guard/cache-facts.ts";

const model = { provider: "anthropic", id: "claude-sonnet-4-5" };
const msg = (role: string, timestamp: unknown, extra: Record<string, unknown> = {}) => ({
  type: "message",
  id: `${role}${String(timestamp)}`,
  message: { role, timestamp, ...extra },
});
const reply = (timestamp: unknown, m = model) => msg("assistant", timestamp, { provider: m.provider, model: m.id });

test("idle: from the model's last reply to the latest message", () => {
  const branch = [
    msg("user", 1_000),
    reply(2_000),
    msg("toolResult", 3_000),
    reply(4_000),
    { type: "custom", customType: "context-guard" },
    msg("user", 604_000),
  ];
  assert.equal(idleMs(branch, model), 600_000);
  // At turn_end the latest message is a tool result.
  assert.equal(idleMs(branch.slice(0, 3), model), 1_000);
  // At run end the latest is the reply itself.
  assert.equal(idleMs(branch.slice(0, 4), model), 0);
  // Another model's replies do not count: its cache is not this one's.
  assert.equal(idleMs([reply(1_000), reply(5_000, { provider: "openai", id: "gpt-4.1" }), msg("user", 9_000)], model), 8_000);
});

test("idle: unknown without stamps, with broken ones, or when the clock went backwards", () => {
  assert.equal(idleMs([], model), undefined);
  assert.equal(idleMs([msg("user", 5)], model), undefined, "no reply yet");
  assert.equal(idleMs([reply(5_000), msg("user", 4_000)], model), undefined, "backwards");
  assert.equal(idleMs([reply("2026-12-02T05:00:00Z"), msg("user", 9_000)], model), undefined, "an ISO string is not Pi's number");
  assert.equal(idleMs([reply(1_000), msg("user", Number.NaN)], model), undefined);
  assert.equal(idleMs([reply(1_000), msg("user", undefined)], model), undefined);
  assert.equal(idleMs([reply(1_000), null, 7, "x", { type: "message" }, msg("user", 61_000), null] as unknown[], model), 60_000, "junk entries are skipped");
  assert.equal(idleMs([reply(1_000), msg("user", 61_000)], undefined), undefined, "no model");
});
