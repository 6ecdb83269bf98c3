// The run-end pass inside Pi (docs/GUARD.md "What it judges"): plan in the
// core, ask the classifier, finish in the core, append the drafts after
// whatever earlier handlers proposed. The judge works in the background (issue
// 27): Pi settles at once, the plan is made right after, and the answers land
// before the next prompt's first request (lapse.ts) or, when later, at a
// turn_end under the money rule. `waitForJudge` waits here instead.
import type { ExtensionAPI, ExtensionContext } from "@earendil-works/pi-coding-agent";
import { callCore } from "../core.ts";
import type { Background } from "./background.ts";
import type { GuardNotes } from "./command.ts";
import { findClassifier, judgePrice } from "./model.ts";
import { classifyAndFinish, passInput } from "./pass.ts";
import type { Pin } from "./pin.ts";
import type { SettingsCache } from "./settings.ts";
import type { StatusBar } from "./status.ts";
import { sessionScans } from "./scans.ts";
import type { PassInput } from "./types.ts";
import { guardCore, type Planned } from "./wasm.ts";

export interface RunEndDeps {
  settings: SettingsCache;
  status: StatusBar;
  background: Background;
  pin: Pin;
  notes: GuardNotes;
}

export function registerRunEnd(pi: ExtensionAPI, deps: RunEndDeps): void {
  const { settings: cache, status, background, pin, notes } = deps;
  pi.on("agent_before_settle", async (event, ctx) => {
    try {
      if (event.outcome !== "completed") return undefined;
      const { settings } = cache.settingsOf(ctx);
      if (!settings.enabled) return undefined;
      const lookup = findClassifier(ctx, settings);
      // Without the classifier only old images go (they need no request, docs/GUARD.md "Whole items").
      if (!lookup.ok) status.showProblem(ctx, lookup.status);
      const contextEntries = event.context.contextEntries;
      const inputNow = () => passInput(ctx, contextEntries, settings, lookup.ok, pin.readPoints(ctx));
      background.flush();
      if (!settings.waitForJudge) {
        // Nothing lands here: what is in lands with the run end's answers before the next prompt's first
        // request, which is as soon for the cache. The run end leaves alone what passes still out hold.
        background.later(
          () => {
            const planned = planRunEnd(ctx, inputNow(), background.held(), lookup, deps);
            if (planned) background.start(ctx, "run-end", planned, lookup, settings, contextEntries);
            status.refresh(ctx);
          },
          (message) => cache.warnOnce(ctx, message),
        );
        return undefined;
      }
      // A checkpoint's answers that are in land first; the run end leaves alone what passes still out hold.
      const landed = background.land(ctx, inputNow, settings, false);
      const withLanded = (more: readonly unknown[]) =>
        landed.entries.length + more.length === 0 ? undefined : { entries: [...event.entries, ...landed.entries, ...more] as typeof event.entries };
      const planned = planRunEnd(ctx, inputNow(), [...background.held(), ...landed.held], lookup, deps);
      if (!planned) return withLanded([]);
      // One list of requests for every kind (large, small, exchange), under one limiter and one budget.
      const outcome = await classifyAndFinish(ctx, planned, lookup, settings, status.busy, background.slots);
      if (!outcome.ok) {
        cache.warnOnce(ctx, `the pass could not finish, nothing was changed: ${outcome.error}`);
        return withLanded([]);
      }
      notes.lastBreakEven = outcome.value.breakEven ?? [];
      return withLanded(outcome.value.entries);
    } catch (error) {
      cache.warnOnce(ctx, `the pass failed, nothing was changed: ${(error as Error).message}`);
      return undefined;
    }
  });
}

/** The run end's plan, leaving alone what `judging` holds; none when skipped or it failed (said once). */
function planRunEnd(
  ctx: ExtensionContext,
  input: PassInput,
  judging: string[],
  lookup: ReturnType<typeof findClassifier>,
  { settings, notes }: RunEndDeps,
): Planned | undefined {
  const planned = callCore(() => guardCore.planPass({ ...input, judging, judge: judgePrice(ctx, lookup) }, sessionScans(ctx)));
  if (!planned.ok) {
    settings.warnOnce(ctx, `the pass could not be planned, nothing was changed: ${planned.error}`);
    return undefined;
  }
  // A judge not worth calling (guard/pass/plan.rs `weigh_judge`): /guard shows the skip with its figures,
  // until a checkpoint runs or a later run end asks.
  const gate = planned.value.gate;
  if (gate?.runEnd) notes.lastSkip = { skipped: "judge-not-worth-it", gate };
  else if (planned.value.requests.length > 0 && notes.lastSkip?.gate?.runEnd) notes.lastSkip = undefined;
  return planned.value.skipped ? undefined : planned.value;
}
