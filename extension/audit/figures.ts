// The figures of one session as Pi recorded them (issue 11 point 2), summed
// entry by entry while a file is read: nothing here keeps an entry. One
// `Tally` counts the branch Pi would resume, another the whole file.

/** Tool output of one tool: results and their characters (text blocks, as Pi's `estimateTokens` counts them ×4). */
export interface ToolOutput {
  results: number;
  chars: number;
}

export interface Cost {
  /** Pi's `usage.cost.total`, summed (US dollars). */
  total: number;
  cacheRead: number;
  cacheWrite: number;
  /** Tokens: `usage.cacheRead` and `usage.cacheWrite`, summed. */
  cacheReadTokens: number;
  cacheWriteTokens: number;
}

export interface Figures {
  /** Assistant messages: one provider request each. */
  requests: number;
  /** Context tokens as Pi counts them (`calculateContextTokens` of each assistant message's usage). */
  peakContext: number;
  finalContext: number;
  /**
   * Context tokens of each request with valid usage, in order (Pi's rule, as `/context` counts them:
   * not aborted, not an error, some tokens).
   */
  contextSeries: number[];
  /** Indexes into `contextSeries`: the request before which the guard edited (a `context_edit`) or Pi compacted. */
  editsAt: number[];
  compactionsAt: number[];
  toolOutput: Record<string, ToolOutput>;
  /** What the guard's records say it kept out, by result kind: `beforeChars - afterChars` of every result not kept. */
  keptOut: Record<string, number>;
  guardRecords: number;
  /** The records' `savedChars`, summed: `/guard`'s "on this branch in all". */
  guardSavedChars: number;
  /** The classifier's cost the records hold. */
  guardCostUsd: number;
  /** `recall` calls made after the first guard record, and the characters their results brought back. */
  recallsAfterDistill: number;
  recalledChars: number;
  compactions: number;
  contextEdits: number;
  cost: Cost;
}

export function emptyFigures(): Figures {
  return {
    requests: 0,
    peakContext: 0,
    finalContext: 0,
    contextSeries: [],
    editsAt: [],
    compactionsAt: [],
    toolOutput: {},
    keptOut: {},
    guardRecords: 0,
    guardSavedChars: 0,
    guardCostUsd: 0,
    recallsAfterDistill: 0,
    recalledChars: 0,
    compactions: 0,
    contextEdits: 0,
    cost: { total: 0, cacheRead: 0, cacheWrite: 0, cacheReadTokens: 0, cacheWriteTokens: 0 },
  };
}

type Loose = Record<string, any>;

const num = (v: unknown): number => (typeof v === "number" && Number.isFinite(v) ? v : 0);

/** Characters of a message's text blocks (a string content counts whole). */
export function textChars(content: unknown): number {
  if (typeof content === "string") return content.length;
  if (!Array.isArray(content)) return 0;
  let n = 0;
  for (const b of content) if (b?.type === "text" && typeof b.text === "string") n += b.text.length;
  return n;
}

/** Pi's `calculateContextTokens` (compaction.js): `totalTokens`, else the four counts summed. */
export function contextTokens(usage: Loose | undefined): number {
  if (!usage) return 0;
  return num(usage.totalTokens) || num(usage.input) + num(usage.output) + num(usage.cacheRead) + num(usage.cacheWrite);
}

/** Sums the figures of a session's entries, in file order. */
export class Tally {
  readonly f = emptyFigures();
  /** Tool call ids of `recall` calls made after the first record, waiting for their results. */
  private recalls = new Set<string>();

  add(entry: Loose): void {
    const f = this.f;
    switch (entry.type) {
      case "message":
        this.message(entry.message ?? {});
        break;
      case "compaction":
        f.compactions++;
        f.compactionsAt.push(f.contextSeries.length);
        break;
      case "context_edit":
        f.contextEdits++;
        if (f.editsAt.at(-1) !== f.contextSeries.length) f.editsAt.push(f.contextSeries.length);
        break;
      case "custom":
        if (entry.customType === "context-guard") this.record(entry.data ?? {});
        break;
    }
  }

  private message(m: Loose): void {
    const f = this.f;
    if (m.role === "assistant") {
      f.requests++;
      const usage = m.usage as Loose | undefined;
      // Pi skips aborted and failed replies and all-zero usage when it reads the context's size (getAssistantUsage).
      const counted = m.stopReason !== "aborted" && m.stopReason !== "error" ? contextTokens(usage) : 0;
      if (counted > 0) {
        f.contextSeries.push(counted);
        f.peakContext = Math.max(f.peakContext, counted);
        f.finalContext = counted;
      }
      const cost = usage?.cost as Loose | undefined;
      f.cost.total += num(cost?.total);
      f.cost.cacheRead += num(cost?.cacheRead);
      f.cost.cacheWrite += num(cost?.cacheWrite);
      f.cost.cacheReadTokens += num(usage?.cacheRead);
      f.cost.cacheWriteTokens += num(usage?.cacheWrite);
      if (f.guardRecords > 0 && Array.isArray(m.content)) {
        for (const b of m.content) if (b?.type === "toolCall" && b.name === "recall" && typeof b.id === "string") this.recalls.add(b.id);
      }
    } else if (m.role === "toolResult") {
      const name = typeof m.toolName === "string" ? m.toolName : "(unnamed)";
      const t = (f.toolOutput[name] ??= { results: 0, chars: 0 });
      const chars = textChars(m.content);
      t.results++;
      t.chars += chars;
      if (this.recalls.delete(m.toolCallId)) {
        f.recallsAfterDistill++;
        f.recalledChars += chars;
      }
    }
  }

  private record(data: Loose): void {
    const f = this.f;
    f.guardRecords++;
    f.guardSavedChars += num(data.savedChars);
    f.guardCostUsd += num(data.costUsd);
    for (const r of Array.isArray(data.results) ? data.results : []) {
      if (r?.outcome === "kept" || typeof r?.kind !== "string") continue;
      f.keptOut[r.kind] = (f.keptOut[r.kind] ?? 0) + Math.max(0, num(r.beforeChars) - num(r.afterChars));
    }
  }
}
