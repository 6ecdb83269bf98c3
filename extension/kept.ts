// What the guard keeps out of the window: the one type both parts read (the
// mirror of crates/core/src/kept.rs). The guard computes the figures; /context
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
}

/** What the guard keeps out of this session's window; `undefined` when the guard is off or cannot say. */
export type KeptOut = (ctx: ExtensionContext) => GuardStats | undefined;
