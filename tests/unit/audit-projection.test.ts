// The audit's own projection (extension/audit/projection.ts), used when no Pi
// can be found, against Pi's `buildSessionProjection` on sessions built by
// Pi's own SessionManager, on Pi 1.6.0 and 1.3.0: the same entries and
// messages, and so the same "guard would" figures.
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { pathToFileURL } from "node:url";
import { branchProjection } from "../../extension/audit/projection.ts";
import { wouldDo } from "../../extension/audit/would-do.ts";
import { repoRoot } from "../harness/pi.ts";

type Loose = any;

const versions: [string, string][] = [
  ["1.6.0", join(repoRoot, "node_modules")],
  ["1.3.0", join(repoRoot, "tests", "pi-versions", "1.3.0", "node_modules")],
];

const usage = { input: 10, output: 5, cacheRead: 0, cacheWrite: 0, totalTokens: 15, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } };
const assistant = (content: unknown[]) => ({
  role: "assistant",
  content,
  api: "anthropic-messages",
  provider: "anthropic",
  model: "m",
  usage,
  stopReason: "toolUse",
  timestamp: 1,
});
const result = (id: string, text: string, image = false) => ({
  role: "toolResult",
  toolCallId: id,
  toolName: "bash",
  content: image
    ? [
        { type: "text", text },
        { type: "image", mimeType: "image/png", data: "iVBORw0KGgo=" },
      ]
    : [{ type: "text", text }],
  isError: false,
  timestamp: 2,
});
const big = (tag: string) => `${tag}: ${"line of output that the guard would judge\n".repeat(400)}`;

/** A session with every kind of entry the projection treats: edits (text, null), a compaction, a branch summary, custom messages. */
function build(agent: Loose): Loose {
  const sm = agent.SessionManager.inMemory("/tmp/project");
  const run = (n: number) => {
    sm.appendMessage({ role: "user", content: [{ type: "text", text: `prompt ${n} 日本語 🚀` }], timestamp: 1 });
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      sm.appendMessage(assistant([{ type: "toolCall", id: `c${n}${i}`, name: "bash", arguments: { command: `cat f${i}` } }]));
      ids.push(sm.appendMessage(result(`c${n}${i}`, big(`run ${n} output ${i}`), i === 2)));
    }
    sm.appendMessage({ ...assistant([{ type: "text", text: `done ${n}` }]), stopReason: "stop" });
    return ids;
  };
  run(1);
  sm.appendCustomMessageEntry("note", "an injected note", true);
  const second = run(2);
  sm.appendContextEdit(second[1], { content: "[kept out: 400 lines]" });
  sm.appendCompaction("summary of runs 1 and 2", second[0], 12_000);
  const third = run(3);
  sm.appendContextEdit(third[0], null);
  sm.appendContextEdit(third[1], { content: "[kept out]" });
  sm.appendContextEdit(third[1], { content: [{ type: "text", text: "[kept out, newer]" }] });
  sm.appendCustomMessageEntry("note", [{ type: "text", text: "a second note" }], false);
  const fork = sm.getLeafId();
  run(4);
  sm.branchWithSummary(fork, "what run 4 tried");
  run(5);
  // A second compaction that keeps from before the first: the first stays in range, with no messages.
  sm.appendCompaction("summary up to run 5", second[0], 30_000);
  run(6);
  return sm;
}

for (const [version, modules] of versions) {
  const entry = join(modules, "@earendil-works", "pi-coding-agent", "dist", "index.js");
  test(`the audit's own projection is Pi ${version}'s on a session with edits, a compaction and a branch`, async (t) => {
    if (!existsSync(entry)) return t.skip(`Pi ${version} is not installed here (sh scripts/setup.sh installs it)`);
    const agent: Loose = await import(pathToFileURL(entry).href);
    const sm = build(agent);
    const branch = sm.getBranch();
    assert.equal(branch.filter((e: Loose) => e.type === "compaction").length, 2);
    assert.ok(branch.some((e: Loose) => e.type === "branch_summary"));
    const pi = agent.buildSessionProjection(sm.getEntries(), sm.getLeafId());
    const own = branchProjection(branch);
    assert.deepEqual(own.entries, pi.entries);

    // The same figures, through the audit's measure (texts inline: no out-of-line buffer).
    const light = { entries: branch, leafId: sm.getLeafId(), texts: new Uint8Array(0), lengths: new Uint32Array(0) };
    const model = { provider: "anthropic", api: "anthropic-messages" };
    const byPi = await wouldDo(light, model, (entries, leaf) => agent.buildSessionProjection(entries, leaf));
    const byOwn = await wouldDo(light, model, (entries) => branchProjection(entries as Loose[]));
    assert.ok(byPi.ok && byOwn.ok, JSON.stringify([byPi, byOwn]).slice(0, 300));
    assert.ok(byPi.value.candidates.length > 0, "the session has candidates to compare");
    assert.deepEqual(byOwn.value.candidates, byPi.value.candidates);
  });
}
