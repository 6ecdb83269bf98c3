// One format for a model's key, both ways (issue 29): the extension joins Pi's provider and id
// (guard/model.ts `modelKey`), the core reads a saved key back (settings.rs `split_model`, through
// `parseSettings`). A key the extension writes must read back as the same provider and id.
import assert from "node:assert/strict";
import { test } from "node:test";
import { modelKey } from "../../extension/guard/model.ts";
import { guardCore } from "../../extension/guard/wasm.ts";

test("a key the extension joins reads back in the core as the same provider and id", () => {
  const models = [
    { provider: "typesafe", id: "jev-1" },
    { provider: "openrouter", id: "~typesafe/jev-latest" },
    { provider: "openrouter", id: "anthropic/claude-sonnet-4.5:beta" },
    { provider: "amazon-bedrock", id: "us.anthropic.claude-sonnet-4-5-20250929-v1:0" },
    { provider: "local", id: "模型/量化-q4 🚀" },
  ];
  for (const model of models) {
    const key = modelKey(model);
    assert.ok(key, `${model.provider} ${model.id}`);
    const parsed = guardCore.parseSettings(JSON.stringify({ model: key }));
    assert.deepEqual([parsed.settings.modelProvider, parsed.settings.modelId], [model.provider, model.id], key);
  }
  // Neither side makes up a key: no provider, no key; a key without an id is refused with a message.
  assert.equal(modelKey({ id: "jev-1" }), undefined);
  const refused = guardCore.parseSettings(JSON.stringify({ model: "typesafe/" }));
  assert.ok(
    refused.warnings.some((w) => w.includes("model")),
    JSON.stringify(refused.warnings),
  );
});
