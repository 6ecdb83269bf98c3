// The extension's wrapper around the wasm core.
import assert from "node:assert/strict";
import { test } from "node:test";
import { callCore, core, coreLoadMs } from "../../extension/core.ts";
import { reportCore } from "../../extension/report/wasm.ts";

test("the core loads synchronously and reports its version", () => {
  assert.match(core.version(), /^\d+\.\d+\.\d+$/);
  assert.ok(coreLoadMs > 0 && coreLoadMs < 5_000);
});

const none = () => ({});

test("a bad input to the core becomes an error value, not an exception", () => {
  const messages = { tokens: new Float64Array(1), kind: new Uint32Array(1), kinds: [{ role: 42 }], describe: none };
  const result = callCore(() => reportCore.buildReport({ messages } as never));
  assert.equal(result.ok, false);
  assert.match(result.ok ? "" : result.error, /context inputs: invalid type/);
  const unknownKind = { ...messages, kinds: [], kind: new Uint32Array([3]) };
  const unknown = callCore(() => reportCore.buildReport({ messages: unknownKind } as never));
  assert.equal(unknown.ok ? "" : unknown.error, "context inputs: message 0 has kind 3, but there are 0 kinds");
  const missing = callCore(() => reportCore.buildReport({} as never));
  assert.equal(missing.ok, false);
});

test("a describe that throws or answers nonsense costs the descriptor, not the report", () => {
  for (const describe of [
    () => {
      throw new Error("boom");
    },
    () => "not json",
    () => 42,
    undefined,
  ]) {
    const messages = { tokens: new Float64Array([5]), kind: new Uint32Array([0]), kinds: [{ role: "user" }], describe };
    const result = callCore(() => reportCore.buildReport({ messages } as never));
    assert.ok(result.ok, result.ok ? "" : result.error);
    assert.deepEqual(
      result.value.largest.map((l) => [l.index, l.tokens, l.descriptor]),
      [[0, 5, ""]],
    );
  }
});

test("the report round-trips through wasm", () => {
  const result = callCore(() =>
    reportCore.buildReport({
      usage: { tokens: 1000, contextWindow: 10_000, percent: 10 },
      system: { content: "p".repeat(400), sections: [], tools: [], toolsChars: 0 },
      compaction: { defaults: { enabled: true, reserveTokens: 2000 } },
      messages: {
        tokens: new Float64Array([3.4, Number.NaN]),
        kind: new Uint32Array([0, 0]),
        kinds: [{ role: "user" }],
        describe: (i) => (i === 0 ? { text: "hello" } : {}),
      },
      history: { count: 0, kept: [] },
      requests: { tokens: [800, 1000], marks: [0, 2], last: { input: 10, cacheRead: 900, cacheWrite: 90 }, cost: 0.5 },
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
  assert.deepEqual(report.requests, {
    count: 2,
    first: 800,
    peak: 1000,
    peakAt: 2,
    last: 1000,
    compactions: 0,
    edits: 1,
    cache: { read: 900, written: 90, uncached: 10 },
    cost: 0.5,
  });
  assert.match(
    report.text,
    /\nContext per request: 2 on this branch, first 800, peak 1\.0k \(request 2\), last 1\.0k\nLast request's cache: 900 read, 90 written, 10 uncached\nSession cost: \$0\.500 /,
  );
  assert.equal(report.drift.difference, 897);
  assert.match(report.text, /^Context: 1\.0k \/ 10\.0k tokens \(10\.0%\), 9\.0k free/);
  assert.deepEqual(
    report.largest.map((l) => [l.index, l.tokens, l.descriptor]),
    [
      [0, 3, "hello"],
      [1, 0, ""],
    ],
  );
});

test("sanitizeLine leaves no terminal control in a line", () => {
  assert.equal(core.sanitizeLine("\x1b[31mred\x07\r\tx\nsecond", 40), "[31mred x");
});
