// The guard's settings inside Pi: the settings file read once (its warnings
// said once), and `maxSegmentChars` fitted to the classifier's context window.
// Forgotten when the file is written or a new session starts; every rule that
// checks a value is the core's (guard/settings.rs).
import type { ExtensionContext } from "@earendil-works/pi-coding-agent";
import { callCore } from "../core.ts";
import { say } from "../ui.ts";
import { classifierWindow } from "./model.ts";
import { readSettingsText, settingsPath } from "./settings-file.ts";
import type { GuardSettings } from "./types.ts";
import { guardCore } from "./wasm.ts";

export interface Loaded {
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

export class SettingsCache {
  private loaded: Loaded | undefined;
  private fitted: { from: Loaded; window: number | undefined; to: Loaded } | undefined;
  private readonly warned = new Set<string>();

  /** Says a warning once per session (until `reload`). */
  readonly warnOnce = (ctx: ExtensionContext, message: string): void => {
    if (this.warned.has(message)) return;
    this.warned.add(message);
    say(ctx, `context-guard: ${message}`, "warning");
  };

  /** The settings file's settings, read once (its warnings shown once). */
  readonly fileSettings = (ctx: ExtensionContext): Loaded => {
    if (!this.loaded) {
      this.loaded = loadSettings();
      for (const w of this.loaded.warnings) this.warnOnce(ctx, w);
    }
    return this.loaded;
  };

  /** The file's settings fitted to the classifier (`fitToClassifier`): what a pass uses. */
  readonly settingsOf = (ctx: ExtensionContext): Loaded => this.fitToClassifier(ctx, this.fileSettings(ctx));

  /** Read the file again at the next use (after `/guard on`, `off`, `model`, or a new session). */
  forget(): void {
    this.loaded = undefined;
  }

  /** `/guard reload`: read the file again and say its warnings again. */
  reload(): void {
    this.loaded = undefined;
    this.warned.clear();
  }

  /**
   * The settings with `maxSegmentChars` no larger than the classifier's `contextWindow` can take
   * (the core's rule, guard/segment_fit.rs), the clip's warning among the settings' warnings. Refitted
   * when the settings or the classifier's window change.
   */
  private fitToClassifier(ctx: ExtensionContext, from: Loaded): Loaded {
    const window = classifierWindow(ctx, from.settings.modelProvider, from.settings.modelId);
    if (this.fitted?.from === from && this.fitted.window === window) return this.fitted.to;
    let to = from;
    const fit = callCore(() => guardCore.fitSegment(from.settings, window));
    if (!fit.ok) this.warnOnce(ctx, `cannot fit maxSegmentChars to the classifier, using it as set: ${fit.error}`);
    else if (fit.value.warning) {
      this.warnOnce(ctx, fit.value.warning);
      to = { ...from, settings: { ...from.settings, maxSegmentChars: fit.value.maxSegmentChars }, warnings: [...from.warnings, fit.value.warning] };
    }
    this.fitted = { from, window, to };
    return to;
  }
}
