// The guard's figures, read back from the session: what it keeps out of the
// window now, its lifetime total and its usage (the core computes them in
// stats.rs). Shared by the status bar, `/guard` and `/context`.
import type { ExtensionContext } from "@earendil-works/pi-coding-agent";
import { callCore } from "../core.ts";
import type { GuardRecord } from "../guard-types.ts";
import { disabledBy } from "../switches.ts";
import { editedEntries, type ProjectedEntry } from "./collect.ts";
import { type GuardStats, guardCore, type StatsInput, type StatusText } from "./wasm.ts";

export const RECORD_TYPE = "context-guard";

/** The branch as the statistics read it, and the records on it (oldest first). */
export function statsInput(ctx: ExtensionContext): { input: StatsInput; records: GuardRecord[] } {
  const projection = ctx.sessionManager.buildSessionProjection() as unknown as { entries: ProjectedEntry[] };
  const marks: StatsInput["marks"] = [];
  const records: GuardRecord[] = [];
  for (const entry of ctx.sessionManager.getBranch() as unknown as { type: string; customType?: string; data?: unknown }[]) {
    if (entry.type === "custom" && entry.customType === RECORD_TYPE) {
      marks.push({ kind: "record", data: entry.data });
      records.push(entry.data as GuardRecord);
    } else if (entry.type === "compaction") {
      marks.push({ kind: "compaction" });
    }
  }
  return { input: { edited: editedEntries(projection.entries), marks }, records };
}

/** The figures and the status text, or the core's error. */
export function guardFigures(ctx: ExtensionContext): { ok: true; value: { stats: GuardStats; status: StatusText } } | { ok: false; error: string } {
  return callCore(() => guardCore.stats(statsInput(ctx).input));
}

/** What `/context` shows of the guard; `undefined` when the guard is switched off for this process. */
export function keptOut(ctx: ExtensionContext): GuardStats | undefined {
  if (disabledBy(["guard", "context-guard"])) return undefined;
  const figures = guardFigures(ctx);
  return figures.ok ? figures.value.stats : undefined;
}
