// What Pi says about the main model's prompt cache over time, for the core's
// `MainModel` (guard/cache.rs `MainModel::lapsed` decides; this file reads):
// the idle time from Pi's message `timestamp` numbers (never `new Date()` or
// an entry's ISO stamp, which a shifted clock does not move), Pi's
// `cacheWarming` setting through its own `SettingsManager` (Pi 1.3 and 1.6
// both have it: default "streaming" in 1.3, "idle" in 1.6), the retention
// Pi's providers read (`PI_CACHE_RETENTION`), and the lifetime the model
// declares (`promptCache`).
import type { ExtensionContext } from "@earendil-works/pi-coding-agent";
import * as piAgent from "@earendil-works/pi-coding-agent";
import type { MainModel } from "./types.ts";

export type Entry = {
  id?: string;
  type?: string;
  customType?: string;
  data?: unknown;
  message?: { role?: string; timestamp?: unknown; provider?: unknown; model?: unknown };
};

/** What Pi says about the main model's cache besides its prices: for `MainModel`. */
export function cacheFacts(ctx: ExtensionContext, branch?: readonly unknown[]): Pick<MainModel, "idleMs" | "longRetention" | "cacheWarming" | "promptCacheMs"> {
  const longRetention = process.env.PI_CACHE_RETENTION === "long";
  const model = ctx.model as { provider?: unknown; id?: unknown; promptCache?: { short?: unknown; long?: unknown } } | undefined;
  const declared = Number(model?.promptCache?.[longRetention ? "long" : "short"]);
  return {
    idleMs: idleMs(branch ?? safeBranch(ctx), model),
    longRetention,
    cacheWarming: cacheWarming(ctx),
    promptCacheMs: Number.isFinite(declared) && declared > 0 ? Math.round(declared * 1000) : 0,
  };
}

/** Pi's branch of the session, or none when it cannot be read. */
export function safeBranch(ctx: ExtensionContext): readonly unknown[] {
  try {
    return ctx.sessionManager.getBranch();
  } catch {
    return [];
  }
}

/**
 * Ms from the last reply of `model` (its request) to the branch's latest message: the prompt before a run's
 * first request, a tool result at `turn_end`. Undefined without both stamps, or when they go backwards.
 */
export function idleMs(branch: readonly unknown[], model: { provider?: unknown; id?: unknown } | undefined): number | undefined {
  let latest: number | undefined;
  for (let i = branch.length - 1; i >= 0; i--) {
    const e = branch[i] as Entry | null | undefined;
    const m = e?.type === "message" ? e.message : undefined;
    if (!m || typeof m !== "object") continue;
    const t = typeof m.timestamp === "number" && Number.isFinite(m.timestamp) ? m.timestamp : undefined;
    latest ??= t;
    if (latest === undefined) return undefined;
    if (m.role === "assistant" && m.provider === model?.provider && m.model === model?.id) {
      return t !== undefined && latest >= t ? Math.round(latest - t) : undefined;
    }
  }
  return undefined;
}

/** Pi's `cacheWarming` (`off`, `streaming`, `idle`) as its `SettingsManager` reads it; "" when it cannot. */
function cacheWarming(ctx: ExtensionContext): string {
  try {
    const Manager = (piAgent as { SettingsManager?: { create(cwd: string, agentDir?: string): { getCacheWarmingMode?: () => unknown } } }).SettingsManager;
    const mode = Manager?.create(ctx.cwd, piAgent.getAgentDir()).getCacheWarmingMode?.();
    return typeof mode === "string" ? mode : "";
  } catch {
    return "";
  }
}
