// The values that cross the wasm boundary for /context. They mirror the Rust
// structs in crates/core/src/report/ (serde, camelCase); `undefined` is Rust's None.

/** What the extension reads from Pi, once per open or refresh (`ContextInputs` in Rust). */
export interface ContextInputs {
  usage?: { tokens?: number | null; contextWindow?: number; percent?: number | null };
  model?: { provider: string; id: string; contextWindow?: number };
  systemPrompt: string;
  tools: ToolDigest[];
  compaction: { settings?: unknown; defaults: { enabled: boolean; reserveTokens: number } };
  messages: MessageDigest[];
  history: { count: number; latest?: { tokensBefore: number; summary: string }; kept: number[] };
  /** Pi's `tokensBefore` of a compaction that just finished. */
  compactedFrom?: number;
}

export interface ToolDigest {
  name: string;
  description: string;
  /** The parameter schema as JSON text. */
  parameters: string;
}

/** One projected message: Pi's token count and a few short strings, never its whole content. */
export interface MessageDigest {
  role: string;
  tokens: number;
  customType?: string;
  toolName?: string;
  command?: string;
  text?: string;
  system?: { content: string; sections: Record<string, string | null> };
}

export type Hue = "hue1" | "hue2" | "hue3" | "hue4" | "hue5" | "meta" | "faint";

export interface Row {
  id: string;
  label: string;
  tokens: number;
  count: number;
  percent: number;
  cells: number;
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
  largest: Largest[];
  /** Each projected message's count as the report used it, in projection order. */
  counts: number[];
  compacted?: { before: number; after: number; afterIsEstimate: boolean; line: string };
  sentences: { headline: string; threshold: string; composition: string; drift: string; history: string };
  /** The plain-text report, for every mode but the TUI. */
  text: string;
}
