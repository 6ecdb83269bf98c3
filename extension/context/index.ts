// /context: a read-only report of the context window with one action hanging
// off it, a guarded compact. Command-only on purpose: no tool is declared, so
// the model's prompt budget is untouched, and no state is kept — the report is
// derived from the live session on demand.
import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";
import { registerCommands } from "./commands.ts";

/** Names in `PI_DISABLED_EXTENSIONS` (comma- or space-separated) that turn /context off. */
const SWITCHES = ["context", "context-guard"];

/** Whether `PI_DISABLED_EXTENSIONS` turns /context off. */
export function contextDisabled(env: string | undefined = process.env.PI_DISABLED_EXTENSIONS): boolean {
  const names = (env ?? "").split(/[\s,]+/).map((n) => n.trim().toLowerCase());
  return names.some((n) => SWITCHES.includes(n));
}

/** Registers `/context` unless `PI_DISABLED_EXTENSIONS` names `context` or `context-guard`. */
export function registerContext(pi: ExtensionAPI): void {
  if (contextDisabled()) return;
  registerCommands(pi);
}
