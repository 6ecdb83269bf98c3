// `/guard`: the short screen and the details (the core words both,
// guard/summary.rs), on and off, the classifier (`/guard model`), reload, and
// the audit inside Pi (handed over by index.ts). In `pi --mode json` each
// reply is a small custom entry instead of a notification.
import type { ExtensionAPI, ExtensionCommandContext } from "@earendil-works/pi-coding-agent";
import { callCore, core, coreLoadMs } from "../core.ts";
import type { GuardStats } from "../kept.ts";
import { say as sayInUi } from "../ui.ts";
import type { Background } from "./background.ts";
import { sessionBill } from "./bill.ts";
import type { SkipNote } from "./checkpoint.ts";
import { statsInput } from "./figures.ts";
import { findClassifier, listModels, modelKey, withSuggestion } from "./model.ts";
import type { Pin } from "./pin.ts";
import { earlierRunCounts } from "./earlier-runs.ts";
import { readSettingsText, writeSettingsText } from "./settings-file.ts";
import type { SettingsCache } from "./settings.ts";
import type { StatusBar } from "./status.ts";
import type { BreakEvenDecision } from "./types.ts";
import { guardCore } from "./wasm.ts";

/** The custom entry through which `/guard` replies in `pi --mode json`. */
export const GUARD_REPORT_ENTRY = "guard-report";

/** What `/guard` shows that no record holds: kept by this process's passes for the session. */
export interface GuardNotes {
  /** The last checkpoint (or run end) that skipped, for `/guard`'s one line. */
  lastSkip?: SkipNote;
  /**
   * The last run-end pass's break-even decisions: one that only deferred appends no record. A checkpoint
   * that runs records its own, so it clears this and the records speak.
   */
  lastBreakEven: BreakEvenDecision[];
  /** Why the edits before a compaction could not keep Pi under its threshold (nothing is appended then). */
  compactionLine?: string;
}

/** What `/guard` hands to parts it does not import: `audit` runs `/guard audit …` (audit/in-pi.ts, given by index.ts). */
export interface GuardCommands {
  audit: (args: string, ctx: ExtensionCommandContext, say: (text: string, level: "info" | "warning" | "error") => void) => Promise<void>;
}

export interface CommandDeps {
  settings: SettingsCache;
  status: StatusBar;
  background: Background;
  pin: Pin;
  notes: GuardNotes;
  commands: GuardCommands;
}

export function registerGuardCommand(pi: ExtensionAPI, deps: CommandDeps): void {
  const { settings: cache, status, background, pin, notes, commands } = deps;
  pi.registerCommand("guard", {
    description: "context-guard: status, details, on, off, reload, model [provider/id], audit [all | PATH…] [--html FILE]",
    getArgumentCompletions: (prefix: string) =>
      ["status", "details", "on", "off", "reload", "model", "audit"].filter((c) => c.startsWith(prefix.trim())).map((c) => ({ value: c, label: c })),
    handler: async (args: string, ctx: ExtensionCommandContext) => {
      // In `pi --mode json` stdout is Pi's JSONL stream and a notification shows nowhere: each reply goes
      // as a small custom entry, which Pi emits as an `entry_appended` record (saved in the session file,
      // never in the model's context; the guard's readers take only `context-guard` records).
      const say = (ctx: ExtensionCommandContext, text: string, kind: "info" | "warning" | "error") =>
        ctx.mode === "json" ? pi.appendEntry(GUARD_REPORT_ENTRY, { text, kind }) : sayInUi(ctx, text, kind);
      try {
        const word = args.trim().toLowerCase();
        if (word === "on" || word === "off") {
          const { path } = cache.settingsOf(ctx);
          const current = readSettingsText(path);
          if (current.error) return say(ctx, `context-guard: ${current.error}; nothing changed`, "error");
          const next = callCore(() => guardCore.setEnabled(current.text ?? "{}", word === "on"));
          if (!next.ok) return say(ctx, `context-guard: ${path} is not a JSON object (${next.error}); nothing changed`, "error");
          const failed = writeSettingsText(path, next.value);
          if (failed) return say(ctx, `context-guard: ${failed}`, "error");
          cache.forget();
          background.dropAll(`the guard was turned ${word}`);
          status.refresh(ctx);
          return say(ctx, `context-guard: ${word === "on" ? "on" : "off"} (saved to ${path})`, "info");
        }
        if (word === "model" || word.startsWith("model ")) {
          const { path, settings } = cache.settingsOf(ctx);
          const chosen = args.trim().slice("model".length).trim();
          if (!chosen) return say(ctx, await listModels(ctx, settings.model), "info");
          const current = readSettingsText(path);
          if (current.error) return say(ctx, `context-guard: ${current.error}; nothing changed`, "error");
          const next = callCore(() => guardCore.setModel(current.text ?? "{}", chosen));
          if (!next.ok) return say(ctx, `context-guard: ${next.error}`, "error");
          // The core's reading of what was saved (settings.rs `split_model`), not a second split here.
          const saved = callCore(() => guardCore.parseSettings(next.value));
          if (!saved.ok) return say(ctx, `context-guard: ${saved.error}`, "error");
          const { modelProvider: provider, modelId: id } = saved.value.settings;
          const found = findClassifier(ctx, saved.value.settings);
          if (!found.ok && found.status.endsWith("not found"))
            return say(ctx, `context-guard: Pi knows no model ${chosen.slice(0, 80)}; nothing changed`, "warning");
          const failed = writeSettingsText(path, next.value);
          if (failed) return say(ctx, `context-guard: ${failed}`, "error");
          cache.forget();
          status.refresh(ctx);
          const kind = found.ok ? (found.judge ? "a chat model, the judge" : "a classifier") : found.status;
          return say(ctx, `context-guard: model ${modelKey({ provider, id })} (${kind}; saved to ${path})`, "info");
        }
        if (word === "audit" || word.startsWith("audit "))
          return await commands.audit(args.trim().slice("audit".length), ctx, (text, level) => say(ctx, text, level));
        if (word === "reload") {
          cache.reload();
          const fresh = cache.settingsOf(ctx);
          status.refresh(ctx);
          return say(
            ctx,
            fresh.warnings.length
              ? `context-guard: settings reloaded with ${fresh.warnings.length} warning(s)`
              : `context-guard: settings reloaded from ${fresh.path}`,
            fresh.warnings.length ? "warning" : "info",
          );
        }
        if (word !== "" && word !== "status" && word !== "details") {
          return say(
            ctx,
            `context-guard: unknown subcommand "${word.slice(0, 40)}"; use /guard, /guard details, /guard on, /guard off, /guard reload, /guard model or /guard audit`,
            "warning",
          );
        }
        const { settings, path, warnings } = cache.settingsOf(ctx);
        status.refresh(ctx);
        const lookup = findClassifier(ctx, settings);
        const { records, input } = statsInput(ctx);
        const figures = callCore(() => guardCore.savings(input));
        const text = callCore(() =>
          guardCore.summary({
            details: word === "details",
            enabled: settings.enabled,
            model: settings.model,
            modelProblem: lookup.ok ? undefined : withSuggestion(ctx, lookup.status),
            settingsPath: path,
            warnings,
            midRun: settings.midRun,
            midRunBatchChars: settings.midRunBatchChars,
            midRunRoomTokens: settings.midRunRoomTokens,
            midRunRoomMinTokens: settings.midRunRoomMinTokens,
            midRunBreakEven: settings.midRunBreakEven,
            laterRequests: settings.laterRequests,
            ...earlierRunCounts(ctx),
            midRunMinAgeTurns: settings.midRunMinAgeTurns,
            midRunMinTurns: settings.midRunMinTurns,
            lastSkip: notes.lastSkip,
            beforeCompaction: notes.compactionLine,
            background: background.describe(),
            cachePin: settings.enabled ? pin.describe(ctx, settings) : undefined,
            lastBreakEven: notes.lastBreakEven,
            pruneExchanges: settings.pruneExchanges,
            stats: { ...(figures.ok ? figures.value.stats : ({} as GuardStats)), bill: sessionBill(ctx) },
            records,
            coreVersion: core.version(),
            coreLoadMs,
          }),
        );
        say(ctx, text.ok ? text.value : `context-guard: ${text.error}`, text.ok ? "info" : "error");
      } catch (error) {
        say(ctx, `context-guard: /guard failed: ${(error as Error).message}`, "error");
      }
    },
  });
}
