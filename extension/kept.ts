// What the guard keeps out of the window: the one type both parts read
// (generated from crates/base/src/kept.rs into generated/). The guard computes the figures; /context
// shows them. The type lives here, below both, and the report gets the figures
// through a `KeptOut` function that extension/index.ts hands it, so neither
// part imports the other.
import type { ExtensionContext } from "@earendil-works/pi-coding-agent";
import type { Bill } from "./generated/Bill.ts";
import type { Stats } from "./generated/Stats.ts";

/** The guard's figures for a session (`Stats` in crates/base/src/kept.rs, generated). */
export type GuardStats = Stats;

/**
 * The guard's net effect on the main model's bill so far, an estimate (`Bill` in crates/base/src/kept.rs,
 * generated; computed by the economics crate's bill.rs): reads saved − rewrites paid − judge paid. Dollars
 * are `null` without prices.
 */
export type GuardBill = Bill;

/** What the guard keeps out of this session's window; `undefined` when the guard is off or cannot say. */
export type KeptOut = (ctx: ExtensionContext) => GuardStats | undefined;
