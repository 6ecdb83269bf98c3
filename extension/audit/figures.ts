// The figures of one session as Pi recorded them (issue 11 point 2), summed
// entry by entry while a file is read: nothing here keeps an entry. One
// `Tally` counts the branch Pi would resume, another the whole file;
// `LaterRequests` keeps, for the branch, how many requests followed each
// run. Then the estimates a person reads (issue 19 part 6): tokens from
// characters as Pi's `estimateTokens` counts them, dollars from the prices
// the session's own recorded usage implies.

import { textChars } from "../guard/bill.ts";
import { type BranchEntry, kindOf, runStarts } from "../guard/runs.ts";
import { guardCore } from "../guard/wasm.ts";
import type { Loose } from "../core.ts";

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
  /** `usage.cost.input` (dollars) and `usage.input` (tokens) summed: the input not read from a cache nor written to one. */
  input: number;
  inputTokens: number;
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
    cost: emptyCost(),
  };
}

export function emptyCost(): Cost {
  return { total: 0, cacheRead: 0, cacheWrite: 0, cacheReadTokens: 0, cacheWriteTokens: 0, input: 0, inputTokens: 0 };
}

const num = (v: unknown): number => (typeof v === "number" && Number.isFinite(v) ? v : 0);

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
      f.cost.input += num(cost?.input);
      f.cost.inputTokens += num(usage?.input);
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
      const kept = Math.max(0, num(r.beforeChars) - num(r.afterChars));
      f.keptOut[r.kind] = (f.keptOut[r.kind] ?? 0) + kept;
    }
  }
}

/**
 * For each tool result and prompt of a branch, the requests made after the end of its run, up to the
 * next compaction: the requests that an edit at that run end would have spared it. Fed the branch's
 * entries in order. A run is what the core says it is (guard/run.rs `starts_run`, as the guard's
 * estimator counts runs): it starts at a prompt, and a steering message sent during it belongs to it.
 */
export class LaterRequests {
  private entries: { id: string; kind: number | undefined; compaction: boolean }[] = [];
  /** Entry id → requests after its run, counted on the first question. */
  private counted: Map<string, number> | undefined;

  add(entry: Loose): void {
    this.entries.push({ id: String(entry.id ?? ""), kind: kindOf(entry as BranchEntry), compaction: entry.type === "compaction" });
    this.counted = undefined;
  }

  /** Requests after the end of the run that holds `entryId` (0 for the last run, and for an id not on the branch). */
  after(entryId: string): number {
    this.counted ??= this.count();
    return this.counted.get(entryId) ?? 0;
  }

  private count(): Map<string, number> {
    const kinds = this.entries.flatMap((e) => (e.kind === undefined ? [] : [e.kind]));
    const starts = runStarts(kinds) ?? [];
    const runOf = new Map<string, number>();
    /** Per run: the requests made before its end; per run a compaction closed: the requests before it. */
    const startOf: number[] = [];
    const endOf: number[] = [];
    let current: string[] = [];
    let requests = 0;
    let at = 0;
    const endRun = () => {
      if (current.length === 0) return;
      const run = startOf.push(requests) - 1;
      for (const id of current) runOf.set(id, run);
      current = [];
    };
    for (const e of this.entries) {
      if (e.compaction) {
        // Runs that ended before it are in its summary from here on; the running one is among the kept entries.
        while (endOf.length < startOf.length) endOf.push(requests);
      }
      if (e.kind === undefined) continue;
      const start = starts[at++] === true;
      if (e.kind === KIND_REPLY || e.kind === KIND_CALLS) requests++;
      else if (start) {
        endRun();
        current.push(e.id);
      } else if (e.kind === KIND_USER || e.kind === KIND_RESULT) current.push(e.id);
    }
    const after = new Map<string, number>();
    for (const [id, run] of runOf) after.set(id, (endOf[run] ?? requests) - startOf[run]);
    return after;
  }
}

// `kindOf`'s letters.
const KIND_USER = 0x75;
const KIND_REPLY = 0x61;
const KIND_CALLS = 0x74;
const KIND_RESULT = 0x72;

/** Tokens as Pi's `estimateTokens` counts text: characters / 4. */
export const tokensOf = (chars: number): number => chars / 4;

/** Dollars per token that recorded usage implies; undefined where it records no such cost. */
export interface Prices {
  /** Everything sent as context: the dollars of input, cache reads and cache writes over their tokens. */
  input: number | undefined;
  /** A token read from the cache, by the bill's rule (economics/bill.rs `usage_prices`). */
  cacheRead: number | undefined;
  /** A token written again, by the bill's rule: the cache write's price, else the uncached input's. */
  cacheWrite: number | undefined;
  /** What a rewrite costs over a read (economics/bill.rs `premium`). */
  premium: number | undefined;
}

const per = (dollars: number, tokens: number) => (dollars > 0 && tokens > 0 ? dollars / tokens : undefined);

export function pricesOf(c: Cost): Prices {
  // The read and write prices and the premium are the core's, the same the bill (and /guard) use.
  const [read, write, premium] = guardCore.usagePrices(c.cacheRead, c.cacheReadTokens, c.cacheWrite, c.cacheWriteTokens, c.input, c.inputTokens);
  const known = (x: number | undefined) => (x !== undefined && Number.isFinite(x) ? x : undefined);
  return {
    input: per(c.input + c.cacheRead + c.cacheWrite, c.inputTokens + c.cacheReadTokens + c.cacheWriteTokens),
    cacheRead: known(read),
    cacheWrite: known(write),
    premium: known(premium),
  };
}

/** What the guard did on a branch, from its records. */
export interface Did {
  passes: number;
  /** Tokens its records kept out of the context. */
  keptTokens: number;
  /**
   * Tokens the later requests did not send because of it (each request counted): the bill's figure
   * (guard/bill.rs, the one `/guard` shows), null where the bill was not computed.
   */
  sparedTokens: number | null;
  classifierUsd: number;
  recalls: number;
  recalledTokens: number;
}

/** What the guard would do on a branch, in tokens and dollars. */
export interface Would {
  /** Old images: removed with no classifier. */
  images: number;
  imageTokens: number;
  /** Every output and image candidate (the upper bound). */
  candidates: number;
  candidateTokens: number;
  superseded: number;
  /** Tokens the later requests would not have sent: old images only, and every candidate removed whole. */
  sparedLowerTokens: number;
  sparedUpperTokens: number;
  sparedLowerUsd: number | null;
  sparedUpperUsd: number | null;
  /** Tokens the provider writes to its cache again: per run end, the largest rewrite among its candidates. */
  rewriteTokens: number;
  /** What writing them costs over reading them from the cache. */
  rewriteUsd: number | null;
  /** Old exchanges the guard would offer to summarise (not in the bounds: they hold the outputs). */
  exchanges: number;
  exchangeTokens: number;
}

/** The part of would-do.ts's `WouldDo` the estimate reads (named here: would-do.ts reads read.ts, which reads this). */
export interface Candidates {
  candidates: { kind: string; entryId: string; chars: number; rewriteChars: number; superseded: boolean; run: number }[];
}

export interface Estimate {
  /** Whose recorded usage gave the prices: this session's, all the audited sessions' together, or none (no costs recorded). */
  priceFrom: "session" | "all" | "none";
  /** Dollars per input token used for the dollars below. */
  pricePerToken: number | null;
  did: Did | null;
  would: Would | null;
}

/**
 * Tokens and dollars of what the guard did (its records) and would do (the candidates) on a branch.
 * Dollars are estimates: tokens not sent × the price per input token of the session's own usage (else
 * of all the sessions audited); a cache rewrite costs the cache-write price less the cache-read price.
 */
export function estimate(
  f: Figures,
  would: Candidates | undefined,
  later: (entryId: string) => number,
  own: Prices,
  all: Prices,
  billSavedTokens?: number,
): Estimate {
  const priceFrom = own.input !== undefined ? "session" : all.input !== undefined ? "all" : "none";
  const p = priceFrom === "session" ? own : all;
  const price = p.input;
  const usd = (tokens: number) => (price === undefined ? null : tokens * price);
  const did: Did | null =
    f.guardRecords > 0
      ? {
          passes: f.guardRecords,
          keptTokens: tokensOf(Object.values(f.keptOut).reduce((n, c) => n + c, 0)),
          sparedTokens: billSavedTokens ?? null,
          classifierUsd: f.guardCostUsd,
          recalls: f.recallsAfterDistill,
          recalledTokens: tokensOf(f.recalledChars),
        }
      : null;
  let w: Would | null = null;
  if (would) {
    w = {
      images: 0,
      imageTokens: 0,
      candidates: 0,
      candidateTokens: 0,
      superseded: 0,
      sparedLowerTokens: 0,
      sparedUpperTokens: 0,
      sparedLowerUsd: null,
      sparedUpperUsd: null,
      rewriteTokens: 0,
      rewriteUsd: null,
      exchanges: 0,
      exchangeTokens: 0,
    };
    // A pass rewrites the cache once, from its earliest edit: the largest rewrite of its run end.
    const rewriteOfRun = new Map<number, number>();
    for (const c of would.candidates) {
      const t = tokensOf(c.chars);
      if (c.kind === "exchange") {
        w.exchanges++;
        w.exchangeTokens += t;
        continue;
      }
      const spared = t * later(c.entryId);
      w.candidates++;
      w.candidateTokens += t;
      w.sparedUpperTokens += spared;
      if (c.superseded) w.superseded++;
      if (c.kind === "image") {
        w.images++;
        w.imageTokens += t;
        w.sparedLowerTokens += spared;
      }
      rewriteOfRun.set(c.run, Math.max(rewriteOfRun.get(c.run) ?? 0, c.rewriteChars));
    }
    for (const chars of rewriteOfRun.values()) w.rewriteTokens += tokensOf(chars);
    w.sparedLowerUsd = usd(w.sparedLowerTokens);
    w.sparedUpperUsd = usd(w.sparedUpperTokens);
    w.rewriteUsd = p.premium === undefined ? null : w.rewriteTokens * p.premium;
  }
  return { priceFrom, pricePerToken: price ?? null, did, would: w };
}
