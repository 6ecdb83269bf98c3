// `/context`, `/context compact [instructions]` and `/context export [path]`: the
// screen in the TUI, the plain-text report elsewhere, the guarded compact, and the
// report as a JSON file (export.ts).
//
// Every handler is wrapped: a failure becomes a message, never an exception
// that reaches Pi.
import type { ExtensionAPI, ExtensionCommandContext } from "@earendil-works/pi-coding-agent";
import { core } from "../core.ts";
import { say } from "../ui.ts";
import { BUSY, messageOf, type ReportSources, readReport, startCompact } from "./actions.ts";
import { exportPath, JSON_ENTRY, jsonEntry, writeExport } from "./export.ts";
import { showScreen } from "./view.ts";

export const USAGE = "Usage: /context (the report), /context compact [instructions] or /context export [path]";

/** `/context export [path]`: the report as JSON, where the user said or in the session's folder. */
function exportCommand(pi: ExtensionAPI, ctx: ExtensionCommandContext, path: string, sources: ReportSources): void {
  const report = readReport(pi, ctx, sources);
  if (!report.ok) return say(ctx, `context: the report could not be built: ${report.error}`, "error");
  let written: string;
  try {
    written = writeExport(exportPath(path, ctx.sessionManager, ctx.cwd), report.value);
  } catch (error) {
    return say(ctx, `context: the report could not be written: ${core.sanitizeLine(messageOf(error), 300)}`, "error");
  }
  if (ctx.mode === "json") return pi.appendEntry(JSON_ENTRY, jsonEntry(report.value, written));
  say(ctx, `Context report written to ${core.sanitizeLine(written, 400)} (${report.value.schema} v${report.value.version})`, "info");
}

async function compactCommand(pi: ExtensionAPI, ctx: ExtensionCommandContext, instructions: string, sources: ReportSources): Promise<void> {
  await new Promise<void>((resolve) => {
    const started = startCompact(
      pi,
      ctx,
      instructions,
      {
        done: (report) => {
          if (report.ok && report.value.compacted) say(ctx, report.value.compacted.line, "info");
          else say(ctx, `Compacted; the report could not be rebuilt: ${report.ok ? "no result" : report.error}`, "warning");
          resolve();
        },
        failed: (message) => {
          say(ctx, `Compaction failed: ${core.sanitizeLine(message, 200)}`, "error");
          resolve();
        },
      },
      sources,
    );
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
  if (sub === "export") return exportCommand(pi, ctx, trimmed.slice(sub.length).trim(), sources);
  if (sub) return say(ctx, USAGE, "warning");
  const report = readReport(pi, ctx, sources);
  if (!report.ok) return say(ctx, `context: the report could not be built: ${report.error}`, "error");
  if (ctx.mode === "tui") {
    return showScreen(pi, ctx, report.value, sources);
  }
  // Stdout is Pi's JSONL stream in json mode, where a notification shows nowhere.
  if (ctx.mode === "json") return pi.appendEntry(JSON_ENTRY, jsonEntry(report.value));
  say(ctx, report.value.text, "info");
}

/** Registers `/context` (and its `compact` form). */
export function registerCommands(pi: ExtensionAPI, sources: ReportSources): void {
  pi.registerCommand("context", {
    description: "Where the context window goes; /context compact [instructions] compacts from the report; /context export [path] writes it as JSON",
    getArgumentCompletions: (prefix: string) => {
      const all = [
        { value: "compact", label: "compact", description: "Compact, never aborting a turn" },
        { value: "export", label: "export", description: "Write the report as JSON (default: the session's folder)" },
      ].filter((c) => c.value.startsWith(prefix.trim()));
      return all.length ? all : null;
    },
    handler: async (args, ctx) => {
      try {
        await contextCommand(pi, args ?? "", ctx, sources);
      } catch (error) {
        say(ctx, `context: ${messageOf(error)}`, "error");
      }
    },
  });
}
