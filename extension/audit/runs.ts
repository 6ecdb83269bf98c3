// The run lengths of a project's saved sessions, for the guard's `median`
// estimator of later requests (issue 20, docs/GUARD.md "When an edit pays
// off"): the sessions `/guard audit` reads for the project (the current
// session's folder, else the project's folder under Pi's sessions folder;
// sessions whose header names this working directory), read with the audit's
// reader (read.ts) and counted by the guard's `runLengths`, so a run is the
// same thing in both.
//
// Bounded: the SAVED_SESSIONS most recently written files of at most
// SAVED_SESSION_BYTES each (a larger one is left out, and said: its size is
// known before its header, so in a `sessionDir` shared by every project it may
// be another project's), the current
// session's own file never (its runs come from Pi's branch). Read once per
// Pi session, in the background: a turn never waits for it, and a checkpoint
// before it is done has this session's runs only. A file that cannot be read
// is left out; a folder that cannot be listed is a note for `/guard` and one
// warning, never an exception into Pi.
import { statSync } from "node:fs";
import { resolve } from "node:path";
import type { ExtensionContext } from "@earendil-works/pi-coding-agent";
import type { SavedRuns } from "../guard/earlier-runs.ts";
import { runLengths } from "../guard/runs.ts";
import { readSession } from "./read.ts";
import { projectFolder, sessionFiles } from "./run.ts";

/** How many saved sessions are read at most: the most recently written. */
export const SAVED_SESSIONS = 50;
/** A session file larger than this is left out (2 MB: tens of runs; read in a few milliseconds). */
export const SAVED_SESSION_BYTES = 2 * 1024 * 1024;

export interface SavedRead {
  /** Each read session's runs, oldest session first. */
  runs: number[];
  sessions: number;
  /** Files left out: larger than the bound, or beyond the count. */
  tooLarge: number;
  beyond: number;
  /** Files that are not sessions this reads (another format, not JSON). */
  unreadable: number;
}

/**
 * The runs of the saved sessions in `folder` whose header names `cwd`, other than `own`, within the bounds.
 * Throws only when the folder cannot be listed at all (a missing folder has no sessions).
 */
export async function readSavedRuns(
  folder: string,
  cwd: string,
  own: string | undefined,
  limits = { sessions: SAVED_SESSIONS, bytes: SAVED_SESSION_BYTES },
): Promise<SavedRead> {
  const { files, failed } = sessionFiles([folder], cwd, false);
  const missing = failed.every((f) => f.error === "no such file or folder");
  if (failed.length && !missing) throw new Error(failed.map((f) => f.error).join("; "));
  const mtime = (path: string) => {
    try {
      return statSync(path).mtimeMs;
    } catch {
      return 0;
    }
  };
  const others = files
    .filter((f) => !own || resolve(f.path) !== resolve(own))
    .map((f) => ({ ...f, at: mtime(f.path) }))
    .sort((a, b) => b.at - a.at);
  const out: SavedRead = { runs: [], sessions: 0, tooLarge: 0, beyond: 0, unreadable: 0 };
  const read: number[][] = [];
  for (const f of others) {
    if (read.length >= limits.sessions) {
      out.beyond++;
      continue;
    }
    if (f.size > limits.bytes) {
      out.tooLarge++;
      continue;
    }
    const session = await readSession(f.path, f.size).catch(() => undefined);
    if (!session?.ok) {
      out.unreadable++;
      continue;
    }
    if (resolve(session.session.cwd) !== resolve(cwd)) continue;
    read.push(runLengths(session.session.light.entries));
  }
  // Newest last, as the estimator's input is ordered.
  for (const runs of read.reverse()) out.runs.push(...runs);
  out.sessions = read.length;
  return out;
}

/** What `/guard` says of the saved sessions besides their count, when anything. */
function noteOf(r: SavedRead): string | undefined {
  const parts: string[] = [];
  if (r.sessions) parts.push(`read from ${r.sessions} saved session${r.sessions === 1 ? "" : "s"} of this project`);
  if (r.tooLarge) parts.push(`${r.tooLarge} over ${SAVED_SESSION_BYTES / 1024 / 1024} MB left out`);
  if (r.beyond) parts.push(`${r.beyond} older left out (the newest ${SAVED_SESSIONS} read)`);
  if (r.unreadable) parts.push(`${r.unreadable} unreadable`);
  return parts.length ? parts.join(", ") : undefined;
}

/**
 * The saved sessions' runs as the guard takes them (`SavedRuns`): `start` reads the project of `ctx` in the
 * background, once for each session (a new or resumed session reads again); `get` returns what is read.
 */
export function savedSessionRuns(): SavedRuns {
  let key: string | undefined;
  let state: { runs: number[]; note?: string } = { runs: [] };
  const where = (ctx: ExtensionContext) => {
    const own = ctx.sessionManager.getSessionFile();
    // A session not saved (`--no-session`) has no folder of its own: then the one Pi would use for this project.
    return { folder: ctx.sessionManager.getSessionDir() || projectFolder(ctx.cwd), own, cwd: ctx.cwd };
  };
  const start = (ctx: ExtensionContext, warn: (message: string) => void) => {
    const { folder, own, cwd } = where(ctx);
    const mine = `${folder}\n${own ?? ""}\n${cwd}`;
    if (mine === key) return;
    key = mine;
    state = { runs: [], note: "saved sessions still being read" };
    // After the handler returns: even listing the folder waits for Pi's own work.
    new Promise((next) => setImmediate(next))
      .then(() => readSavedRuns(folder, cwd, own))
      .then(
        (r) => {
          if (key === mine) state = { runs: r.runs, note: noteOf(r) };
        },
        (error: unknown) => {
          if (key !== mine) return;
          const why = `saved sessions not read: ${error instanceof Error ? error.message : String(error)}`;
          state = { runs: [], note: why };
          warn(why);
        },
      );
  };
  return {
    start,
    get: () => state,
  };
}
