// The guard inside Pi: settings, the run-end pass, `recall`, `/guard`, and the
// status bar. Every rule is the core's; this file reads Pi, calls the
// classifier, appends what the core drafted, and reports.
//
// Nothing is remembered between passes: savings, usage and what was judged are
// read back from the session branch (guard.md §1), so `/tree`, reloads and
// compaction need no bookkeeping. A failure anywhere leaves the session as it
// was and warns once; no exception reaches Pi.
import type { ExtensionAPI, ExtensionCommandContext, ExtensionContext } from "@earendil-works/pi-coding-agent";
import { Type } from "typebox";
import { callCore, core, coreLoadMs } from "../core.ts";
import type { BreakEvenDecision, GuardSettings, PassInput } from "./types.ts";
import { disabledBy } from "../switches.ts";
import type { GuardStats } from "../kept.ts";
import { say, say as sayInUi, setStatus } from "../ui.ts";
import { classifyAndFinish, earlierRunCounts, passInput, registerCheckpoint, type SavedRuns, type SkipNote, useSavedRuns } from "./checkpoint.ts";
import { exchangeSource } from "./collect.ts";
import { guardFigures, statsInput } from "./figures.ts";
import { sessionBill } from "./bill.ts";
import { classifierWindow, findClassifier, judgePrice, listModels, modelKey, withSuggestion } from "./model.ts";
import { readSettingsText, settingsPath, writeSettingsText } from "./settings-file.ts";
import { registerOpening } from "./lapse.ts";
import { registerPin } from "./pin.ts";
import { Background } from "./background.ts";
import { guardCore, type Planned } from "./wasm.ts";

const STATUS_KEY = "context-guard";
/** The custom entry through which `/guard` replies in `pi --mode json`. */
export const GUARD_REPORT_ENTRY = "guard-report";

interface Loaded {
  path: string;
  settings: GuardSettings;
  warnings: string[];
}

/** Reads and checks the settings file; a file that cannot be used gives the defaults and a warning. */
function loadSettings(): Loaded {
  const path = settingsPath();
  const read = readSettingsText(path);
  const parsed = callCore(() => guardCore.parseSettings(read.text ?? ""));
  if (!parsed.ok) {
    const fallback = callCore(() => guardCore.parseSettings(""));
    if (!fallback.ok) throw new Error(`context-guard: the core cannot read settings: ${fallback.error}`);
    return { path, settings: fallback.value.settings, warnings: [`${path}: ${parsed.error}; using the defaults`] };
  }
  const warnings = parsed.value.warnings.map((w) => `${path}: ${w}`);
  if (read.error) warnings.unshift(`${read.error}; using the defaults`);
  return { path, settings: parsed.value.settings, warnings };
}

/** What `/guard` hands to parts it does not import: `audit` runs `/guard audit …` (audit/in-pi.ts, given by index.ts). */
export interface GuardCommands {
  audit: (args: string, ctx: ExtensionCommandContext, say: (text: string, level: "info" | "warning" | "error") => void) => Promise<void>;
  /** The project's saved sessions' run lengths for the `median` estimator (audit/in-pi.ts, given by index.ts). */
  savedRuns?: SavedRuns;
}

export function registerGuard(pi: ExtensionAPI, commands: GuardCommands): void {
  if (disabledBy(["guard", "context-guard"])) return;
  useSavedRuns(commands.savedRuns);

  let loaded: Loaded | undefined;
  const warned = new Set<string>();
  const warnOnce = (ctx: ExtensionContext, message: string) => {
    if (warned.has(message)) return;
    warned.add(message);
    say(ctx, `context-guard: ${message}`, "warning");
  };
  let fitted: { from: Loaded; window: number | undefined; to: Loaded } | undefined;
  /** The settings file's settings, read once (its warnings shown once). */
  const fileSettings = (ctx: ExtensionContext): Loaded => {
    if (!loaded) {
      loaded = loadSettings();
      for (const w of loaded.warnings) warnOnce(ctx, w);
    }
    return loaded;
  };
  const settingsOf = (ctx: ExtensionContext): Loaded => fitToClassifier(ctx, fileSettings(ctx));
  /**
   * The settings with `maxSegmentChars` no larger than the classifier's `contextWindow` can take
   * (the core's rule, guard/segment_fit.rs), the clip's warning among the settings' warnings. Refitted
   * when the settings or the classifier's window change.
   */
  const fitToClassifier = (ctx: ExtensionContext, from: Loaded): Loaded => {
    const window = classifierWindow(ctx, from.settings.modelProvider, from.settings.modelId);
    if (fitted?.from === from && fitted.window === window) return fitted.to;
    let to = from;
    const fit = callCore(() => guardCore.fitSegment(from.settings, window));
    if (!fit.ok) warnOnce(ctx, `cannot fit maxSegmentChars to the classifier, using it as set: ${fit.error}`);
    else if (fit.value.warning) {
      warnOnce(ctx, fit.value.warning);
      to = { ...from, settings: { ...from.settings, maxSegmentChars: fit.value.maxSegmentChars }, warnings: [...from.warnings, fit.value.warning] };
    }
    fitted = { from, window, to };
    return to;
  };

  // Status texts are cosmetic: ui.ts catches their failures, so none reaches the pass.
  const showSaved = (ctx: ExtensionContext, saved: string, rest = "") => setStatus(ctx, STATUS_KEY, rest ? [["success", saved], ["dim", rest]] : [["success", saved]]);
  const busy = (ctx: ExtensionContext) => showSaved(ctx, "🛡 distilling…");
  const showProblem = (ctx: ExtensionContext, problem: string) => setStatus(ctx, STATUS_KEY, [["warning", `🛡 ${problem}`]]);

  /** The status-bar text, recomputed from the session (seed 001's texts). */
  const refreshStatus = (ctx: ExtensionContext): GuardStats | undefined => {
    try {
      const { settings } = settingsOf(ctx);
      if (!settings.enabled) {
        setStatus(ctx, STATUS_KEY, [["dim", "🛡 guard off"]]);
        return undefined;
      }
      const lookup = findClassifier(ctx, settings.modelProvider, settings.modelId);
      if (!lookup.ok) {
        showProblem(ctx, lookup.status);
        return undefined;
      }
      // Where the bill has prices, its two words stand in place of the items: `🛡 −25k tok · saved $0.27`.
      const figures = guardFigures(ctx, sessionBill(ctx)?.short ?? "");
      if (!figures.ok) {
        warnOnce(ctx, `cannot compute the savings: ${figures.error}`);
        return undefined;
      }
      // The judge at work in the background (issue 27): `· judging 3 outputs…` after the savings.
      showSaved(ctx, figures.value.status.saved, figures.value.status.rest + background.status());
      return figures.value.stats;
    } catch (error) {
      warnOnce(ctx, `status failed: ${(error as Error).message}`);
      return undefined;
    }
  };

  // Passes whose judge works in the background (issue 27): the status shows their answers coming in.
  const background = new Background(
    (ctx) => void refreshStatus(ctx),
    (phase, outcome) => {
      if (phase === "run-end") lastBreakEven = outcome.breakEven ?? [];
    },
  );

  // The pin reads `enabled` and `pinAnthropicCache` on every provider request: the file's settings, with
  // no classifier lookup (fitting `maxSegmentChars` changes neither).
  const pin = registerPin(pi, (ctx) => fileSettings(ctx).settings, warnOnce);

  pi.on("session_start", (_event, ctx) => {
    loaded = undefined;
    background.dropAll("a new session started");
    background.closed = false;
    refreshStatus(ctx);
    // The saved sessions' runs are read in the background, once per session, for the checkpoints' estimator.
    try {
      const { settings } = fileSettings(ctx);
      if (settings.enabled && settings.midRun && settings.laterRequests === "median") commands.savedRuns?.start(ctx, (m) => warnOnce(ctx, m));
    } catch (error) {
      warnOnce(ctx, `saved sessions not read: ${(error as Error).message}`);
    }
  });
  pi.on("agent_settled", (event, ctx) => {
    // Esc aborts the judge's requests too, and changes nothing (issue 27).
    if ((event as { aborted?: boolean }).aborted) background.dropAll("the run was stopped (Esc)");
    refreshStatus(ctx);
  });
  pi.on("session_tree", (_event, ctx) => {
    background.dropOffBranch(ctx);
    refreshStatus(ctx);
  });
  // Pi exits (or reloads, or switches sessions): answers still out would land nowhere. Their requests
  // are aborted and nothing changes: the outputs stay whole in the session, as they were.
  pi.on("session_shutdown", () => {
    background.closed = true;
    background.dropAll("Pi exited before the answers came");
  });
  pi.on("session_compact", (_event, ctx) => void refreshStatus(ctx));

  // The run-end pass (guard.md §1, §3, §5): plan in the core, ask the classifier,
  // finish in the core, append the drafts after whatever earlier handlers proposed.
  // The judge works in the background (issue 27): Pi settles at once, the plan is made
  // right after, and the answers land before the next prompt's first request (lapse.ts)
  // or, when later, at a turn_end under the money rule. `waitForJudge` waits here.
  pi.on("agent_before_settle", async (event, ctx) => {
    try {
      if (event.outcome !== "completed") return undefined;
      const { settings } = settingsOf(ctx);
      if (!settings.enabled) return undefined;
      const lookup = findClassifier(ctx, settings.modelProvider, settings.modelId);
      // Without the classifier only old images go (they need no request, guard.md §4).
      if (!lookup.ok) showProblem(ctx, lookup.status);
      const contextEntries = event.context.contextEntries;
      const inputNow = () => passInput(ctx, contextEntries, settings, lookup.ok, pin.readPoints(ctx));
      background.flush();
      if (!settings.waitForJudge) {
        // Nothing lands here: what is in lands with the run end's answers before the next prompt's first
        // request, which is as soon for the cache. The run end leaves alone what passes still out hold.
        background.later(() => {
          const planned = planRunEnd(ctx, inputNow(), background.held(), lookup);
          if (planned) background.start(ctx, "run-end", planned, lookup, settings, contextEntries);
          refreshStatus(ctx);
        }, (message) => warnOnce(ctx, message));
        return undefined;
      }
      // A checkpoint's answers that are in land first; the run end leaves alone what passes still out hold.
      const landed = background.land(ctx, inputNow, settings, false);
      const withLanded = (more: readonly unknown[]) =>
        landed.entries.length + more.length === 0 ? undefined : { entries: [...event.entries, ...landed.entries, ...more] as typeof event.entries };
      const planned = planRunEnd(ctx, inputNow(), [...background.held(), ...landed.held], lookup);
      if (!planned) return withLanded([]);
      // One list of requests for every kind (large, small, exchange), under one limiter and one budget.
      const outcome = await classifyAndFinish(ctx, planned, lookup, settings, busy, background.slots);
      if (!outcome.ok) {
        warnOnce(ctx, `the pass could not finish, nothing was changed: ${outcome.error}`);
        return withLanded([]);
      }
      lastBreakEven = outcome.value.breakEven ?? [];
      return withLanded(outcome.value.entries);
    } catch (error) {
      warnOnce(ctx, `the pass failed, nothing was changed: ${(error as Error).message}`);
      return undefined;
    }
  });

  /** The run end's plan, leaving alone what `judging` holds; none when skipped or it failed (said once). */
  const planRunEnd = (ctx: ExtensionContext, input: PassInput, judging: string[], lookup: ReturnType<typeof findClassifier>): Planned | undefined => {
    const planned = callCore(() => guardCore.planPass({ ...input, judging, judge: judgePrice(ctx, lookup) }));
    if (!planned.ok) {
      warnOnce(ctx, `the pass could not be planned, nothing was changed: ${planned.error}`);
      return undefined;
    }
    // A judge not worth calling (guard/pass/plan.rs `weigh_judge`): /guard shows the skip with its figures,
    // until a checkpoint runs or a later run end asks.
    const gate = planned.value.gate;
    if (gate?.runEnd) lastSkip = { skipped: "judge-not-worth-it", gate };
    else if (planned.value.requests.length > 0 && lastSkip?.gate?.runEnd) lastSkip = undefined;
    return planned.value.skipped ? undefined : planned.value;
  };

  // Mid-run checkpoints (guard.md §7) at turn_end; the last skip is kept for /guard's one line.
  let lastSkip: SkipNote | undefined;
  // The last run-end pass's break-even decisions, for /guard: one that only deferred appends no record.
  // A checkpoint that runs records its own, so it clears this and the records speak.
  let lastBreakEven: BreakEvenDecision[] = [];
  let compactionLine: string | undefined;
  // Before the checkpoint's turn_end, which then sees the opening pass's edits among the proposals.
  registerOpening(pi, {
    settingsOf,
    lookup: (ctx, settings) => findClassifier(ctx, settings.modelProvider, settings.modelId),
    busy,
    warnOnce,
    readPoints: (ctx) => pin.readPoints(ctx),
    background,
    lastBreakEven: () => lastBreakEven,
    noteBreakEven: (decisions) => {
      lastBreakEven = decisions;
    },
  });
  registerCheckpoint(pi, {
    settingsOf,
    lookup: (ctx, settings) => findClassifier(ctx, settings.modelProvider, settings.modelId),
    busy,
    refresh: (ctx) => void refreshStatus(ctx),
    warnOnce,
    noteSkip: (note) => {
      lastSkip = note;
      if (!note) lastBreakEven = [];
    },
    noteCompaction: (line) => {
      compactionLine = line;
    },
    readPoints: (ctx) => pin.readPoints(ctx),
    background,
  });

  // recall: the raw entry, read back from the session (context_edit never changes it).
  const info = callCore(() => guardCore.recallToolInfo());
  if (info.ok) {
    pi.registerTool({
      name: "recall",
      label: "Recall",
      description: info.value.description,
      parameters: Type.Object({
        entryId: Type.String({ description: info.value.entryId }),
        pattern: Type.Optional(Type.String({ description: info.value.pattern })),
        offset: Type.Optional(Type.Integer({ description: info.value.offset })),
        limit: Type.Optional(Type.Integer({ description: info.value.limit })),
      }),
      async execute(_toolCallId, params, _signal, _onUpdate, ctx) {
        const entry = ctx.sessionManager.getEntry(params.entryId) as { type?: string; message?: { content?: unknown } } | undefined;
        const message = entry?.type === "message" ? entry.message : undefined;
        // A user prompt recalls its exchange: exactly the omitted entries when a record
        // names it (guard.md §10), else the transcript up to the next prompt (seed 001).
        const exchange = (message as { role?: string } | undefined)?.role === "user" ? exchangeSource(ctx.sessionManager.getBranch() as never, params.entryId) : undefined;
        const reply = callCore(() => guardCore.recall({ ...params, message, exchange }));
        if (!reply.ok) throw new Error(`recall failed: ${reply.error}`);
        if (reply.value.isError) throw new Error(reply.value.text);
        const blocks = Array.isArray(message?.content) ? (message.content as { type: string }[]) : [];
        const images = reply.value.images.map((i) => blocks[i]).filter((b) => b?.type === "image");
        for (const [at, block] of reply.value.exchangeImages ?? []) {
          const source = at === 0 ? message : exchange?.entries[at - 1]?.message;
          const content = (source as { content?: unknown } | undefined)?.content;
          const image = Array.isArray(content) ? (content[block] as { type: string } | undefined) : undefined;
          if (image?.type === "image") images.push(image);
        }
        return {
          content: [{ type: "text" as const, text: reply.value.text }, ...(images as never[])],
          details: { entryId: params.entryId, images: images.length },
        };
      },
    });
  }

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
          const { path } = settingsOf(ctx);
          const current = readSettingsText(path);
          if (current.error) return say(ctx, `context-guard: ${current.error}; nothing changed`, "error");
          const next = callCore(() => guardCore.setEnabled(current.text ?? "{}", word === "on"));
          if (!next.ok) return say(ctx, `context-guard: ${path} is not a JSON object (${next.error}); nothing changed`, "error");
          const failed = writeSettingsText(path, next.value);
          if (failed) return say(ctx, `context-guard: ${failed}`, "error");
          loaded = undefined;
          background.dropAll(`the guard was turned ${word}`);
          refreshStatus(ctx);
          return say(ctx, `context-guard: ${word === "on" ? "on" : "off"} (saved to ${path})`, "info");
        }
        if (word === "model" || word.startsWith("model ")) {
          const { path, settings } = settingsOf(ctx);
          const chosen = args.trim().slice("model".length).trim();
          if (!chosen) return say(ctx, await listModels(ctx, settings.model), "info");
          const current = readSettingsText(path);
          if (current.error) return say(ctx, `context-guard: ${current.error}; nothing changed`, "error");
          const next = callCore(() => guardCore.setModel(current.text ?? "{}", chosen));
          if (!next.ok) return say(ctx, `context-guard: ${next.error}`, "error");
          const [provider, id] = [chosen.slice(0, chosen.indexOf("/")), chosen.slice(chosen.indexOf("/") + 1)];
          const found = findClassifier(ctx, provider, id);
          if (!found.ok && found.status.endsWith("not found")) return say(ctx, `context-guard: Pi knows no model ${chosen.slice(0, 80)}; nothing changed`, "warning");
          const failed = writeSettingsText(path, next.value);
          if (failed) return say(ctx, `context-guard: ${failed}`, "error");
          loaded = undefined;
          refreshStatus(ctx);
          const kind = found.ok ? (found.judge ? "a chat model, the judge" : "a classifier") : found.status;
          return say(ctx, `context-guard: model ${modelKey({ provider, id })} (${kind}; saved to ${path})`, "info");
        }
        if (word === "audit" || word.startsWith("audit ")) return await commands.audit(args.trim().slice("audit".length), ctx, (text, level) => say(ctx, text, level));
        if (word === "reload") {
          loaded = undefined;
          warned.clear();
          const fresh = settingsOf(ctx);
          refreshStatus(ctx);
          return say(ctx, 
            fresh.warnings.length ? `context-guard: settings reloaded with ${fresh.warnings.length} warning(s)` : `context-guard: settings reloaded from ${fresh.path}`,
            fresh.warnings.length ? "warning" : "info",
          );
        }
        if (word !== "" && word !== "status" && word !== "details") {
          return say(ctx, `context-guard: unknown subcommand "${word.slice(0, 40)}"; use /guard, /guard details, /guard on, /guard off, /guard reload, /guard model or /guard audit`, "warning");
        }
        const { settings, path, warnings } = settingsOf(ctx);
        refreshStatus(ctx);
        const lookup = findClassifier(ctx, settings.modelProvider, settings.modelId);
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
            lastSkip,
            beforeCompaction: compactionLine,
            background: background.describe(),
            cachePin: settings.enabled ? pin.describe(ctx, settings) : undefined,
            lastBreakEven,
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
