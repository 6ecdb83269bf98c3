// The extension's wrapper around the wasm core.
import assert from "node:assert/strict";
import { test } from "node:test";
import { callCore, core, coreLoadMs } from "../../extension/core.ts";

test("the core loads synchronously and reports its version", () => {
  assert.match(core.version(), /^\d+\.\d+\.\d+$/);
  assert.ok(coreLoadMs > 0 && coreLoadMs < 5_000);
});

test("a bad input to the core becomes an error value, not an exception", () => {
  const result = callCore(() => core.buildReport({ messages: [{ role: 42 }] } as never));
  assert.equal(result.ok, false);
  assert.match(result.ok ? "" : result.error, /context inputs/);
});

test("the report round-trips through wasm", () => {
  const result = callCore(() =>
    core.buildReport({
      usage: { tokens: 1000, contextWindow: 10_000, percent: 10 },
      systemPrompt: "p".repeat(400),
      tools: [],
      compaction: { defaults: { enabled: true, reserveTokens: 2000 } },
      messages: [
        { role: "user", tokens: 3.4, text: "hello" },
        { role: "user", tokens: Number.NaN },
      ],
      history: { count: 0, kept: [] },
    }),
  );
  assert.ok(result.ok, result.ok ? "" : result.error);
  const report = result.value;
  assert.equal(report.headline.tokens, 1000);
  assert.equal(report.threshold.at, 8000);
  assert.equal(report.threshold.headroom, 7000);
  assert.deepEqual(
    report.rows.map((r) => [r.id, r.tokens, r.count]),
    [
      ["system", 100, 0],
      ["tools", 0, 0],
      ["user", 3, 2],
    ],
  );
  assert.equal(report.estimate, 103);
  assert.equal(report.drift.difference, 897);
  assert.match(report.text, /^Context: 1\.0k \/ 10\.0k tokens \(10\.0%\), 9\.0k free/);
});

test("sanitizeLine leaves no terminal control in a line", () => {
  assert.equal(core.sanitizeLine("\x1b[31mred\x07\r\tx\nsecond", 40), "[31mred x");
});
