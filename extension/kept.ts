// What the guard keeps out of the window: the one type both parts read (the
// mirror of crates/base/src/kept.rs). The guard computes the figures; /context
// shows them. The type lives here, below both, and the report gets the figures
// through a `KeptOut` function that extension/index.ts hands it, so neither
// part imports the other.
import type { ExtensionContext } from "@earendil-works/pi-coding-agent";

/** The guard's figures for a session (`Stats` in Rust). */
export interface GuardStats {
  savedChars: number;
  items: number;
  lifetimeChars: number;
  compacted: boolean;
  runs: number;
  checkpoints: number;
  requests: number;
  inputTokens: number;
  costUsd: number;
  /** The guard's net effect on the main model's bill so far (`/guard` and `/context` add it; the status bar does not). */
  bill?: GuardBill;
}

/**
 * The guard's net effect on the main model's bill so far, an estimate (`Bill` in Rust, computed by
 * the core's guard/bill.rs): reads saved − rewrites paid − judge paid. Dollars are `null` without prices.
 */
export interface GuardBill {
  edits: number;
  savedTokens: number;
  rewriteTokens: number;
  /** The session's tokens per character, fitted from its recorded prompts (guard/bill.rs), else 0.25. */
  tokensPerChar: number;
  savedUsd: number | null;
  rewriteUsd: number | null;
  judgeUsd: number;
  netUsd: number | null;
  /** Dollars per million tokens. */
  readPrice: number | null;
  writePrice: number | null;
  prices: "usage" | "catalog" | "usage and catalog" | "none";
  /** The figure in words, the same in every place that shows it. */
  line: string;
  /** The one money answer, `saved $0.27 on this session's bill so far (est.)`; empty without prices or edits. */
  answer: string;
  /** The same in two words for the status bar: `saved $0.27`, `cost $0.01`, `saved <$0.01`. */
  short: string;
}

/** What the guard keeps out of this session's window; `undefined` when the guard is off or cannot say. */
export type KeptOut = (ctx: ExtensionContext) => GuardStats | undefined;
