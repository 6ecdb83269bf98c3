// Distill before compacting: extension/guard/compaction.ts predicts Pi's own
// estimate of the projected context, which Pi does not export. These tests
// build real sessions with Pi's SessionManager and compare the prediction with
// Pi's `estimateProjectedContextTokens`, imported from its own file: usage and
// the messages after it, a context_edit after the usage (the whole projection),
// system messages with sections and tools, images, and the edits' replacements.
import assert from "node:assert/strict";
import { join } from "node:path";
import { test } from "node:test";
import { pathToFileURL } from "node:url";
import { beforeCompaction, type Draft, estimateAfterTurn, estimateWithEdits } from "../../extension/guard/compaction.ts";
import { agent, type Loose, piModules } from "../harness/pi.ts";

const piCompaction: Loose = await import(
  pathToFileURL(join(piModules, "@earendil-works", "pi-coding-agent", "dist", "core", "compaction", "compaction.js")).href
);
const piEstimate = (manager: Loose): number => piCompaction.estimateProjectedContextTokens(manager.buildSessionProjection(), manager.getBranch()).tokens;

const usage = (total: number) => ({
  input: total - 10,
  output: 10,
  cacheRead: 0,
  cacheWrite: 0,
  totalTokens: total,
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
});
const assistant = (total: number, calls: string[]) => ({
  role: "assistant",
  content: calls.map((id) => ({ type: "toolCall", id, name: "dump_log", arguments: { service: id } })),
  api: "faux",
  provider: "faux",
  model: "faux-1",
  usage: usage(total),
  stopReason: calls.length ? "toolUse" : "stop",
  timestamp: Date.now(),
});
const result = (id: string, text: string, image = false) => ({
  role: "toolResult",
  toolCallId: id,
  toolName: "dump_log",
  content: [{ type: "text", text }, ...(image ? [{ type: "image", data: "iVBORw0KGgo=", mimeType: "image/png" }] : [])],
  isError: false,
  timestamp: Date.now(),
});

/** A session: a system message with sections and tools, a prompt, two tool turns with big outputs. */
function session(): { manager: Loose; ids: Record<string, string> } {
  const manager = agent.SessionManager.inMemory("/tmp");
  const ids: Record<string, string> = {};
  ids.system = manager.appendMessage({
    role: "system",
    content: "You are a coding agent.",
    sections: { preamble: "Be brief.", cwd: "/tmp/project", docs: "x".repeat(999) },
    toolsAdded: [{ name: "dump_log", description: "Prints a log.", parameters: { type: "object" } }],
    timestamp: 1,
  });
  ids.prompt = manager.appendMessage({ role: "user", content: [{ type: "text", text: "Why did it stop?" }], timestamp: Date.now() });
  manager.appendMessage(assistant(2_000, ["a"]));
  ids.a = manager.appendMessage(result("a", "alpha line\n".repeat(30_001), true));
  ids.turn2 = manager.appendMessage(assistant(90_000, ["b"]));
  ids.b = manager.appendMessage(result("b", "beta line\n".repeat(20_003)));
  return { manager, ids };
}

const projectedEntries = (manager: Loose) => manager.buildSessionProjection().entries;
const turnOf = (manager: Loose) => {
  const messages = manager.buildSessionProjection().messages;
  return { message: messages.findLast((m: Loose) => m.role === "assistant"), toolResults: [messages.at(-1)] };
};

test("after a tool turn: the last usage and the messages after it, as Pi counts them", () => {
  const { manager } = session();
  const predicted = estimateAfterTurn(turnOf(manager), projectedEntries(manager), manager.getBranch(), []);
  assert.equal(predicted, piEstimate(manager));
  // usage 90,000 + the beta output at characters ÷ 4, rounded up.
  assert.equal(predicted, 90_000 + Math.ceil("beta line\n".repeat(20_003).length / 4));
});

test("a context_edit after the last usage: the whole projection (system sections and tools, images at 4,800 characters)", () => {
  const { manager, ids } = session();
  manager.appendContextEdit(ids.prompt, { content: [{ type: "text", text: "Why did it stop? (edited)" }] });
  const predicted = estimateAfterTurn(turnOf(manager), projectedEntries(manager), manager.getBranch(), []);
  assert.equal(predicted, piEstimate(manager));
  // Not the usage-based figure: the edit came after the usage, so Pi no longer trusts it.
  assert.notEqual(predicted, 90_000 + Math.ceil("beta line\n".repeat(20_003).length / 4));
  // At turn_end the drafts are not on the branch yet: the boundary's preview applies them, and the
  // branch Pi checks afterwards has them after its last entry.
  const fresh = session();
  const drafts: Draft[] = [
    { type: "context_edit", targetId: fresh.ids.prompt, replacement: { content: [{ type: "text", text: "Why did it stop? (edited)" }] } },
  ];
  const branchBefore = fresh.manager.getBranch();
  fresh.manager.appendContextEdit(fresh.ids.prompt, drafts[0].replacement);
  assert.equal(estimateAfterTurn(turnOf(fresh.manager), projectedEntries(fresh.manager), branchBefore, drafts), piEstimate(fresh.manager));
});

test("with the edits applied: exactly Pi's estimate once they are appended", () => {
  const { manager, ids } = session();
  const entries = projectedEntries(manager);
  const drafts: Draft[] = [
    { type: "context_edit", targetId: ids.a, replacement: { content: [{ type: "text", text: "[context-guard] alpha: kept 1 line\nalpha line" }] } },
    { type: "context_edit", targetId: ids.b, replacement: { content: "[context-guard] beta, as a string" } },
    { type: "custom", targetId: undefined },
  ];
  const predicted = estimateWithEdits(entries, drafts);
  for (const d of drafts) if (d.type === "context_edit") manager.appendContextEdit(d.targetId, d.replacement);
  manager.appendCustomEntry("context-guard", { v: 1 });
  assert.equal(predicted, piEstimate(manager));
  assert.ok(predicted < 2_000, `${predicted}`);
  // An omitted entry (replacement null) counts nothing.
  const other = session();
  const omitted: Draft[] = [{ type: "context_edit", targetId: other.ids.a, replacement: null }];
  const predictedOmitted = estimateWithEdits(projectedEntries(other.manager), omitted);
  other.manager.appendContextEdit(other.ids.a, null);
  assert.equal(predictedOmitted, piEstimate(other.manager));
});

test("after the run's last turn: the reply's own usage while no edit is on the branch", () => {
  const { manager } = session();
  manager.appendMessage(assistant(123_456, []));
  const messages = manager.buildSessionProjection().messages;
  const turn = { message: messages.at(-1), toolResults: [] };
  assert.equal(estimateAfterTurn(turn, projectedEntries(manager), manager.getBranch(), []), 123_456);
  // A reply without usage: Pi estimates from the last usage before it.
  const bare = session();
  const reply = { ...assistant(0, []), content: [{ type: "text", text: "done" }] };
  bare.manager.appendMessage(reply);
  const bareMessages = bare.manager.buildSessionProjection().messages;
  assert.equal(
    estimateAfterTurn({ message: bareMessages.at(-1), toolResults: [] }, projectedEntries(bare.manager), bare.manager.getBranch(), []),
    piCompaction.estimateContextTokens(bareMessages).tokens,
  );
});

// beforeCompaction: the decision around the checkpoint, with a session past the threshold (usage
// 90,000 + the beta output, 140,008 > 150,000 − 16,384) and a stand-in checkpoint.
const window = (contextWindow: number) => ({ provider: "faux", id: "faux-1", api: "faux", contextWindow });
function turnEnd(manager: Loose, contextWindow = 150_000) {
  const entries = projectedEntries(manager);
  const event = { ...turnOf(manager), entries: [], context: { contextEntries: entries } };
  const ctx = { model: window(contextWindow), sessionManager: manager } as Loose;
  return { event, ctx, entries };
}
const pi = (settings: unknown = {}) => ({ getSettings: () => ({ compaction: settings }) }) as Loose;
const edit = (targetId: string, text: string): Draft => ({ type: "context_edit", targetId, replacement: { content: [{ type: "text", text }] } });
const record = { type: "custom", customType: "context-guard", data: { v: 1, phase: "mid-run", timedOut: false, results: [{ reason: "whole-needed" }] } };

test("beforeCompaction: under the threshold the checkpoint never runs", async () => {
  const { manager } = session();
  const { event, ctx } = turnEnd(manager, 400_000);
  let ran = false;
  const out = await beforeCompaction(pi(), event, ctx, async () => {
    ran = true;
    return { entries: [] };
  });
  assert.deepEqual(out, { handled: false, line: undefined });
  assert.equal(ran, false);
});

test("beforeCompaction: edits that bring Pi under are returned with the record; too little or none, nothing", async () => {
  const { manager, ids } = session();
  const { event, ctx } = turnEnd(manager);
  assert.equal(estimateAfterTurn(event, event.context.contextEntries, manager.getBranch(), []), 140_008);
  const enough = [edit(ids.a, "[context-guard] alpha"), edit(ids.b, "[context-guard] beta"), record];
  const kept = await beforeCompaction(pi(), event, ctx, async () => ({ entries: enough }));
  assert.equal(kept.handled, true);
  assert.deepEqual(kept.entries, enough);
  assert.match(kept.line ?? "", /; 2 outputs distilled → [\d.]+k?, so Pi does not compact$/);
  // A reserve of 149,900 puts the threshold at 100: the same edits (~300 tokens with the system message) leave Pi above it.
  const tight = await beforeCompaction(pi({ reserveTokens: 149_900 }), event, ctx, async () => ({ entries: enough }));
  assert.deepEqual([tight.handled, tight.entries], [true, undefined]);
  assert.match(tight.line ?? "", /threshold 100; distilled it would still be .*, so nothing is appended and Pi compacts$/);
  const none = await beforeCompaction(pi(), event, ctx, async () => ({ entries: [record] }));
  assert.deepEqual([none.handled, none.entries], [true, undefined]);
  assert.match(none.line ?? "", /the checkpoint gave no edits \(kept: whole-needed\), so nothing is appended and Pi compacts$/);
});

test("beforeCompaction: any failure appends nothing and throws nothing", async () => {
  const { manager } = session();
  const { event, ctx } = turnEnd(manager);
  const thrown = await beforeCompaction(pi(), event, ctx, async () => {
    throw new Error("classifier exploded");
  });
  assert.deepEqual([thrown.handled, thrown.entries], [true, undefined]);
  assert.match(thrown.line ?? "", /gave no edits \(classifier exploded\)/);
  const skipped = await beforeCompaction(pi(), event, ctx, async () => ({ entries: [], skipped: "no-classifier" }));
  assert.match(skipped.line ?? "", /gave no edits \(no-classifier\)/);
  const badSettings = await beforeCompaction(pi({ reserveTokens: "lots" }), event, ctx, async () => ({ entries: [] }));
  assert.deepEqual([badSettings.handled, badSettings.entries], [false, undefined]);
  assert.match(badSettings.line ?? "", /not checked, compaction\.reserveTokens is "lots"/);
  const brokenHost = {
    getSettings: () => {
      throw new Error("no settings");
    },
  } as Loose;
  const broken = await beforeCompaction(brokenHost, event, ctx, async () => ({ entries: [] }));
  assert.deepEqual(broken, { handled: false, line: "before Pi compacts: not checked, no settings" });
});
