// `/guard audit [all | PATH…] [--html FILE]` inside Pi (issue 19): the same
// audit as `pi-context-guard audit`, for the sessions of the current project
// (the current session's folder, sessions whose header names this working
// directory), for all of Pi's sessions (`all`), or for given files and
// folders. A screen in the TUI, the text elsewhere, and in json mode a custom
// entry (`context-guard-audit`) holding the audit's JSON object. Measured on
// Pi's own projection: the Pi that runs this is the one the user has.
import { writeFileSync } from "node:fs";
import { resolve } from "node:path";
import { buildSessionProjection, type ExtensionAPI, type ExtensionCommandContext } from "@earendil-works/pi-coding-agent";
import { core } from "../core.ts";
import { readAuditArgs } from "./args.ts";
import { json, text } from "./format.ts";
import { html } from "./html.ts";
import { auditFiles, projectFolder, sessionFiles, sessionFolder } from "./run.ts";
import { AuditScreen } from "./screen.ts";
import type { Projection } from "./would-do.ts";

// The project's saved sessions' run lengths for the guard's estimator (runs.ts), handed over by index.ts.
export { savedSessionRuns } from "./runs.ts";

/** The custom entry `/guard audit` appends in json mode. */
export const AUDIT_ENTRY = "context-guard-audit";

export const AUDIT_USAGE = "Usage: /guard audit [all | PATH…] [--html FILE] (none: this project's sessions)";

/** Files from this many on get a notice first: reading them takes a moment. */
const NOTICE_FROM = 20;

type Parsed = { scope: "project" | "all" | "paths"; paths: string[]; htmlFile: string | undefined } | { error: string };

/** The words after `/guard audit`. Paths with spaces can be quoted ("…" or '…'). */
export function parseAuditArgs(args: string): Parsed {
  const words = [...args.matchAll(/"([^"]*)"|'([^']*)'|(\S+)/g)].map((m) => m[1] ?? m[2] ?? m[3]);
  const read = readAuditArgs(words, false);
  if ("error" in read) return { error: `${read.error}. ${AUDIT_USAGE}` };
  const all = read.paths.includes("all");
  const paths = read.paths.filter((p) => p !== "all");
  if (all && paths.length) return { error: `"all" or paths, not both. ${AUDIT_USAGE}` };
  return { scope: all ? "all" : paths.length ? "paths" : "project", paths, htmlFile: read.html };
}

/** How `/guard` replies in every mode (in json mode, a `guard-report` entry). */
export type Say = (text: string, level: "info" | "warning" | "error") => void;

export async function auditCommand(pi: ExtensionAPI, args: string, ctx: ExtensionCommandContext, say: Say): Promise<void> {
  const parsed = parseAuditArgs(args);
  if ("error" in parsed) return say(`context-guard: ${parsed.error}`, "warning");
  const cwd = ctx.cwd;
  // A session not saved (`--no-session`) has no folder of its own: then the one Pi would use for this project.
  const projectDir = ctx.sessionManager.getSessionDir() || projectFolder(cwd);
  const roots = parsed.scope === "all" ? [sessionFolder()] : parsed.scope === "paths" ? parsed.paths : [projectDir];
  // A project's folder holds its sessions directly; a custom `sessionDir` may hold every project's, so keep this one's.
  const { files, failed } = sessionFiles(roots, cwd, parsed.scope !== "project");
  if (files.length >= NOTICE_FROM) say(`context-guard: auditing ${files.length} session files…`, "info");
  const done = await auditFiles(files, {
    projection: buildSessionProjection as unknown as Projection,
    keep: parsed.scope === "project" ? (s) => resolve(s.cwd) === resolve(cwd) : undefined,
  });
  failed.push(...done.failed);
  const audited = done.audited;
  const scope =
    parsed.scope === "project"
      ? `this project's sessions (${projectDir})`
      : parsed.scope === "all"
        ? `all sessions (${sessionFolder()})`
        : parsed.paths.join(" ");
  if (files.length === 0 && failed.length === 0) failed.push({ path: roots.join(" "), error: "no session files (.jsonl) found" });

  let written = "";
  if (parsed.htmlFile) {
    const target = resolve(cwd, parsed.htmlFile);
    try {
      writeFileSync(target, html(audited, failed));
      written = `The page is written to ${target}`;
    } catch (error) {
      say(`context-guard: the page could not be written to ${core.sanitizeLine(target, 300)}: ${core.sanitizeLine((error as Error).message, 200)}`, "error");
    }
  }
  if (ctx.mode === "json") {
    pi.appendEntry(AUDIT_ENTRY, { ...json(audited, failed), scope, html: written ? resolve(cwd, parsed.htmlFile ?? "") : null });
    return;
  }
  const body = `${text(audited, failed)}${written ? `\n${written}\n` : ""}`;
  if (ctx.mode === "tui") {
    const title = `${audited.length} session${audited.length === 1 ? "" : "s"} · ${scope}`;
    await ctx.ui.custom<void>((tui, theme, _keys, close) => new AuditScreen(tui, theme, title, body, () => close(undefined)));
    return;
  }
  say(body.trimEnd(), audited.length ? "info" : "warning");
}
