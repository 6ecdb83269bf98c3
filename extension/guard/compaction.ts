// Distill before compacting (issue 9 part 3), the host's half: predicting Pi's
// own estimate of the context after a turn, before and with a checkpoint's
// edits. The decision is the core's (crates/guard/src/compaction.rs).
//
// Pi decides on threshold compaction right after a turn's `turn_end` drafts
// are committed: before the next request (`_compactBeforeNextAssistantResponse`)
// or, after the run's last turn, before `agent_before_settle`
// (`_checkCompaction`), so only a `turn_end` handler can act in time. It
// counts with its own `estimateProjectedContextTokens`, which is not exported;
// this file follows it over the exported `estimateTokens`, not over the
// guard's size model, so the prediction is the number Pi compares:
//
// - the last valid usage plus the messages after it, unless a `context_edit`
//   or compaction sits on the branch after that usage's entry;
// - otherwise the whole projection: the current system message (replayed by
//   pi-ai's `getCurrentSystemMessage`) and every other message, each by
//   `estimateTokens` (characters ÷ 4, images 4,800 characters).
//
// Appending edits puts a `context_edit` after the last usage, so Pi then
// counts the whole projection with the edits applied: the "after" estimate.
// Checked against Pi 1.6.0 and 1.3.0 (same code in both).
import { getCurrentSystemMessage } from "@earendil-works/pi-ai";
import { calculateContextTokens, DEFAULT_COMPACTION_SETTINGS, estimateTokens, type ExtensionAPI, type ExtensionContext } from "@earendil-works/pi-coding-agent";
import { callCore } from "../core.ts";
import type { ProjectedEntry } from "./collect.ts";
import { modelKey } from "./model.ts";
import type { CompactionDecision, CompactionInput } from "./types.ts";
import { guardCore } from "./wasm.ts";

/** A boundary draft as far as the estimate reads it (`SessionBoundaryDraft`). */
export interface Draft {
  type: string;
  targetId?: string;
  replacement?: { content: unknown } | null;
}

type Message = { role: string; content?: unknown; usage?: unknown; stopReason?: string };
type Estimated = Parameters<typeof estimateTokens>[0];

const count = (message: unknown): number => estimateTokens(message as Estimated);

/** A message's usage in tokens when Pi trusts it (`getAssistantUsage`): not aborted, not an error, not zero. */
function validUsage(message: Message): number {
  if (message.role !== "assistant" || !message.usage || message.stopReason === "aborted" || message.stopReason === "error") return 0;
  return calculateContextTokens(message.usage as Parameters<typeof calculateContextTokens>[0]);
}

/** Pi's whole-projection count: the current system message once, every other message. */
function wholeCount(messages: readonly unknown[]): number {
  const system = getCurrentSystemMessage(messages as Parameters<typeof getCurrentSystemMessage>[0]);
  let tokens = system ? count(system) : 0;
  for (const m of messages) if ((m as Message).role !== "system") tokens += count(m);
  return tokens;
}

/** `estimateContextTokens`: the last valid usage and the messages after it, else every message. */
function usageCount(messages: readonly unknown[]): { tokens: number; usageAt: number | undefined } {
  for (let i = messages.length - 1; i >= 0; i--) {
    const usage = validUsage(messages[i] as Message);
    if (usage > 0) {
      let tokens = usage;
      for (let j = i + 1; j < messages.length; j++) tokens += count(messages[j]);
      return { tokens, usageAt: i };
    }
  }
  let tokens = 0;
  for (const m of messages) tokens += count(m);
  return { tokens, usageAt: undefined };
}

const invalidates = (type: string | undefined) => type === "context_edit" || type === "compaction";

/**
 * `estimateProjectedContextTokens` over the projection after this turn's drafts: `entries` are the
 * boundary's preview (the drafts applied), `branch` the branch before them (the drafts follow it).
 */
function projectedCount(entries: readonly ProjectedEntry[], branch: readonly { id: string; type: string }[], drafts: readonly Draft[]): number {
  const messages = entries.flatMap((e) => e.messages);
  const estimate = usageCount(messages);
  if (estimate.usageAt !== undefined) {
    let at = 0;
    let usageEntry: string | undefined;
    for (const entry of entries) {
      if (estimate.usageAt < at + entry.messages.length) {
        usageEntry = entry.sourceEntry.id;
        break;
      }
      at += entry.messages.length;
    }
    const usageIndex = usageEntry === undefined ? -1 : branch.findIndex((e) => e.id === usageEntry);
    let latest = -1;
    if (drafts.some((d) => invalidates(d.type))) latest = branch.length;
    else for (let i = branch.length - 1; i >= 0 && latest < 0; i--) if (invalidates(branch[i].type)) latest = i;
    if (usageIndex > latest) return estimate.tokens;
  }
  return wholeCount(messages);
}

/**
 * Pi's estimate after this turn, as the check that follows it computes it: before the next request
 * when the turn ran tools, else the run-end check (`_checkCompaction`), which takes the last
 * message's own usage while the projection has no `context_edit`.
 */
export function estimateAfterTurn(
  turn: { message: unknown; toolResults: readonly unknown[] },
  entries: readonly ProjectedEntry[],
  branch: readonly { id: string; type: string }[],
  drafts: readonly Draft[],
): number {
  if (turn.toolResults.length > 0 || entries.some((e) => e.sourceEntry.type === "context_edit")) return projectedCount(entries, branch, drafts);
  const message = turn.message as Message;
  const direct = message.usage ? calculateContextTokens(message.usage as Parameters<typeof calculateContextTokens>[0]) : 0;
  if (message.stopReason === "error" || !(direct > 0)) return usageCount(entries.flatMap((e) => e.messages)).tokens;
  return direct;
}

/** A message as Pi projects it under an edit (`projectContextEntry`); `null` omits the entry. */
function edited(message: Message, replacement: { content: unknown } | null): Message | undefined {
  if (replacement === null) return undefined;
  if (!["user", "assistant", "toolResult", "custom"].includes(message.role)) return message;
  const content =
    (message.role === "assistant" || message.role === "toolResult") && typeof replacement.content === "string"
      ? [{ type: "text", text: replacement.content }]
      : replacement.content;
  return { ...message, content };
}

/** Pi's estimate once `edits` are appended: the whole projection (an edit follows every usage), each edited entry replaced. */
export function estimateWithEdits(entries: readonly ProjectedEntry[], edits: readonly Draft[]): number {
  const latest = new Map<string, { content: unknown } | null>();
  for (const d of edits) if (d.type === "context_edit" && d.targetId !== undefined) latest.set(d.targetId, d.replacement ?? null);
  const messages: unknown[] = [];
  for (const entry of entries) {
    const edit = latest.get(entry.sourceEntry.id);
    if (edit === undefined) messages.push(...entry.messages);
    else
      for (const m of entry.messages) {
        const next = edited(m as Message, edit);
        if (next) messages.push(next);
      }
  }
  return wholeCount(messages);
}

/** What the checkpoint gave (checkpoint.ts `CheckpointResult`, as far as this file reads it). */
export interface Distilled {
  /** Its drafts: the edits, then its record. */
  entries: readonly unknown[];
  skipped?: string;
  problem?: string;
  aborted?: boolean;
}

/** The checkpoint with no age gate and no break-even (`every-eligible`), as the turn_end handler runs it. */
export type Distill = () => Promise<Distilled>;

/** Why drafts without an edit changed nothing, for `/guard`: a skip, a failure, or what the record's results say. */
function whyNoEdits(run: Distilled): string {
  if (run.aborted) return "aborted";
  if (run.problem) return run.problem;
  if (run.skipped) return run.skipped;
  const record = (run.entries as { type?: string; data?: { timedOut?: boolean; results?: { reason?: string }[] } }[]).find((d) => d.type === "custom")?.data;
  if (record?.timedOut) return "timeout";
  const reasons = new Set((record?.results ?? []).flatMap((r) => String(r.reason ?? "").split(",")).filter(Boolean));
  return reasons.size ? `kept: ${[...reasons].join(", ")}` : "nothing eligible";
}

export interface BeforeCompaction {
  /** Pi is about to compact after this turn: the regular checkpoint does not run either. */
  handled: boolean;
  /** Drafts to append after the earlier handlers' (edits and the record), when they keep Pi under. */
  entries?: readonly Draft[];
  /** Pi is expected to compact within the turns a judge asked now takes: start the no-gate checkpoint in the background. */
  early?: boolean;
  /** The line `/guard` shows, when there is something to say. */
  line?: string;
}

/**
 * Pi's estimate at the last few `turn_end`s (for starting early: how fast it grows). Forgotten when the
 * context changes under it: a compaction, a `/tree` move, another session.
 */
export class Estimates {
  private list: number[] = [];
  get earlier(): number[] {
    return [...this.list];
  }
  note(tokens: number): void {
    this.list = [...this.list.slice(-3), tokens];
  }
  forget(): void {
    this.list = [];
  }
}

/** What starting early and a pass out bring to the check. */
export interface Ahead {
  /** Drafts a pass in the background appended at this `turn_end` (the estimate counts their edits). */
  landed: readonly unknown[];
  /** The estimates at the last turn ends (absent: never start early). */
  estimates?: Estimates;
  /** Turns a judge asked now takes to land. */
  lag: number;
  /** Past the threshold: waits for the passes out and lands them, their drafts (absent: none are out). */
  waitOut?: () => Promise<readonly unknown[]>;
}

/**
 * At a completed `turn_end`: when Pi's estimate after this turn is past its compaction threshold,
 * runs `distill` and keeps its drafts only if Pi's estimate with them is at or under the threshold;
 * when it is expected to pass it before a judge asked now would answer (`lag` turns) and one more turn,
 * says `early`. `landed`: edits of a pass in the background appended at this `turn_end` (the estimate
 * counts them). Never throws: a failure appends nothing and says why in the line (`handled` once the
 * checkpoint ran, so that Pi compacts as it would have and no regular checkpoint follows).
 */
export async function beforeCompaction(
  pi: ExtensionAPI,
  event: { message: unknown; toolResults: readonly unknown[]; entries: readonly unknown[]; context: { contextEntries: readonly unknown[] } },
  ctx: ExtensionContext,
  distill: Distill,
  ahead: Ahead = { landed: [], lag: 1 },
): Promise<BeforeCompaction> {
  // Once the checkpoint has run, a failure still means Pi compacts: the regular checkpoint stays out.
  let handled = false;
  // What Pi sees after this turn, for the growth: its estimate, or with the edits appended here.
  let seen: number | undefined;
  try {
    const entries = event.context.contextEntries as readonly ProjectedEntry[];
    const proposed = event.entries as readonly Draft[];
    const landed = (ahead.landed as Draft[]).filter((d) => d.type === "context_edit");
    const model = ctx.model;
    const tokens = landed.length
      ? estimateWithEdits(entries, landed)
      : estimateAfterTurn(event, entries, ctx.sessionManager.getBranch() as { id: string; type: string }[], proposed);
    seen = tokens;
    const input: CompactionInput = {
      window: model?.contextWindow,
      model: modelKey(model),
      settings: (pi.getSettings?.() as { compaction?: unknown } | undefined)?.compaction ?? null,
      defaults: { enabled: DEFAULT_COMPACTION_SETTINGS.enabled, reserveTokens: DEFAULT_COMPACTION_SETTINGS.reserveTokens },
      tokens,
      ahead: ahead.estimates ? { earlier: ahead.estimates.earlier, lag: ahead.lag } : undefined,
    };
    const first = decide(input);
    if (first.action === "early") return { handled: false, early: true, line: first.line };
    if (first.action !== "distill") return { handled: false, line: first.line };

    handled = true;
    const weigh = (drafts: Draft[], run: Distilled) => {
      const edits = drafts.filter((d) => d.type === "context_edit");
      const withEdits = edits.length ? estimateWithEdits(entries, [...landed, ...edits]) : tokens;
      const decision = decide({
        ...input,
        distilled: edits.length ? { tokens: withEdits, outputs: new Set(edits.map((d) => d.targetId)).size } : { tokens, outputs: 0, problem: whyNoEdits(run) },
      });
      if (decision.action === "append") seen = withEdits;
      return decision;
    };
    // A pass started early whose answers are still out: its answers first, and a new pass only when they
    // are not enough.
    const waited = ((await ahead.waitOut?.()) ?? []) as Draft[];
    if (waited.length) {
      const enough = weigh(waited, { entries: waited });
      if (enough.action === "append") return { handled: true, entries: waited, line: enough.line };
    }
    let run: Distilled;
    try {
      run = await distill();
    } catch (error) {
      run = { entries: [], problem: (error as Error).message };
    }
    const drafts = [...waited, ...(run.entries as Draft[])];
    const after = weigh(drafts, run);
    return after.action === "append" ? { handled: true, entries: drafts, line: after.line } : { handled: true, line: after.line };
  } catch (error) {
    return { handled, line: `before Pi compacts: ${handled ? "nothing was changed" : "not checked"}, ${(error as Error).message}` };
  } finally {
    if (seen !== undefined) ahead.estimates?.note(seen);
  }
}

function decide(input: CompactionInput): CompactionDecision {
  const decision = callCore(() => guardCore.beforeCompaction(input));
  if (!decision.ok) throw new Error(decision.error);
  return decision.value;
}
