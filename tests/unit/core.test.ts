// The extension's wrapper around the wasm core.
import assert from "node:assert/strict";
import { test } from "node:test";
import { callCore, core, coreLoadMs } from "../../extension/core.ts";

test("the core loads synchronously and reports its version", () => {
  assert.match(core.version(), /^\d+\.\d+\.\d+$/);
  assert.ok(coreLoadMs > 0 && coreLoadMs < 5_000);
});

test("a bad input to the core becomes an error value, not an exception", () => {
  const result = callCore(() => core.tallyByRole([{ role: 42 }] as never));
  assert.equal(result.ok, false);
  assert.match(result.ok ? "" : result.error, /messages/);
});

test("the tally round-trips through wasm", () => {
  const result = callCore(() => core.tallyByRole([{ role: "user", tokens: 3.4 }, { role: "user", tokens: Number.NaN }]));
  assert.deepEqual(result, { ok: true, value: [{ role: "user", messages: 2, tokens: 3 }] });
});
