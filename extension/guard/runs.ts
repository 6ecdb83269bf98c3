// What a run is, as the core defines it (guard/span.rs): the run lengths of a
// branch and where runs start, for the `median` estimator of later requests
// and for the audit; and the project's saved sessions' runs, handed over by
// index.ts.
import type { ExtensionContext } from "@earendil-works/pi-coding-agent";
import { callCore } from "../core.ts";
import { safeBranch } from "./cache-facts.ts";
import { guardCore } from "./wasm.ts";

export type BranchEntry = { type?: string; message?: { role?: string; content?: unknown } };

/**
 * One letter per message for the core's `runLengths` and `runStarts`: user, assistant, one with tool calls,
 * tool result, custom, other; undefined for an entry that is not a message.
 */
export function kindOf(entry: BranchEntry): number | undefined {
  if (entry?.type === "custom_message") return 0x63; // c
  if (entry?.type !== "message") return entry?.type === "compaction" || entry?.type === "branch_summary" ? 0x6f : undefined;
  const role = entry.message?.role;
  if (role === "user") return 0x75; // u
  if (role === "toolResult") return 0x72; // r
  if (role !== "assistant") return 0x6f; // o
  const content = entry.message?.content;
  const calls = Array.isArray(content) && content.some((b) => (b as { type?: string } | null)?.type === "toolCall");
  return calls ? 0x74 : 0x61; // t, a
}

/**
 * The provider requests (assistant messages) of each run of a branch, oldest first, as the core defines a
 * run (guard/span.rs `run_lengths`: it starts at a user message that is not a steering message, the one
 * definition the pass uses too). The branch's raw entries (Pi's `getBranch()`, or a saved session's branch
 * as the audit reads it), so runs a compaction or an omitted exchange took out of the context still count.
 * The last run is in it. None when the core cannot answer.
 */
export function runLengths(branch: Iterable<BranchEntry>): number[] {
  const kinds: number[] = [];
  for (const entry of branch) {
    const kind = kindOf(entry);
    if (kind !== undefined) kinds.push(kind);
  }
  const counted = callCore(() => guardCore.runLengths(Uint8Array.from(kinds)));
  return counted.ok ? counted.value : [];
}

/**
 * For each of `kinds` (`kindOf`'s letters), whether that message starts a run, as the core defines it
 * (guard/span.rs `starts_run`); undefined when the core cannot answer.
 */
export function runStarts(kinds: number[]): boolean[] | undefined {
  const starts = callCore(() => guardCore.runStarts(Uint8Array.from(kinds)));
  return starts.ok ? starts.value : undefined;
}

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
