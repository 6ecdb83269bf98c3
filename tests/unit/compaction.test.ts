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
import { estimateAfterTurn, estimateWithEdits, type Draft } from "../../extension/guard/compaction.ts";
import { agent, type Loose, piModules } from "../harness/pi.ts";

const piCompaction: Loose = await import(
  pathToFileURL(join(piModules, "@earendil-works", "pi-coding-agent", "dist", "core", "compaction", "compaction.js")).href
);
const piEstimate = (manager: Loose): number => piCompaction.estimateProjectedContextTokens(manager.buildSessionProjection(), manager.getBranch()).tokens;

const usage = (total: number) => ({ input: total - 10, output: 10, cacheRead: 0, cacheWrite: 0, totalTokens: total, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } });
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
  assert.equal(predicted, 90_000 + Math.ceil(("beta line\n".repeat(20_003)).length / 4));
});

test("a context_edit after the last usage: the whole projection (system sections and tools, images at 4,800 characters)", () => {
  const { manager, ids } = session();
  manager.appendContextEdit(ids.prompt, { content: [{ type: "text", text: "Why did it stop? (edited)" }] });
  const predicted = estimateAfterTurn(turnOf(manager), projectedEntries(manager), manager.getBranch(), []);
  assert.equal(predicted, piEstimate(manager));
  // Not the usage-based figure: the edit came after the usage, so Pi no longer trusts it.
  assert.notEqual(predicted, 90_000 + Math.ceil(("beta line\n".repeat(20_003)).length / 4));
  // At turn_end the drafts are not on the branch yet: the boundary's preview applies them, and the
  // branch Pi checks afterwards has them after its last entry.
  const fresh = session();
  const drafts: Draft[] = [{ type: "context_edit", targetId: fresh.ids.prompt, replacement: { content: [{ type: "text", text: "Why did it stop? (edited)" }] } }];
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
