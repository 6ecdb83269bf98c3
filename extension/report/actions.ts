// What /context does to a session: read it into a report (and tell other
// extensions), and compact from it without aborting a turn. Shared by the
// commands (commands.ts) and the screen (view.ts), which import it and never
// each other's.
import type { ExtensionAPI, ExtensionContext } from "@earendil-works/pi-coding-agent";
import { type CoreResult, callCore } from "../core.ts";
import type { KeptOut } from "../kept.ts";
import { collect } from "./collect.ts";
import { type ContextExport, toExport } from "./export.ts";
import type { ContextReport } from "./types.ts";
import { reportCore } from "./wasm.ts";

export const BUSY = "Not compacting: a turn or a compaction is running, and Pi's compaction would abort it. Wait for it (or stop it), then compact.";

export const messageOf = (error: unknown): string => (error instanceof Error ? error.message : String(error));

/** The event each freshly built report is emitted on (`pi.events`), for other extensions. */
export const REPORT_EVENT = "context:report";

/**
 * What `context:report` carries: the export object (export.ts), that is the report,
 * and each projected message's count exactly as the core read it (Pi's
 * `estimateTokens`, in projection order), versioned. The counts stay on this side of
 * the boundary rather than being echoed back by the core, which only needs to return
 * what it computed.
 */
export type ReportEvent = ContextExport;

/** What the report reads besides Pi, handed in at registration (extension/index.ts). */
export interface ReportSources {
  /** The guard's figures; absent when the guard is not loaded. */
  keptOut?: KeptOut;
}

/**
 * Reads Pi once, builds the report in the core, and emits it on `pi.events` as the
 * export object; returns that object (a report with its counts).
 */
export function readReport(pi: ExtensionAPI, ctx: ExtensionContext, sources: ReportSources = {}, compactedFrom?: number): CoreResult<ContextExport> {
  let result: CoreResult<ContextReport>;
  let counts: Float64Array;
  try {
    const inputs = collect(pi, ctx, sources.keptOut);
    if (compactedFrom !== undefined) inputs.compactedFrom = compactedFrom;
    counts = inputs.messages.tokens;
    result = callCore(() => reportCore.buildReport(inputs));
    // The series stays on this side, like the counts: the screen draws it from here.
    if (result.ok) result.value.series = { tokens: inputs.requests.tokens, marks: inputs.requests.marks };
  } catch (error) {
    return { ok: false, error: messageOf(error) };
  }
  if (!result.ok) return result;
  let event: ContextExport;
  try {
    event = toExport(result.value, counts, ctx.sessionManager.getSessionId?.() ?? "");
  } catch (error) {
    return { ok: false, error: messageOf(error) };
  }
  try {
    pi.events.emit(REPORT_EVENT, event);
  } catch {
    // A listener's failure is not the report's.
  }
  return { ok: true, value: event };
}

export interface CompactCallbacks {
  /** The compaction finished; `report` was re-read and carries `compacted`. */
  done: (report: CoreResult<ContextReport>) => void;
  failed: (message: string) => void;
}

/**
 * Starts a compaction through `ctx.compact` unless the agent is busy: Pi's
 * compaction begins by aborting the active turn, and this action must never
 * discard a running answer. Returns false (and starts nothing) when busy.
 */
export function startCompact(pi: ExtensionAPI, ctx: ExtensionContext, instructions: string, on: CompactCallbacks, sources: ReportSources = {}): boolean {
  if (!ctx.isIdle()) return false;
  const before = ctx.getContextUsage()?.tokens ?? undefined;
  ctx.compact({
    customInstructions: instructions || undefined,
    onComplete: (result) => {
      try {
        on.done(readReport(pi, ctx, sources, result?.tokensBefore ?? before ?? 0));
      } catch (error) {
        on.failed(messageOf(error));
      }
    },
    onError: (error) => {
      try {
        on.failed(messageOf(error));
      } catch {
        // The caller's feedback failed; nothing else to do.
      }
    },
  });
  return true;
}
