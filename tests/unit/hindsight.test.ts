// The economy suite's hindsight bound (tests/bench/hindsight.ts) on runs small
// enough to check by hand and by trying every schedule.
import assert from "node:assert/strict";
import { test } from "node:test";
import { cheapest, lowestPeak, type Recorded, replay } from "../bench/hindsight.ts";

/**
 * A run of `n` requests; request i holds a prompt of 100 tokens, then per earlier turn an assistant
 * message of 10 and a tool output of `size` (judged down to `judged`).
 */
function run(n: number, size: number, judged: number): Recorded {
  const messages: number[][] = [];
  const outputs: Recorded["outputs"] = [];
  for (let i = 0; i < n; i++) {
    const m = [100];
    for (let k = 0; k < i; k++) m.push(10, size);
    messages.push(m);
    if (i > 0) outputs.push({ message: 2 * i, request: i, tokens: size, judged });
  }
  return { messages, fixed: 1000, outputs };
}

const anthropic = { read: 0.3, write: 3.75 };

test("guard off replayed: each request reads the one before and writes what is new", () => {
  const r = run(3, 1000, 100);
  const off = replay(r, anthropic, [], 1);
  assert.deepEqual(off.context, [1100, 2110, 3120]);
  // 1,100 written; 1,100 read + 1,010 written; 2,110 read + 1,010 written.
  assert.ok(Math.abs(off.cost - (1100 * 3.75 + 1100 * 0.3 + 1010 * 3.75 + 2110 * 0.3 + 1010 * 3.75) / 1e6) < 1e-12);
  assert.equal(off.peak, 3120);
});

test("a checkpoint replaces what is old enough; the next request rewrites from the first edited output", () => {
  const r = run(4, 1000, 100);
  // After request 1 (0-based), age 1: the output of request 1 (called at turn 0) is 1 turn old.
  const s = replay(r, anthropic, [1], 1);
  assert.deepEqual(s.context, [1100, 2110, 2220, 3230]);
  // Requests 0 and 1 as guard off; request 2 shares the fixed part, the prompt and the first assistant
  // message (1,110) with request 1 and writes the rest (1,110); request 3 reads request 2 whole.
  const expected = (1100 * 3.75 + 1100 * 0.3 + 1010 * 3.75 + 1110 * 0.3 + 1110 * 3.75 + 2220 * 0.3 + 1010 * 3.75) / 1e6;
  assert.ok(Math.abs(s.cost - expected) < 1e-12, `${s.cost} vs ${expected}`);
});

test("the search finds the cheapest of every schedule, and the lowest peak within a cost", () => {
  for (const [n, size, judged, age] of [
    [8, 3000, 200, 1],
    [9, 2000, 1500, 2],
    [7, 500, 0, 1],
  ]) {
    const r = run(n, size, judged);
    let best = Infinity;
    let bestPeak = Infinity;
    const off = replay(r, anthropic, [], age);
    for (let mask = 0; mask < 1 << (n - 1); mask++) {
      const cps = [...Array(n - 1).keys()].filter((k) => mask & (1 << k));
      const s = replay(r, anthropic, cps, age);
      best = Math.min(best, s.cost);
      if (s.cost <= 1.05 * off.cost) bestPeak = Math.min(bestPeak, s.peak);
    }
    const found = cheapest(r, anthropic, age);
    assert.ok(found && Math.abs(found.cost - best) < 1e-12, `n=${n}: ${found?.cost} vs ${best}`);
    const low = lowestPeak(r, anthropic, age, 1.05 * off.cost);
    assert.equal(low?.peak, bestPeak, `n=${n}`);
  }
});
