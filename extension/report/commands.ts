// `/context` and `/context compact [instructions]`: the screen in the TUI, the
// plain-text report elsewhere, and the guarded compact.
//
// Every handler is wrapped: a failure becomes a message, never an exception
// that reaches Pi.
import type { ExtensionAPI, ExtensionCommandContext } from "@earendil-works/pi-coding-agent";
import { core } from "../core.ts";
import { say } from "../ui.ts";
import { BUSY, messageOf, type ReportSources, readReport, startCompact } from "./actions.ts";
import { showScreen } from "./view.ts";

export const USAGE = "Usage: /context (the report) or /context compact [instructions]";

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
