// What the run-end pass and a mid-run checkpoint share inside Pi: the input
// they read from Pi (the projection, the main model, the guard's records, the
// earlier runs) and how a planned pass is asked and finished (the requests
// under one limiter and one budget, then the core's `finishPass`).
import type { ExtensionContext } from "@earendil-works/pi-coding-agent";
import { callCore } from "../core.ts";
import { cacheFacts, safeBranch } from "./cache-facts.ts";
import { coreEntries, guardRecords, type ProjectedEntry } from "./collect.ts";
import { classifierOf } from "./judge.ts";
import type { findClassifier } from "./model.ts";
import { runRequests, type Slots } from "./requests.ts";
import { earlierRuns } from "./earlier-runs.ts";
import type { GuardSettings, PassInput, PassOutcome } from "./types.ts";
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
