// The earlier runs the `median` estimator of later requests reads: this
// session's, counted from its branch, and the project's saved sessions',
// handed over by index.ts (read by the audit's reader in the background).
import type { ExtensionContext } from "@earendil-works/pi-coding-agent";
import { safeBranch } from "./cache-facts.ts";
import { type BranchEntry, runLengths } from "./runs.ts";

/**
 * The run lengths of the project's saved sessions, for the `median` estimator (issue 20): read by the
 * audit's reader (audit/in-pi.ts), handed over by index.ts. `start` begins the read in the background at
 * a session's start; `get` says what has been read so far (nothing while it is read) and why some is not.
 */
export interface SavedRuns {
  start: (ctx: ExtensionContext, warn: (message: string) => void) => void;
  get: (ctx: ExtensionContext) => { runs: number[]; note?: string };
}

// Set once by `registerGuard` from what index.ts hands it; none until then (and in tests).
let saved: SavedRuns | undefined;

/** Where `earlierRuns` takes the saved sessions' runs from. */
export function useSavedRuns(source: SavedRuns | undefined): void {
  saved = source;
}

/** This session's earlier runs (the current one, still running, left out), as `runLengths` counts them. */
function sessionRuns(branch: readonly unknown[]): number[] {
  // No branch to read (an empty one): no earlier run, the estimator falls back to the turns so far.
  return runLengths(branch as BranchEntry[]).slice(0, -1);
}

/** What the saved sessions gave so far; nothing when they are not handed over or fail. */
function savedOf(ctx: ExtensionContext): { runs: number[]; note?: string } {
  try {
    return saved?.get(ctx) ?? { runs: [] };
  } catch (error) {
    return { runs: [], note: `saved sessions not read: ${(error as Error).message}` };
  }
}

/**
 * The lengths of the runs the `median` estimator reads (`worth::later_requests`): the project's saved
 * sessions' runs, then this session's before the current one (newest last).
 */
export function earlierRuns(ctx: ExtensionContext, branch: readonly unknown[]): number[] {
  return [...savedOf(ctx).runs, ...sessionRuns(branch)];
}

/** How many earlier runs the estimator has, by where they come from, as `/guard`'s input names them. */
export function earlierRunCounts(ctx: ExtensionContext): { earlierRunsSession: number; earlierRunsSaved: number; earlierRunsNote?: string } {
  const { runs, note } = savedOf(ctx);
  return { earlierRunsSession: sessionRuns(safeBranch(ctx)).length, earlierRunsSaved: runs.length, earlierRunsNote: note };
}
