// `/context` and `/context compact [instructions]`: the screen in the TUI, the
// plain-text report elsewhere, and the guarded compact.
//
// Every handler is wrapped: a failure becomes a message, never an exception
// that reaches Pi.
import type { ExtensionAPI, ExtensionCommandContext, ExtensionContext } from "@earendil-works/pi-coding-agent";
import { type CoreResult, callCore, core } from "../core.ts";
import { say } from "../say.ts";
import type { KeptOut } from "../types.ts";
import { collect } from "./collect.ts";
import type { ContextReport } from "./types.ts";
import { reportCore } from "./wasm.ts";
import { showScreen } from "./view.ts";

export const USAGE = "Usage: /context (the report) or /context compact [instructions]";
export const BUSY =
  "Not compacting: a turn or a compaction is running, and Pi's compaction would abort it. Wait for it (or stop it), then compact.";


const messageOf = (error: unknown): string => (error instanceof Error ? error.message : String(error));

/** The event each freshly built report is emitted on (`pi.events`), for other extensions. */
export const REPORT_EVENT = "context:report";

/**
 * What `context:report` carries: the report, and each projected message's count
 * exactly as the core read it (Pi's `estimateTokens`, in projection order). The
 * counts stay on this side of the boundary rather than being echoed back by the
 * core, which only needs to return what it computed.
 */
export type ReportEvent = ContextReport & { counts: number[] };

/** What the report reads besides Pi, handed in at registration (extension/index.ts). */
export interface ReportSources {
  /** The guard's figures; absent when the guard is not loaded. */
  keptOut?: KeptOut;
}

/** Reads Pi once, builds the report in the core, and emits it on `pi.events`. */
export function readReport(pi: ExtensionAPI, ctx: ExtensionContext, sources: ReportSources = {}, compactedFrom?: number): CoreResult<ContextReport> {
  let result: CoreResult<ContextReport>;
  let counts: Float64Array;
  try {
    const inputs = collect(pi, ctx, sources.keptOut);
    if (compactedFrom !== undefined) inputs.compactedFrom = compactedFrom;
    counts = inputs.messages.tokens;
    result = callCore(() => reportCore.buildReport(inputs));
  } catch (error) {
    return { ok: false, error: messageOf(error) };
  }
  if (result.ok) {
    try {
      const event: ReportEvent = { ...result.value, counts: Array.from(counts) };
      pi.events.emit(REPORT_EVENT, event);
    } catch {
      // A listener's failure is not the report's.
    }
  }
  return result;
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

async function compactCommand(pi: ExtensionAPI, ctx: ExtensionCommandContext, instructions: string, sources: ReportSources): Promise<void> {
  await new Promise<void>((resolve) => {
    const started = startCompact(pi, ctx, instructions, {
      done: (report) => {
        if (report.ok && report.value.compacted) say(ctx, report.value.compacted.line, "info");
        else say(ctx, `Compacted; the report could not be rebuilt: ${report.ok ? "no result" : report.error}`, "warning");
        resolve();
      },
      failed: (message) => {
        say(ctx, `Compaction failed: ${core.sanitizeLine(message, 200)}`, "error");
        resolve();
      },
    }, sources);
    if (!started) {
      say(ctx, BUSY, "warning");
      resolve();
    }
  });
}

async function contextCommand(pi: ExtensionAPI, args: string, ctx: ExtensionCommandContext, sources: ReportSources): Promise<void> {
  const trimmed = args.trim();
  const [sub = ""] = trimmed.split(/\s+/, 1);
  if (sub === "compact") return compactCommand(pi, ctx, trimmed.slice(sub.length).trim(), sources);
  if (sub) return say(ctx, USAGE, "warning");
  const report = readReport(pi, ctx, sources);
  if (!report.ok) return say(ctx, `context: the report could not be built: ${report.error}`, "error");
  if (ctx.mode === "tui") {
    return showScreen(pi, ctx, report.value, sources);
  }
  say(ctx, report.value.text, "info");
}

/** Registers `/context` (and its `compact` form). */
export function registerCommands(pi: ExtensionAPI, sources: ReportSources): void {
  pi.registerCommand("context", {
    description: "Where the context window goes; /context compact [instructions] compacts from the report",
    getArgumentCompletions: (prefix: string) =>
      "compact".startsWith(prefix.trim()) ? [{ value: "compact", label: "compact", description: "Compact, never aborting a turn" }] : null,
    handler: async (args, ctx) => {
      try {
        await contextCommand(pi, args ?? "", ctx, sources);
      } catch (error) {
        say(ctx, `context: ${messageOf(error)}`, "error");
      }
    },
  });
}
