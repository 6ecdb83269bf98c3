// Mid-run checkpoints inside Pi (docs/GUARD.md "Mid-run checkpoints"): at
// `turn_end`, plan in the core, run the requests with the pass's runner,
// finish in the core, and return the drafts after whatever earlier handlers
// proposed, as the run-end pass does at `agent_before_settle`. Every gate and
// rule is the core's (crates/guard/src/checkpoint/); this file reads Pi
// and runs requests.
//
// Pi 1.6.0 and 1.3.0 both commit `turn_end` drafts before the next provider
// request (TurnEndEvent extends BoundaryState; the result is BoundaryResult,
// `{ entries?, continue? }`; each handler sees earlier proposals in
// `event.entries`), so an edit returned here is in the very next request of
// the run. `ctx.signal` is the agent's signal at `turn_end`: a user abort
// cancels the checkpoint's requests, and an aborted checkpoint edits nothing.
import type { ExtensionAPI, ExtensionContext } from "@earendil-works/pi-coding-agent";
import { callCore } from "../core.ts";
import type { Background } from "./background.ts";
import { beforeCompaction, Estimates } from "./compaction.ts";
import { type findClassifier, judgePrice } from "./model.ts";
import { classifyAndFinish, passInput } from "./pass.ts";
import type { Slots } from "./requests.ts";
import { noteArrivals, sessionScans } from "./scans.ts";
import type { CheckpointGate, CheckpointGates, GuardSettings, PassOutcome, PassSkip } from "./types.ts";
import { guardCore, type Planned } from "./wasm.ts";

type Lookup = ReturnType<typeof findClassifier>;

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
 * A checkpoint's plan over the boundary's preview: `mid-run` gates (docs/GUARD.md "Mid-run checkpoints"), or `every-eligible` (no age,
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
    const planned = callCore(() => guardCore.planCheckpoint(input, sessionScans(ctx)));
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
  // Pi's estimate at the last turn ends, for judging early before Pi compacts; a new context forgets it.
  const estimates = new Estimates();
  pi.on("session_start", () => estimates.forget());
  pi.on("session_tree", () => estimates.forget());
  pi.on("session_compact", () => estimates.forget());
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
      // This turn's outputs have their secrets found now, off the turn's path, not at the checkpoint that sends them.
      if (lookup.ok)
        background.later(
          () => void noteArrivals(ctx, contextEntries, settings),
          (message) => hooks.warnOnce(ctx, message),
        );
      // Answers in from a pass in the background land first, checked against the context now (issue 27).
      const inputNow = () => passInput(ctx, contextEntries, settings, lookup.ok, readPoints);
      const landed = background.land(ctx, inputNow, settings, false);
      // What a new plan leaves alone: what passes out or waiting hold, and what landed at this turn_end. Before
      // Pi compacts, what answers carried to a later landing hold is distilled now all the same (`carried` false).
      const landedHeld = [...landed.held];
      const judging = (carried = true) => [...background.held(carried), ...landedHeld];
      const append = (more: readonly unknown[] = []) => {
        const entries = [...landed.entries, ...more];
        hooks.refresh(ctx);
        if (entries.length === 0) return undefined;
        appended = true;
        return { entries: [...event.entries, ...entries] as typeof event.entries };
      };
      // Distill before compacting (compaction.ts): at every turn_end, the run's last included, since Pi
      // decides right after it. When Pi is about to compact, that decides; no regular checkpoint follows.
      const pre = await beforeCompaction(
        pi,
        event,
        ctx,
        () => runCheckpoint(ctx, contextEntries, settings, lookup, "every-eligible", hooks.busy, readPoints, judging(false), background.slots),
        {
          landed: landed.entries,
          // Waiting for the judge (`waitForJudge`), the check past the threshold waits as it always did.
          estimates: settings.waitForJudge ? undefined : estimates,
          lag: background.lag(PRIOR_JUDGE_MS),
          waitOut: async () => {
            if (background.judging === 0) return [];
            await background.whenIn(settings.timeoutMs);
            const more = background.land(ctx, inputNow, settings, false);
            landedHeld.push(...more.held);
            return more.entries;
          },
        },
      );
      if (pre.line) hooks.noteCompaction(pre.line);
      if (pre.handled) return append(pre.entries);
      // Expected to compact before a judge asked later would answer: the no-gate checkpoint starts now, in the
      // background, on this turn's context (one pass out at a time: one out already lands first).
      if (pre.early) {
        if (!background.busy) startLater(hooks, ctx, contextEntries, settings, lookup, "every-eligible", readPoints, judging(false), 0);
        return landed.entries.length ? append() : undefined;
      }
      if (!hasToolCalls(event.message) || !settings.midRun) return landed.entries.length ? append() : undefined;
      if (settings.waitForJudge) {
        const result = await runCheckpoint(ctx, contextEntries, settings, lookup, "mid-run", hooks.busy, readPoints, judging(), background.slots);
        note(hooks, ctx, result);
        return append(result.entries);
      }
      // One checkpoint out at a time: while one is, its outputs wait for the next (issue 27). The plan is
      // made right after this turn_end, on its context, while the next request is out; what just landed is
      // left alone (its record is not in that context).
      // Planned as many turns ahead as its answers are expected to take: they land where a waited-for
      // checkpoint's would (the core lowers the age and turn gates by the lag).
      if (!background.busy) startLater(hooks, ctx, contextEntries, settings, lookup, "mid-run", readPoints, judging(), background.lag());
      return landed.entries.length ? append() : undefined;
    } catch (error) {
      hooks.warnOnce(ctx, `the checkpoint failed, nothing was changed: ${(error as Error).message}`);
      return undefined;
    }
  });
}

/**
 * The judge's time a pass is taken to need before one was seen, ms, for judging early before Pi compacts:
 * the original guard measured 0.5–1.2 s a pass; twice its slowest leans early.
 */
const PRIOR_JUDGE_MS = 2_400;

/** Plans a checkpoint once this `turn_end` is over (on its context) and starts its judge in the background. */
function startLater(
  hooks: CheckpointHooks,
  ctx: ExtensionContext,
  contextEntries: readonly unknown[],
  settings: GuardSettings,
  lookup: Lookup,
  gates: CheckpointGates,
  readPoints: string[],
  judging: string[],
  lag: number,
): void {
  const { background } = hooks;
  const signal = ctx.signal;
  background.later(
    () => {
      const { planned, ...plan } = planCheckpointPass(ctx, contextEntries, settings, lookup, gates, readPoints, judging, signal, lag);
      if (gates === "mid-run") note(hooks, ctx, { entries: [], ...plan });
      else if (plan.problem) hooks.warnOnce(ctx, `${plan.problem}; nothing was changed`);
      if (planned) background.start(ctx, "mid-run", planned, lookup, settings, contextEntries, signal);
      hooks.refresh(ctx);
    },
    (message) => hooks.warnOnce(ctx, message),
  );
}

/** Tells `/guard` what a checkpoint did: its skip, or that one ran (a problem warns once). */
function note(hooks: CheckpointHooks, ctx: ExtensionContext, result: CheckpointResult): void {
  if (result.problem) hooks.warnOnce(ctx, `${result.problem}; nothing was changed`);
  if (result.skipped) hooks.noteSkip({ skipped: result.skipped, gate: result.gate });
  else if (!result.problem && !result.aborted) hooks.noteSkip(undefined);
}
