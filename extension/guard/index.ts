// The guard inside Pi, wired together: the settings (settings.ts), the status
// bar (status.ts), the judge's work in the background (background.ts), the
// cache pin (pin.ts), the run-end pass (run-end.ts), the opening pass for a
// lapsed cache (lapse.ts), mid-run checkpoints (checkpoint.ts), `recall`
// (recall.ts) and `/guard` (command.ts). Every rule is the core's; these files
// read Pi, call the classifier, append what the core drafted, and report.
//
// Nothing is remembered between passes but what /guard shows of them
// (GuardNotes): savings, usage and what was judged are read back from the
// session branch, never from returned drafts, so `/tree`, reloads and
// compaction need no bookkeeping. A failure anywhere leaves the session as it
// was and warns once; no exception reaches Pi.
import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";
import { disabledBy } from "../switches.ts";
import { Background } from "./background.ts";
import { registerCheckpoint } from "./checkpoint.ts";
import { type GuardCommands, type GuardNotes, registerGuardCommand } from "./command.ts";
import { registerOpening } from "./lapse.ts";
import { findClassifier } from "./model.ts";
import { registerPin } from "./pin.ts";
import { registerRecall } from "./recall.ts";
import { registerRunEnd } from "./run-end.ts";
import { type SavedRuns, useSavedRuns } from "./earlier-runs.ts";
import { SettingsCache } from "./settings.ts";
import { StatusBar } from "./status.ts";

export { GUARD_REPORT_ENTRY } from "./command.ts";

/** What index.ts hands the guard: the audit for `/guard audit`, the saved sessions' runs for the `median` estimator. */
export interface GuardParts extends GuardCommands {
  /** The project's saved sessions' run lengths for the `median` estimator (audit/in-pi.ts, given by index.ts). */
  savedRuns?: SavedRuns;
}

export function registerGuard(pi: ExtensionAPI, parts: GuardParts): void {
  if (disabledBy(["guard", "context-guard"])) return;
  useSavedRuns(parts.savedRuns);

  const settings = new SettingsCache();
  const notes: GuardNotes = { lastBreakEven: [] };
  // Passes whose judge works in the background (issue 27): the status shows their answers coming in.
  const background: Background = new Background(
    (ctx) => void status.refresh(ctx),
    (phase, outcome) => {
      if (phase === "run-end") notes.lastBreakEven = outcome.breakEven ?? [];
    },
  );
  const status = new StatusBar(settings, () => background.status());
  // The pin reads `enabled` and `pinAnthropicCache` on every provider request: the file's settings, with
  // no classifier lookup (fitting `maxSegmentChars` changes neither).
  const pin = registerPin(pi, (ctx) => settings.fileSettings(ctx).settings, settings.warnOnce);

  pi.on("session_start", (_event, ctx) => {
    settings.forget();
    background.dropAll("a new session started");
    background.closed = false;
    status.refresh(ctx);
    // The saved sessions' runs are read in the background, once per session, for the checkpoints' estimator.
    try {
      const file = settings.fileSettings(ctx).settings;
      if (file.enabled && file.midRun && file.laterRequests === "median") parts.savedRuns?.start(ctx, (m) => settings.warnOnce(ctx, m));
    } catch (error) {
      settings.warnOnce(ctx, `saved sessions not read: ${(error as Error).message}`);
    }
  });
  pi.on("agent_settled", (event, ctx) => {
    // Esc aborts the judge's requests too, and changes nothing (issue 27).
    if ((event as { aborted?: boolean }).aborted) background.dropAll("the run was stopped (Esc)");
    status.refresh(ctx);
  });
  pi.on("session_tree", (_event, ctx) => {
    background.dropOffBranch(ctx);
    status.refresh(ctx);
  });
  // Pi exits (or reloads, or switches sessions): answers still out would land nowhere. Their requests
  // are aborted and nothing changes: the outputs stay whole in the session, as they were.
  pi.on("session_shutdown", () => {
    background.closed = true;
    background.dropAll("Pi exited before the answers came");
  });
  pi.on("session_compact", (_event, ctx) => void status.refresh(ctx));

  registerRunEnd(pi, { settings, status, background, pin, notes });
  // Before the checkpoint's turn_end, which then sees the opening pass's edits among the proposals.
  registerOpening(pi, {
    settingsOf: settings.settingsOf,
    lookup: findClassifier,
    busy: status.busy,
    warnOnce: settings.warnOnce,
    readPoints: (ctx) => pin.readPoints(ctx),
    background,
    lastBreakEven: () => notes.lastBreakEven,
    noteBreakEven: (decisions) => {
      notes.lastBreakEven = decisions;
    },
  });
  // Mid-run checkpoints (docs/GUARD.md "Mid-run checkpoints") at turn_end; the last skip is kept for /guard's one line.
  registerCheckpoint(pi, {
    settingsOf: settings.settingsOf,
    lookup: findClassifier,
    busy: status.busy,
    refresh: (ctx) => void status.refresh(ctx),
    warnOnce: settings.warnOnce,
    noteSkip: (note) => {
      notes.lastSkip = note;
      if (!note) notes.lastBreakEven = [];
    },
    noteCompaction: (line) => {
      notes.compactionLine = line;
    },
    readPoints: (ctx) => pin.readPoints(ctx),
    background,
  });
  registerRecall(pi);
  registerGuardCommand(pi, { settings, status, background, pin, notes, commands: parts });
}
