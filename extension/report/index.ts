// /context: a read-only report of the context window with one action hanging
// off it, a guarded compact. Command-only on purpose: no tool is declared, so
// the model's prompt budget is untouched, and no state is kept — the report is
// derived from the live session on demand.
import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";
import { disabledBy } from "../switches.ts";
import type { ReportSources } from "./actions.ts";
import { registerCommands } from "./commands.ts";

/**
 * Registers `/context` unless `PI_DISABLED_EXTENSIONS` names `context` or
 * `context-guard`. `sources.keptOut` gives the guard's figures (the report
 * imports nothing of the guard).
 */
export function registerReport(pi: ExtensionAPI, sources: ReportSources = {}): void {
  if (disabledBy(["context", "context-guard"])) return;
  registerCommands(pi, sources);
}
