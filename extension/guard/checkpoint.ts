// Mid-run checkpoints inside Pi (guard.md §7): at `turn_end`, plan in the
// core, run the requests with the pass's runner, finish in the core, and
// return the drafts after whatever earlier handlers proposed, as the run-end
// pass does at `agent_before_settle`. Every gate and rule is the core's
// (crates/guard/src/checkpoint/); this file reads Pi and runs requests.
//
// Pi 1.6.0 and 1.3.0 both commit `turn_end` drafts before the next provider
// request (TurnEndEvent extends BoundaryState; the result is BoundaryResult,
// `{ entries?, continue? }`; each handler sees earlier proposals in
// `event.entries`), so an edit returned here is in the very next request of
// the run. `ctx.signal` is the agent's signal at `turn_end`: a user abort
// cancels the checkpoint's requests, and an aborted checkpoint edits nothing.
import type { ExtensionAPI, ExtensionContext } from "@earendil-works/pi-coding-agent";
import { callCore } from "../core.ts";
import { coreEntries, guardRecords, type ProjectedEntry } from "./collect.ts";
import { beforeCompaction } from "./compaction.ts";
import { cacheFacts, safeBranch } from "./cache-facts.ts";
import { classifierOf } from "./judge.ts";
import type { Background } from "./background.ts";
import { type findClassifier, judgePrice } from "./model.ts";
import { runRequests, type Slots } from "./requests.ts";
import type { CheckpointGate, CheckpointGates, GuardSettings, PassInput, PassOutcome, PassSkip } from "./types.ts";
import { guardCore, type Planned } from "./wasm.ts";

type Lookup = ReturnType<typeof findClassifier>;

/**
 * What the run-end pass and a checkpoint read from Pi: the projection, the main model, the records in it.
 * `readPoints`: the cache pin's read points for the active model (`Pin.readPoints(ctx)`, guard/pin.ts), which
 * the core's break-even rules measure an Anthropic rewrite from (guard/cache.rs); none, the question alone.
 */
export function passInput(
  ctx: ExtensionContext,
  contextEntries: readonly unknown[],
  settings: GuardSettings,
  classifier: boolean,
  readPoints: string[] = [],
): PassInput {
  const projected = contextEntries as ProjectedEntry[];
  const model = ctx.model as { provider?: unknown; api?: unknown; cost?: unknown } | undefined;
  // Read once for the idle time and the session's earlier runs.
  const branch = safeBranch(ctx);
  return {
    entries: coreEntries(projected),
    settings,
    classifier,
    model: {
      provider: String(model?.provider ?? ""),
      api: String(model?.api ?? ""),
      pin: settings.pinAnthropicCache,
      readPoints,
      contextTokens: contextTokens(ctx),
      cost: model?.cost,
      ...cacheFacts(ctx, branch),
    },
    records: guardRecords(projected),
    earlierRuns: earlierRuns(ctx, branch),
  };
}

/** Pi's estimate of the context now (0 when Pi has none yet). */
function contextTokens(ctx: ExtensionContext): number {
  try {
    const tokens = ctx.getContextUsage()?.tokens;
    return typeof tokens === "number" && Number.isFinite(tokens) && tokens > 0 ? tokens : 0;
  } catch {
    return 0;
  }
}

type BranchEntry = { type?: string; message?: { role?: string; content?: unknown } };

/** One letter per message for the core's `runLengths`: user, assistant, one with tool calls, tool result, custom, other. */
function kindOf(entry: BranchEntry): number | undefined {
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

/**
 * Runs a planned pass's requests (one limiter, one budget, `signal` cancelling them) and finishes it in
 * the core. The status says `🛡 distilling…` while requests run.
 */
export async function classifyAndFinish(
  ctx: ExtensionContext,
  planned: Planned,
  lookup: Lookup,
  settings: GuardSettings,
  busy: (ctx: ExtensionContext) => void,
  slots?: Slots,
): Promise<{ ok: true; value: PassOutcome } | { ok: false; error: string }> {
  const requests = lookup.ok ? planned.requests : [];
  if (requests.length > 0) busy(ctx);
  const run =
    requests.length > 0
      ? await runRequests(requests, classifierOf(ctx, lookup), { concurrency: settings.concurrency, timeoutMs: settings.timeoutMs, signal: ctx.signal, slots })
      : { outcomes: [], timedOut: false, ms: 0 };
  return callCore<PassOutcome>(() => guardCore.finishPass(planned.pass, run));
}

/** What one checkpoint did. */
export interface CheckpointResult {
  /** The drafts to append (edits, then the record); empty when skipped, failed or aborted. */
  entries: PassOutcome["entries"];
  /** Why nothing was asked, when so. */
  skipped?: PassSkip;
  /** What the gates measured (absent when the core could not plan). */
  gate?: CheckpointGate;
  /** Why the checkpoint changed nothing though it should have run: the core failed. */
  problem?: string;
  /** The user aborted the run (`ctx.signal`): its requests were cancelled and nothing changes. */
  aborted?: boolean;
}

/** A checkpoint's plan, or why there is none (`planned` is set only when it has requests to run). */
type CheckpointPlan = Omit<CheckpointResult, "entries"> & { planned?: Planned };

/**
 * A checkpoint's plan over the boundary's preview: `mid-run` gates (guard.md §7), or `every-eligible` (no age,
 * batch or break-even: for distilling before Pi compacts); what `judging` holds is left alone. Never throws.
 */
export function planCheckpointPass(
  ctx: ExtensionContext,
  contextEntries: readonly unknown[],
  settings: GuardSettings,
  lookup: Lookup,
  gates: CheckpointGates,
  readPoints: string[] = [],
  judging: string[] = [],
  signal = ctx.signal,
  lag = 0,
): CheckpointPlan {
  try {
    if (!lookup.ok) return { skipped: "no-classifier" };
    if (signal?.aborted) return { aborted: true };
    const input = { ...passInput(ctx, contextEntries, settings, true, readPoints), judging, judge: judgePrice(ctx, lookup), gates, lag };
    const planned = callCore(() => guardCore.planCheckpoint(input));
    if (!planned.ok) return { problem: `the checkpoint could not be planned: ${planned.error}` };
    const { skipped, gate } = planned.value;
    return skipped ? { skipped, gate } : { planned: planned.value, gate };
  } catch (error) {
    return { problem: `the checkpoint failed: ${(error as Error).message}` };
  }
}

/**
 * One checkpoint that waits for its judge (`waitForJudge`, and before Pi compacts): planned as
 * `planCheckpointPass` plans it, its requests run, finished in the core. Never throws; a failure changes nothing.
 */
export async function runCheckpoint(
  ctx: ExtensionContext,
  contextEntries: readonly unknown[],
  settings: GuardSettings,
  lookup: Lookup,
  gates: CheckpointGates,
  busy: (ctx: ExtensionContext) => void,
  readPoints: string[] = [],
  judging: string[] = [],
  slots?: Slots,
): Promise<CheckpointResult> {
  const { planned, ...plan } = planCheckpointPass(ctx, contextEntries, settings, lookup, gates, readPoints, judging);
  if (!planned) return { entries: [], ...plan };
  const { gate } = plan;
  try {
    const outcome = await classifyAndFinish(ctx, planned, lookup, settings, busy, slots);
    if (!outcome.ok) return { entries: [], gate, problem: `the checkpoint could not finish: ${outcome.error}` };
    // A user abort cancelled the requests: edit nothing, record nothing (the run is over).
    if (ctx.signal?.aborted) return { entries: [], gate, aborted: true };
    return { entries: outcome.value.entries, gate };
  } catch (error) {
    return { entries: [], problem: `the checkpoint failed: ${(error as Error).message}` };
  }
}

/** Whether the run had a turn before the one that just ended (two assistant messages since the last prompt). */
function earlierTurn(contextEntries: readonly unknown[]): boolean {
  const messages = (contextEntries as { messages?: { role?: string }[] }[]).flatMap((e) => e.messages ?? []);
  const prompt = messages.findLastIndex((m) => m?.role === "user");
  return messages.slice(prompt + 1).filter((m) => m?.role === "assistant").length > 1;
}

/** Whether an assistant message has tool calls (a checkpoint runs only after such a turn). */
export function hasToolCalls(message: unknown): boolean {
  const content = (message as { role?: string; content?: unknown } | undefined)?.content;
  return (message as { role?: string })?.role === "assistant" && Array.isArray(content) && content.some((b) => b?.type === "toolCall");
}

/** The last checkpoint that was skipped, for `/guard`'s one line (in memory: nothing is appended for it). */
export interface SkipNote {
  skipped: PassSkip;
  gate?: CheckpointGate;
}

export interface CheckpointHooks {
  settingsOf: (ctx: ExtensionContext) => { settings: GuardSettings };
  lookup: (ctx: ExtensionContext, settings: GuardSettings) => Lookup;
  busy: (ctx: ExtensionContext) => void;
  refresh: (ctx: ExtensionContext) => void;
  warnOnce: (ctx: ExtensionContext, message: string) => void;
  /** Called with each checkpoint's skip, or `undefined` when one ran. */
  noteSkip: (note: SkipNote | undefined) => void;
  /** Called with the distill-before-compacting line for `/guard` (in memory: nothing is appended when Pi compacts). */
  noteCompaction: (line: string) => void;
  /** The cache pin's read points for the active model (`Pin.readPoints`, guard/pin.ts); absent, none. */
  readPoints?: (ctx: ExtensionContext) => string[];
  /** The passes whose judge works in the background (background.ts). */
  background: Background;
}

/** The `turn_end` handler: a mid-run checkpoint after each completed turn whose assistant message has tool calls. */
export function registerCheckpoint(pi: ExtensionAPI, hooks: CheckpointHooks): void {
  // Drafts are committed after every turn_end handler: the status shows the new savings at the next turn.
  let appended = false;
  pi.on("turn_start", (_event, ctx) => {
    if (!appended) return;
    appended = false;
    hooks.refresh(ctx);
  });
  pi.on("turn_end", async (event, ctx) => {
    try {
      if (event.outcome !== "completed") return undefined;
      const { settings } = hooks.settingsOf(ctx);
      if (!settings.enabled) return undefined;
      const lookup = hooks.lookup(ctx, settings);
      const readPoints = hooks.readPoints?.(ctx) ?? [];
      const contextEntries = event.context.contextEntries;
      const background = hooks.background;
      background.flush();
      background.turnEnded(!earlierTurn(contextEntries));
      // Answers in from a pass in the background land first, checked against the context now (issue 27).
      const landed = background.land(ctx, () => passInput(ctx, contextEntries, settings, lookup.ok, readPoints), settings, false);
      const judging = [...background.held(), ...landed.held];
      const append = (more: readonly unknown[] = []) => {
        const entries = [...landed.entries, ...more];
        hooks.refresh(ctx);
        if (entries.length === 0) return undefined;
        appended = true;
        return { entries: [...event.entries, ...entries] as typeof event.entries };
      };
      // Distill before compacting (compaction.ts): at every turn_end, the run's last included, since Pi
      // decides right after it. When Pi is about to compact, that decides; no regular checkpoint follows.
      const pre = await beforeCompaction(pi, event, ctx, () =>
        runCheckpoint(ctx, contextEntries, settings, lookup, "every-eligible", hooks.busy, readPoints, judging, background.slots),
      );
      if (pre.line) hooks.noteCompaction(pre.line);
      if (pre.handled) return append(pre.entries);
      if (!hasToolCalls(event.message) || !settings.midRun) return landed.entries.length ? append() : undefined;
      if (settings.waitForJudge) {
        const result = await runCheckpoint(ctx, contextEntries, settings, lookup, "mid-run", hooks.busy, readPoints, judging, background.slots);
        note(hooks, ctx, result);
        return append(result.entries);
      }
      // One checkpoint out at a time: while one is, its outputs wait for the next (issue 27). The plan is
      // made right after this turn_end, on its context, while the next request is out; what just landed is
      // left alone (its record is not in that context).
      if (!background.busy) {
        // Planned as many turns ahead as its answers are expected to take: they land where a waited-for
        // checkpoint's would (the core lowers the age and turn gates by the lag).
        const [signal, lag] = [ctx.signal, background.lag()];
        background.later(() => {
          const { planned, ...plan } = planCheckpointPass(ctx, contextEntries, settings, lookup, "mid-run", readPoints, judging, signal, lag);
          note(hooks, ctx, { entries: [], ...plan });
          if (planned) background.start(ctx, "mid-run", planned, lookup, settings, contextEntries, signal);
          hooks.refresh(ctx);
        }, (message) => hooks.warnOnce(ctx, message));
      }
      return landed.entries.length ? append() : undefined;
    } catch (error) {
      hooks.warnOnce(ctx, `the checkpoint failed, nothing was changed: ${(error as Error).message}`);
      return undefined;
    }
  });
}

/** Tells `/guard` what a checkpoint did: its skip, or that one ran (a problem warns once). */
function note(hooks: CheckpointHooks, ctx: ExtensionContext, result: CheckpointResult): void {
  if (result.problem) hooks.warnOnce(ctx, `${result.problem}; nothing was changed`);
  if (result.skipped) hooks.noteSkip({ skipped: result.skipped, gate: result.gate });
  else if (!result.problem && !result.aborted) hooks.noteSkip(undefined);
}
