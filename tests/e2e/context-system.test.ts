// /context's system rows inside real Pi: the prompt by section, each context
// file by its path, each tool definition, summing to Pi's own estimateTokens of
// the current system message exactly; tools that change during the session;
// and a composition that is Pi's estimate of the projection, so the drift line
// holds only what the provider counted beyond it.
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { agent, ai, type Loose, piVersion } from "../harness/pi.ts";
import { startSession } from "../harness/session.ts";
import { recorder } from "./context-helpers.ts";

const row = (report: Loose, id: string) => report.rows.find((r: Loose) => r.id === id);
const current = (pi: Loose) => ai.getCurrentSystemMessage(pi.projection().messages);

/** An extension tool, as a user would add one from an extension or MCP. */
const lookupTool = (pi: Loose) =>
  pi.registerTool({
    name: "lookup_ticket",
    label: "Lookup ticket",
    description: "Looks up a ticket in the tracker by its id and returns its title, state and the last comments.",
    parameters: { type: "object", properties: { id: { type: "string", description: "The ticket id, e.g. CG-12" } }, required: ["id"] },
    execute: async () => ({ content: [{ type: "text", text: "CG-12: open" }], details: {} }),
  });

const SKILL =
  "---\nname: release-notes\ndescription: Writes release notes from the changelog and the merged pull requests.\n---\n\n# Release notes\nRead CHANGELOG.md first.\n";

/** The system rows' checks against the current system message of the projection. */
function assertSystemRows(report: Loose, system: Loose) {
  const exact = agent.estimateTokens(system);
  assert.equal(row(report, "system").tokens + row(report, "tools").tokens, exact, "the two rows are Pi's estimateTokens of the message");
  const inside = (prefix: string) => report.rows.filter((r: Loose) => r.depth === 1 && r.id.startsWith(prefix));
  assert.equal(
    inside("system:").reduce((s: number, r: Loose) => s + r.tokens, 0),
    row(report, "system").tokens,
    "the sections sum to the prompt row",
  );
  for (const name of Object.keys(system.sections ?? {})) assert.ok(row(report, `system:${name}`), `a row for the section ${name}`);
  const tools = system.toolsAdded ?? [];
  assert.equal(row(report, "tools").count, tools.length);
  const toolRows = inside("tool:");
  assert.deepEqual(toolRows.map((r: Loose) => r.label).sort(), tools.map((t: Loose) => t.name).sort());
  for (const t of tools) {
    const chars = JSON.stringify(t).length;
    assert.ok(Math.abs(row(report, `tool:${t.name}`).tokens - chars / 4) < 1, `${t.name}: its own definition`);
  }
  const tokens = toolRows.map((r: Loose) => r.tokens);
  assert.deepEqual(
    tokens,
    [...tokens].sort((a, b) => b - a),
    "largest first",
  );
  const perTool = tokens.reduce((s: number, t: number) => s + t, 0);
  assert.ok(perTool <= row(report, "tools").tokens, "brackets and commas stay in the definitions row");
}

test(`Pi ${piVersion}: the system rows are the current system message, section by section, file by file, tool by tool`, async () => {
  const rec = recorder();
  const pi = await startSession({
    files: { "AGENTS.md": "Run the tests with npm test.\nKeep commits small.\n", ".pi/skills/release-notes/SKILL.md": SKILL },
    // A context file in the folder above the session's: Pi reads it as an ancestor's.
    beforeStart: (agentDir) => writeFileSync(join(agentDir, "..", "AGENTS.md"), "Company-wide: never push to main.\n"),
    extensions: [rec.extension, lookupTool],
    script: ["Hello."],
  });
  try {
    await pi.prompt("Hi");
    await pi.prompt("/context");
    const report = rec.last();
    const system = current(pi);
    assertSystemRows(report, system);

    // Each context file's block, its wrapper included, on its own row by path.
    const context: string = system.sections.project_context;
    const blocks = [...context.matchAll(/<project_instructions path="([^"]*)">\n[\s\S]*?\n<\/project_instructions>/g)];
    assert.equal(blocks.length, 2, context);
    for (const [block, path] of blocks) {
      const label = path === join(pi.cwd, "AGENTS.md") ? "AGENTS.md" : path;
      const r = row(report, `system:file:${label}`);
      assert.ok(r, `a row for ${label} in ${report.rows.map((x: Loose) => x.id)}`);
      assert.ok(Math.abs(r.tokens - block.length / 4) < 1, `${label}: ${r.tokens} for ${block.length} characters`);
    }
    assert.ok(row(report, "system:skills"), "the skill's section");
    assert.match(system.sections.skills, /release-notes/);
    assert.ok(row(report, "tool:lookup_ticket"), "the extension's tool by name");

    const text = pi.notifications.at(-1)?.message ?? "";
    for (const label of ["preamble", "project_context", "AGENTS.md", "skills", "cwd", "lookup_ticket", "read"]) {
      assert.match(text, new RegExp(`\\n {4}${label} +[\\d.]+k? +[\\d.]+%`), `${label} in:\n${text}`);
    }

    // The composition is Pi's estimate of the projection: the current system message, then every other message.
    const others = pi.projection().messages.filter((m: Loose) => m.role !== "system");
    const piEstimate = agent.estimateTokens(system) + others.reduce((s: number, m: Loose) => s + agent.estimateTokens(m), 0);
    assert.equal(report.estimate, piEstimate);
    assert.equal(report.drift.difference, pi.session.getContextUsage().tokens - piEstimate);
  } finally {
    await pi.dispose();
  }
});

test(`Pi ${piVersion}: tools that change during the session: the report follows the latest definitions`, async () => {
  const rec = recorder();
  const pi = await startSession({ extensions: [rec.extension, lookupTool], script: ["One.", "Two."] });
  try {
    await pi.prompt("Hi");
    await pi.prompt("/context");
    assert.ok(row(rec.last(), "tool:lookup_ticket"));
    const before = row(rec.last(), "tools").count;

    pi.session.setActiveToolsByName(pi.session.getActiveToolNames().filter((n: string) => n !== "lookup_ticket"));
    await pi.prompt("Again");
    const systems = pi.projection().messages.filter((m: Loose) => m.role === "system");
    assert.ok(systems.length >= 2 && systems.some((m: Loose) => m.toolsRemoved), "a toolsRemoved patch in the projection");
    await pi.prompt("/context");
    const report = rec.last();
    assert.equal(row(report, "tool:lookup_ticket"), undefined);
    assert.equal(row(report, "tools").count, before - 1);
    assertSystemRows(report, current(pi));
  } finally {
    await pi.dispose();
  }
});

test(`Pi ${piVersion}: on a plain session the drift line holds only what the provider counted beyond Pi's estimate`, async () => {
  const rec = recorder();
  const pi = await startSession({ extensions: [rec.extension], script: ["Hello."] });
  try {
    await pi.prompt("/context");
    // Before the first prompt there is no system message yet: the prompt and the active tools stand in.
    const early = rec.last();
    assert.ok(row(early, "system").tokens > 0 && row(early, "tools").count === pi.session.getActiveToolNames().length);

    await pi.prompt("Hi");
    await pi.prompt("/context");
    const report = rec.last();
    const system = current(pi);
    assertSystemRows(report, system);
    const messages = pi.projection().messages.filter((m: Loose) => m.role !== "system");
    const piEstimate = agent.estimateTokens(system) + messages.reduce((s: number, m: Loose) => s + agent.estimateTokens(m), 0);
    const host = pi.session.getContextUsage().tokens;
    assert.equal(report.drift.difference, host - piEstimate);
    const sign = host - piEstimate > 0 ? "\\+" : host === piEstimate ? "" : "-";
    assert.match(pi.notifications.at(-1)?.message ?? "", new RegExp(`Drift: Pi [\\d.]+k? vs the rows' sum [\\d.]+k?, (${sign}\\d+|no difference)`));
  } finally {
    await pi.dispose();
  }
});

test(`Pi ${piVersion}: tool results by tool (count, tokens, share) and tool definitions largest first, in the text report`, async () => {
  const rec = recorder();
  const pi = await startSession({
    files: { "big.txt": "line of the big file\n".repeat(300), "small.txt": "tiny\n" },
    extensions: [rec.extension],
    script: [
      [
        { tool: "read", args: { path: "big.txt" } },
        { tool: "read", args: { path: "small.txt" } },
        { tool: "bash", args: { command: "echo hi" } },
      ],
      { tool: "grep", args: { pattern: "tiny", path: "." } },
      "Done.",
    ],
  });
  try {
    pi.session.setActiveToolsByName([...pi.session.getActiveToolNames(), "grep"]);
    await pi.prompt("Read the files");
    await pi.prompt("/context");
    const report = rec.last();
    const results = pi.projection().messages.filter((m: Loose) => m.role === "toolResult");
    const names = [...new Set(results.map((m: Loose) => m.toolName))] as string[];
    assert.deepEqual(names.sort(), ["bash", "grep", "read"]);
    const children = report.rows.filter((r: Loose) => r.id.startsWith("result:"));
    for (const name of names) {
      const mine = results.filter((m: Loose) => m.toolName === name);
      const r = row(report, `result:${name}`);
      assert.equal(r.count, mine.length, name);
      assert.equal(
        r.tokens,
        mine.reduce((s: number, m: Loose) => s + agent.estimateTokens(m), 0),
        name,
      );
      assert.ok(Math.abs(r.percent - (r.tokens * 100) / report.estimate) < 1e-9, `${name}: a share of the composition`);
    }
    assert.equal(
      children.reduce((s: number, r: Loose) => s + r.tokens, 0),
      row(report, "toolResults").tokens,
    );
    assert.equal(children[0].label, "read", "the largest first");
    const text = pi.notifications.at(-1)?.message ?? "";
    assert.match(text, /\n {2}Tool results \(4\) +[\d.]+k? +[\d.]+% +█+░*\n {4}read \(2\) +[\d.]+k? +[\d.]+% +█+░*\n/);
    const definitions = report.rows.filter((r: Loose) => r.id.startsWith("tool:"));
    assert.ok(
      definitions.some((r: Loose) => r.label === "grep"),
      "a tool activated mid-session is listed",
    );
    const tokens = definitions.map((r: Loose) => r.tokens);
    assert.deepEqual(
      tokens,
      [...tokens].sort((a, b) => b - a),
    );
  } finally {
    await pi.dispose();
  }
});
