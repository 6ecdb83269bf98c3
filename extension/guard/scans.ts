// The secrets of each session's large tool outputs, found once, when the outputs arrive, rather than at
// the checkpoint or run end that sends them to the judge (crates/guard/src/scanned.rs; docs/GUARD.md
// "What is withheld"). Scanning 2 MB takes about 18 ms: spread over the turns that brought the outputs
// (about 0.5 ms for 50 KB), and run after each turn_end while the next request is out, it took a
// checkpoint's own work from 35–38 ms to 20–24 ms (tests/bench/checkpoint.bench.ts).
//
// Kept by session id: entry ids are unique only within a session. A few sessions are kept (an SDK host may
// run several in one process); the oldest is freed past that.
import type { ExtensionContext } from "@earendil-works/pi-coding-agent";
import * as wasm from "../../pkg/context_guard.js";
import { coreEntries, type ProjectedEntry } from "./collect.ts";
import type { GuardSettings } from "./types.ts";
import { guardCore } from "./wasm.ts";

const KEPT_SESSIONS = 4;

interface SessionScans {
  scans: wasm.Scans;
  /** The tool results already offered to `note` (scanned, or too small or not text). */
  seen: Set<string>;
}

const sessions = new Map<string, SessionScans>();

function sessionId(ctx: ExtensionContext): string | undefined {
  try {
    return ctx.sessionManager.getSessionId();
  } catch {
    return undefined;
  }
}

function of(ctx: ExtensionContext): SessionScans | undefined {
  const id = sessionId(ctx);
  if (id === undefined) return undefined;
  let kept = sessions.get(id);
  if (kept) {
    // Most recently used last: the first is the one to free.
    sessions.delete(id);
  } else {
    kept = { scans: new wasm.Scans(), seen: new Set() };
    for (const [old, s] of sessions) {
      if (sessions.size < KEPT_SESSIONS) break;
      s.scans.free();
      sessions.delete(old);
    }
  }
  sessions.set(id, kept);
  return kept;
}

/** The session's scans for a plan (`guardCore.planPass`, `planCheckpoint`); none when the session has no id. */
export function sessionScans(ctx: ExtensionContext): wasm.Scans | undefined {
  return of(ctx)?.scans;
}

/**
 * Scans the tool results among `contextEntries` (a turn_end's preview) that the session's scans have not
 * seen. Throws what the core throws (malformed input): call it where a failure is warned once.
 */
export function noteArrivals(ctx: ExtensionContext, contextEntries: readonly unknown[], settings: GuardSettings): number {
  const kept = of(ctx);
  if (!kept) return 0;
  const fresh = (contextEntries as ProjectedEntry[]).filter((e) => {
    const id = e.sourceEntry?.id;
    const role = (e.sourceEntry?.message as { role?: string } | undefined)?.role;
    if (typeof id !== "string" || role !== "toolResult" || kept.seen.has(id)) return false;
    kept.seen.add(id);
    return true;
  });
  return fresh.length ? guardCore.noteOutputs(kept.scans, coreEntries(fresh), settings) : 0;
}
