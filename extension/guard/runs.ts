// What a run is, as the core defines it (guard/run.rs): the run lengths of a
// branch and where runs start, for the `median` estimator of later requests
// and for the audit. No import of Pi: the audit's command line reads it where
// no Pi is installed.
import { callCore } from "../core.ts";
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
 * run (guard/run.rs `run_lengths`: it starts at a user message that is not a steering message, the one
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
 * (guard/run.rs `starts_run`); undefined when the core cannot answer.
 */
export function runStarts(kinds: number[]): boolean[] | undefined {
  const starts = callCore(() => guardCore.runStarts(Uint8Array.from(kinds)));
  return starts.ok ? starts.value : undefined;
}
