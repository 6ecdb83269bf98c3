// The values that cross the wasm boundary for /context. They mirror the Rust
// structs in crates/report/src/ (serde, camelCase); `undefined` is Rust's None.
import type { GuardStats } from "../kept.ts";

/** What the extension reads from Pi, once per open or refresh (`ContextInputs` in Rust). */
export interface ContextInputs {
  usage?: { tokens?: number | null; contextWindow?: number; percent?: number | null };
  model?: { provider: string; id: string; contextWindow?: number };
  /** The current system message, measured as Pi's `estimateTokens` counts it. */
  system: SystemInputs;
  compaction: { settings?: unknown; defaults: { enabled: boolean; reserveTokens: number } };
  messages: Messages;
  history: { count: number; latest?: { tokensBefore: number; summary: string }; kept: number[] };
  /** Pi's `tokensBefore` of a compaction that just finished. */
  compactedFrom?: number;
  /** What the guard keeps out of the window (absent when the guard is switched off). */
  guard?: GuardStats;
  /** Context per request over the branch, the last request's cache, the session's cost. */
  requests: RequestInputs;
  /** The guard's records and the model's recalls on the branch (absent when the guard is off). */
  keptDetail?: KeptInputs;
}

export interface KeptInputs {
  /** Each result of each `context-guard` record, at its record's position on the branch. */
  results: { at: number; kind: string; entryId: string; tool: string; outcome: string; saved: number }[];
  /** Each `recall` call, at its message's position on the branch. */
  recalls: { at: number; entryId: string }[];
}

export interface RequestInputs {
  /** Pi's `calculateContextTokens` of each request on the branch, oldest first. */
  tokens: number[];
  /** Each request's marks: 1 a compaction came before it, 2 a `context_edit`. */
  marks: number[];
  /** The last request's usage. */
  last?: { input: number; cacheRead: number; cacheWrite: number };
  /** Every entry's `usage.cost.total`, all branches, as Pi's footer sums it (absent when 0). */
  cost?: number;
}

export interface SystemInputs {
  /** The content text (a forced prompt, or appended contents). */
  content: string;
  /** The named sections in the message's order, each with its whole text. */
  sections: { name: string; text: string }[];
  /** Each tool definition in `toolsAdded` order, with `JSON.stringify(tool).length`. */
  tools: ToolDigest[];
  /** `JSON.stringify(toolsAdded).length` (0 when there are none). */
  toolsChars: number;
}

export interface ToolDigest {
  name: string;
  chars: number;
}

/**
 * The projected messages, in projection order, as columns (`Messages` in Rust):
 * one count and one kind per message, no object or string per message. The
 * typed arrays cross into wasm as a copy of memory; `kinds` travels in the
 * JSON text.
 */
export interface Messages {
  /** Pi's `estimateTokens` per message (0 for a message it cannot count). */
  tokens: Float64Array;
  /** Each message's kind: an index into `kinds`. */
  kind: Uint32Array;
  /** The distinct kinds. */
  kinds: Kind[];
  /** The short texts of message `index`; the core asks only for the messages it lists. */
  describe: (index: number) => MessageText;
}

/** A message's role and, for an injected message, its type, for a tool result, its tool. */
export interface Kind {
  role: string;
  customType?: string;
  toolName?: string;
}

/** The short texts a descriptor is made from. */
export interface MessageText {
  toolName?: string;
  command?: string;
  text?: string;
}

export type Hue = "hue1" | "hue2" | "hue3" | "hue4" | "hue5" | "meta" | "faint";

export interface Row {
  id: string;
  label: string;
  tokens: number;
  count: number;
  percent: number;
  cells: number;
  /** Its one cell drawn thin: a share under half a cell (report/gauge.rs `thin`). */
  thin: boolean;
  hue: Hue;
  depth: number;
  caption: string;
  tokensText: string;
  percentText: string;
}

export interface Largest {
  index: number;
  role: string;
  bucket: string;
  tokens: number;
  percent: number;
  cells: number;
  /** Its one cell drawn thin: a share under half a cell (report/gauge.rs `thin`). */
  thin: boolean;
  hue: Hue;
  descriptor: string;
  tokensText: string;
  percentText: string;
}

export interface ContextReport {
  headline: {
    tokens?: number;
    window?: number;
    windowSource: "usage" | "model" | "unknown";
    percent?: number;
    free?: number;
    pending: boolean;
  };
  threshold: {
    state: "on" | "off" | "unknownWindow" | "invalid";
    enabled: boolean;
    reserve?: number;
    reserveSource?: "modelOverride" | "settings" | "default";
    modelKey?: string;
    at?: number;
    headroom?: number;
    problem?: string;
  };
  windowGauge: {
    filled: number;
    of: number;
    thresholdCell?: number;
    basis: "host" | "estimate" | "none";
    verdict: "ok" | "near" | "over" | "unknown";
  };
  estimate: number;
  rows: Row[];
  drift: {
    host?: number;
    estimate: number;
    difference?: number;
    note: "none" | "unattributed" | "hostCountsMessagesOnly" | "estimateAbove" | "unknown";
  };
  history: { count: number; latest?: { tokensBefore: number; tokensAfter: number; summaryTokens: number } };
  requests: {
    count: number;
    first: number;
    peak: number;
    peakAt: number;
    last: number;
    compactions: number;
    edits: number;
    cache?: { read: number; written: number; uncached: number };
    cost?: number;
  };
  /** The guard's part by kind, and its outputs recalled after it kept them out, by tool. */
  keptDetail?: {
    kinds: { kind: "large" | "small" | "exchange" | "image"; items: number; chars: number }[];
    tools: { tool: string; keptOut: number; recalled: number }[];
    keptOut: number;
    recalled: number;
  };
  /** The series as collected (added by `readReport`, not by the core): the screen draws it. */
  series?: { tokens: number[]; marks: number[] };
  largest: Largest[];
  compacted?: { before: number; after: number; afterIsEstimate: boolean; line: string };
  sentences: {
    headline: string;
    threshold: string;
    composition: string;
    /** What the rows' bars mean. */
    bars: string;
    drift: string;
    history: string;
    requests: string;
    cache?: string;
    cost?: string;
    guard?: string;
    keptKinds?: string[];
    recalled?: string;
    /** The guard's net effect on the main model's bill so far (an estimate; the guard computes it). */
    bill?: string;
  };
  /** The plain-text report, for every mode but the TUI. */
  text: string;
}
