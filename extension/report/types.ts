// The values that cross the wasm boundary for /context: the inputs, written
// here to mirror the Rust structs in crates/report/src/input.rs (serde,
// camelCase; `undefined` is Rust's None), and the report, generated.
import type { ContextReport as CoreReport } from "../generated/ContextReport.ts";
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

// The report's own types are generated from the Rust structs (crates/report, ts-rs; scripts/gen-types.sh),
// so the two cannot drift apart: `npm test` fails when extension/generated/ is not what the crates give.
export type { Hue } from "../generated/Hue.ts";
export type { Largest } from "../generated/Largest.ts";
export type { Row } from "../generated/Row.ts";

/** The report as the core builds it, with the series `readReport` adds for the screen (not the core's). */
export type ContextReport = CoreReport & { series?: { tokens: number[]; marks: number[] } };
