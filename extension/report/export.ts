// `/context export [path]`: the whole report as one JSON file, and the same
// object on the `context:report` event.
//
// The object is the core's report (every row, the sentences, the history, the
// guard's figures) plus what stays on this side of the boundary: each projected
// message's count as the core read it (`counts`) and the context of each request
// (`series`). It is versioned (`schema`, `version`; docs/CONTEXT.md "Export")
// so a reader can tell a later shape from this one.
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, isAbsolute, join, resolve } from "node:path";
import type { ContextReport } from "./types.ts";

export const EXPORT_SCHEMA = "pi-context-guard/context-report";
/** Raised when a field changes meaning or goes away; new fields keep the version. */
export const EXPORT_VERSION = 1;

/** What `/context export` writes and `context:report` carries. */
export type ContextExport = {
  schema: typeof EXPORT_SCHEMA;
  version: typeof EXPORT_VERSION;
  /** When the report was read (ISO 8601). */
  createdAt: string;
  /** Pi's session id. */
  sessionId: string;
} & ContextReport & {
    /** Each projected message's count (Pi's `estimateTokens`), in projection order. */
    counts: number[];
  };

export function toExport(report: ContextReport, counts: ArrayLike<number>, sessionId: string, now = new Date()): ContextExport {
  return { schema: EXPORT_SCHEMA, version: EXPORT_VERSION, createdAt: now.toISOString(), sessionId, ...report, counts: Array.from(counts) };
}

/** The custom entry's type through which `/context` reaches `pi --mode json`'s stream. */
export const JSON_ENTRY = "context-report";

/**
 * What `pi --mode json` gets for `/context`: stdout there is Pi's JSONL stream only, so the report
 * goes in Pi's own way, as a custom entry (`pi.appendEntry`), which Pi emits as an `entry_appended`
 * record and saves in the session file. Custom entries never reach the model's context. Kept small:
 * the text and the summary figures, never the per-message counts or the rows (`/context export`
 * writes those). `written` is the export's path, when the command wrote one.
 */
export function jsonEntry(report: ContextExport, written?: string) {
  const { headline, estimate, drift, requests } = report;
  return {
    schema: EXPORT_SCHEMA,
    version: EXPORT_VERSION,
    text: written ? `Context report written to ${written}` : report.text,
    ...(written ? { written } : {}),
    summary: {
      tokens: headline.tokens ?? null,
      window: headline.window ?? null,
      percent: headline.percent ?? null,
      estimate,
      drift: drift.difference ?? null,
      requests: requests.count,
      peak: requests.peak,
      cost: requests.cost ?? null,
    },
  };
}

/** What the default path needs of Pi's session manager. */
export interface SessionPlace {
  getSessionFile?: () => string | undefined;
  getSessionDir?: () => string;
  getSessionId?: () => string;
}

/**
 * The file to write: `path` against the session's folder when given relative (`~` is not
 * expanded: the shell did not see it), else `context-<session id>-<time>.json` in the folder of
 * the session file (an in-memory session has none: its session folder, else `cwd`).
 */
export function exportPath(path: string, place: SessionPlace, cwd: string, now = new Date()): string {
  const file = place.getSessionFile?.();
  const folder = file ? dirname(file) : place.getSessionDir?.() || cwd;
  if (path) return isAbsolute(path) ? path : resolve(cwd, path);
  const stamp = now.toISOString().replace(/[:.]/g, "-");
  const id = (place.getSessionId?.() ?? "session").replace(/[^A-Za-z0-9_-]/g, "_");
  return join(folder, `context-${id}-${stamp}.json`);
}

/** Writes the export (its folder made when missing) and returns the path written. */
export function writeExport(path: string, data: ContextExport): string {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, `${JSON.stringify(data, null, 2)}\n`);
  return path;
}
