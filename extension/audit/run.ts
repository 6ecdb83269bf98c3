// The audit's one loop, shared by the `pi-context-guard audit` command
// (cli.ts) and `/guard audit` inside Pi (in-pi.ts): where Pi keeps sessions,
// the session files under the paths asked for, and each file read and
// measured in turn. Progress is the caller's to show.
import { readdirSync, readFileSync, statSync } from "node:fs";
import { homedir } from "node:os";
import { join, resolve } from "node:path";
import type { Audited } from "./format.ts";
import { readSession } from "./read.ts";
import { type Projection, wouldDo } from "./would-do.ts";

export interface Found {
  path: string;
  size: number;
}

export interface Failed {
  path: string;
  error: string;
}

const expand = (p: string) => (p === "~" || p.startsWith("~/") ? join(homedir(), p.slice(1)) : p);

/** Pi's agent folder (config.js): `PI_CODING_AGENT_DIR`, else `~/.pi/agent`. */
const agentFolder = (env: NodeJS.ProcessEnv) => (env.PI_CODING_AGENT_DIR ? expand(env.PI_CODING_AGENT_DIR) : join(homedir(), ".pi", "agent"));

/** Where Pi keeps sessions, as Pi finds it (main.js: the env, then the `sessionDir` setting; config.js: the agent dir). */
export function sessionFolder(env: NodeJS.ProcessEnv = process.env): string {
  if (env.PI_CODING_AGENT_SESSION_DIR) return expand(env.PI_CODING_AGENT_SESSION_DIR);
  const agentDir = agentFolder(env);
  try {
    const settings = JSON.parse(readFileSync(join(agentDir, "settings.json"), "utf8"));
    if (typeof settings?.sessionDir === "string" && settings.sessionDir) return expand(settings.sessionDir);
  } catch {
    // No settings file, or not JSON: Pi falls back to its default too.
  }
  return join(agentDir, "sessions");
}

/**
 * The folder of one project's sessions when Pi keeps them in its default place: `--<cwd with / \\ : as ->--`
 * under the sessions folder (session-manager.js `getDefaultSessionDirPath`); with a `sessionDir` of the
 * user's, that folder itself, which holds every project's sessions side by side.
 */
export function projectFolder(cwd: string, env: NodeJS.ProcessEnv = process.env): string {
  const root = sessionFolder(env);
  if (root !== join(agentFolder(env), "sessions")) return root;
  return join(
    root,
    `--${resolve(cwd)
      .replace(/^[/\\]/, "")
      .replace(/[/\\:]/g, "-")}--`,
  );
}

/** The session files under `path` (a file, or a folder searched for `.jsonl`), each with the size its stat gave. */
function collect(path: string, out: Found[], problems: Failed[], recurse: boolean): void {
  let st: ReturnType<typeof statSync>;
  try {
    st = statSync(path);
  } catch (error) {
    problems.push({ path, error: (error as NodeJS.ErrnoException).code === "ENOENT" ? "no such file or folder" : String((error as Error).message) });
    return;
  }
  if (st.isFile()) {
    out.push({ path, size: st.size });
    return;
  }
  let names: string[];
  try {
    names = readdirSync(path).sort();
  } catch (error) {
    problems.push({ path, error: String((error as Error).message) });
    return;
  }
  for (const name of names) {
    const p = join(path, name);
    let s: ReturnType<typeof statSync>;
    try {
      s = statSync(p);
    } catch {
      continue;
    }
    if (s.isDirectory()) {
      if (recurse) collect(p, out, problems, recurse);
    } else if (name.endsWith(".jsonl")) out.push({ path: p, size: s.size });
  }
}

/**
 * The session files under each root, relative roots taken from `cwd`. Folders are searched recursively
 * unless `recurse` is false (one project's folder holds its sessions directly).
 */
export function sessionFiles(roots: string[], cwd: string, recurse = true): { files: Found[]; failed: Failed[] } {
  const files: Found[] = [];
  const failed: Failed[] = [];
  for (const root of roots) collect(resolve(cwd, expand(root)), files, failed, recurse);
  return { files, failed };
}

export interface AuditOptions {
  /** Pi's projection when the caller has it (inside Pi); else would-do.ts finds one. */
  projection?: Projection;
  /** Keeps a session only when this says so (after its header is read): `/guard audit` keeps the current project's. */
  keep?: (session: { cwd: string }) => boolean;
  /** Called before each file and once at the end, with the files done and the bytes read. */
  progress?: (done: number, total: number, bytes: number) => void;
}

/** Reads and measures each file; a file that cannot be read is a failure with its reason, never an exception. */
export async function auditFiles(files: Found[], options: AuditOptions = {}): Promise<{ audited: Audited[]; failed: Failed[] }> {
  const audited: Audited[] = [];
  const failed: Failed[] = [];
  let bytes = 0;
  for (const [i, { path, size }] of files.entries()) {
    options.progress?.(i, files.length, bytes);
    try {
      bytes += size;
      const read = await readSession(path, size);
      if (!read.ok) {
        failed.push({ path, error: read.error });
        continue;
      }
      if (options.keep && !options.keep(read.session)) continue;
      const would = await wouldDo(read.session.light, read.session.model, options.projection);
      // The branch's texts are the session's biggest part: let them go before the next file.
      read.session.light = { entries: [], leafId: read.session.light.leafId, texts: new Uint8Array(0), lengths: new Uint32Array(0) };
      audited.push(would.ok ? { session: read.session, wouldDo: would.value } : { session: read.session, wouldDo: undefined, wouldDoError: would.error });
    } catch (error) {
      failed.push({ path, error: error instanceof Error ? error.message : String(error) });
    }
  }
  options.progress?.(files.length, files.length, bytes);
  return { audited, failed };
}
