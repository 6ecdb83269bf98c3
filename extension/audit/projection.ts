// The audit's own projection of a branch, for a machine where no Pi can be
// found (issue 19): what the model saw at the branch's end, from the facts of
// Pi's session format (session-manager.js in 1.3.0 and 1.6.0): the newest
// compaction on the branch stands first, followed by the entries it kept
// (from its `firstKeptEntryId`, system messages left out) and everything
// after it; each entry's newest `context_edit` replaces its content (`null`
// removes it; a string becomes one text block for assistant and tool
// messages); a compaction's summary, a branch summary and a custom message
// become the messages Pi makes of them. Pi's own projection is used whenever
// a Pi is found; tests/unit/audit-projection.test.ts checks that this one
// gives the same "guard would" figures on the audit's test sessions.
import type { ProjectedEntry } from "../guard/collect.ts";
import type { Loose } from "../core.ts";

/** The messages Pi makes of one entry (`sessionEntryToContextMessages`). */
function messagesOf(entry: Loose): unknown[] {
  switch (entry.type) {
    case "message": {
      const m = entry.message as Loose | undefined;
      if (!m) return [];
      if (m.role === "system" && m.content == null) return [{ ...m, content: "" }];
      if ((m.role === "user" || m.role === "assistant" || m.role === "toolResult") && m.content == null) return [{ ...m, content: [] }];
      return [m];
    }
    case "custom_message":
      return [
        {
          role: "custom",
          customType: entry.customType,
          content: entry.content ?? [],
          display: entry.display,
          details: entry.details,
          timestamp: Date.parse(entry.timestamp),
        },
      ];
    case "branch_summary":
      return entry.summary ? [{ role: "branchSummary", summary: entry.summary, fromId: entry.fromId, timestamp: Date.parse(entry.timestamp) }] : [];
    case "compaction": {
      const summary = { role: "compactionSummary", summary: entry.summary, tokensBefore: entry.tokensBefore, timestamp: Date.parse(entry.timestamp) };
      return entry.systemMessage ? [entry.systemMessage, summary] : [summary];
    }
    default:
      return [];
  }
}

const EDITABLE = new Set(["user", "assistant", "toolResult", "custom"]);

function edited(messages: unknown[], edit: Loose | undefined): unknown[] {
  if (!edit) return messages;
  const replacement = edit.replacement as Loose | null | undefined;
  if (replacement === null) return [];
  return messages.map((message) => {
    const m = message as Loose;
    if (!EDITABLE.has(m.role)) return m;
    const asText = (m.role === "assistant" || m.role === "toolResult") && typeof replacement?.content === "string";
    return { ...m, content: asText ? [{ type: "text", text: replacement.content }] : replacement?.content };
  });
}

/** The branch (its entries root first, as the audit reads them) as Pi would project it. */
export function branchProjection(branch: readonly Loose[]): { entries: ProjectedEntry[] } {
  let newest = -1;
  for (let i = 0; i < branch.length; i++) if (branch[i].type === "compaction") newest = i;
  let context: Loose[] = [...branch];
  if (newest >= 0) {
    const compaction = branch[newest];
    const kept: Loose[] = [];
    let found = false;
    for (let i = 0; i < newest; i++) {
      const e = branch[i];
      if (e.id === compaction.firstKeptEntryId) found = true;
      if (found && !(e.type === "message" && e.message?.role === "system")) kept.push(e);
    }
    context = [compaction, ...kept, ...branch.slice(newest + 1)];
  }
  const edits = new Map<string, Loose>();
  for (const e of context) if (e.type === "context_edit") edits.set(e.targetId, e);
  return {
    entries: context.map((sourceEntry, index) => ({
      sourceEntry: sourceEntry as ProjectedEntry["sourceEntry"],
      messages: sourceEntry.type === "compaction" && index > 0 ? [] : edited(messagesOf(sourceEntry), edits.get(sourceEntry.id)),
    })),
  };
}
