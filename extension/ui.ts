// Everything this package shows through Pi's UI context goes through here:
// notifications (`say`), status-bar texts (`setStatus`) and their theme
// colours. All of it is cosmetic, so none of it may stop work: a pass, a
// checkpoint or a report goes on whatever the UI does.
//
// Each call catches its own failure: a method that throws, a theme whose
// getter or `fg` throws (Pi's own theme throws "Theme not initialized" until
// `initTheme` ran, as in an SDK host that never started the TUI), a method the
// host's context lacks, or a context gone stale (Pi's `ctx.ui` getter throws
// after a reload). The first failure on a UI context is reported once, through
// a channel that still works: a notification, else a status text under its own
// key, else nowhere. A status whose theme failed is shown in plain text.
import { writeSync } from "node:fs";
import type { ExtensionContext, ThemeColor } from "@earendil-works/pi-coding-agent";
import { callCore, core } from "./core.ts";
import { wrapText } from "./wrap.ts";

export type Level = "info" | "warning" | "error";

/** A piece of a status text and the theme colour it is painted in. */
export type Painted = readonly [color: ThemeColor, text: string];

/** The columns Pi's TUI pads a notification with, both sides together. */
const NOTIFY_PADDING = 2;

/** The status key under which a UI failure is reported when notifications fail too. */
export const UI_FAILURE_KEY = "context-guard-ui";

type Cosmetic = "notify" | "setStatus" | "theme";
type Failure = { missing: true } | { missing: false; error: unknown };

// The UI contexts whose failure was reported. Pi keeps one UI context per
// binding, so a session reports once, and a new binding reports its own.
const reported = new WeakSet<object>();

// The host's UI as this module reads it: any part of it may be missing.
type HostUi = { notify?: unknown; setStatus?: unknown; theme?: unknown };

/** `ctx.ui`, or undefined when the context has none or is stale. */
function uiOf(ctx: ExtensionContext): HostUi | undefined {
  try {
    const ui: unknown = ctx.ui;
    return ui !== null && typeof ui === "object" ? (ui as HostUi) : undefined;
  } catch {
    return undefined;
  }
}

function messageOf(error: unknown): string {
  try {
    const text = error instanceof Error ? error.message : String(error);
    const clean = callCore(() => core.sanitizeLine(text, 200));
    return clean.ok ? clean.value : text.slice(0, 200);
  } catch {
    return "an error that cannot be shown";
  }
}

/** Reports the first cosmetic failure on `ui`, once. */
function failed(ctx: ExtensionContext, ui: HostUi, what: Cosmetic, failure: Failure): void {
  if (reported.has(ui)) return;
  reported.add(ui);
  const why = failure.missing ? `this host's UI has no ${what}` : `ctx.ui.${what} failed (${messageOf(failure.error)})`;
  const text = `context-guard: ${why}; the status bar and notices may be incomplete, the work goes on`;
  if (what !== "notify" && deliver(ctx, ui, text, "warning")) return;
  if (what !== "setStatus") call(ctx, ui, "setStatus", [UI_FAILURE_KEY, text]);
  // Else nowhere is left to report to; the work goes on all the same.
}

/** Calls `ui[what](...args)`; false (after reporting) when it is missing or throws. */
function call(ctx: ExtensionContext, ui: HostUi, what: "notify" | "setStatus", args: unknown[]): boolean {
  try {
    const method = ui[what];
    if (typeof method !== "function") {
      failed(ctx, ui, what, { missing: true });
      return false;
    }
    method.apply(ui, args);
    return true;
  } catch (error) {
    failed(ctx, ui, what, { missing: false, error });
    return false;
  }
}

/**
 * In print mode Pi's `notify` is a no-op and Pi points `process.stdout` at
 * stderr, so an answer the user asked for (`pi -p "/context"`) goes straight to
 * file descriptor 1, and warnings and errors to 2. In json mode stdout is Pi's
 * event stream and nothing extra is written. Elsewhere it is a notification.
 */
function deliver(ctx: ExtensionContext, ui: HostUi | undefined, text: string, level: Level): boolean {
  try {
    if (ctx.mode === "print" && !ctx.hasUI) {
      writeSync(level === "info" ? 1 : 2, `${text}\n`);
      return true;
    }
  } catch {
    return false; // a stale context, or a closed descriptor: nowhere to write
  }
  return ui !== undefined && call(ctx, ui, "notify", [text, level]);
}

/** Tells the user something, in every mode; never throws. */
export function say(ctx: ExtensionContext, text: string, level: Level): void {
  deliver(ctx, uiOf(ctx), fitted(ctx, text, level), level);
}

/**
 * In Pi's TUI, an information's lines wrapped to the terminal at spaces with their indent kept
 * (issue 28): Pi wraps a notification at column 0 otherwise. Pi pads a notification by a column
 * on each side; a warning or an error gets Pi's own prefix, so it is left to Pi.
 */
function fitted(ctx: ExtensionContext, text: string, level: Level): string {
  try {
    const columns = process.stdout.columns;
    if (level !== "info" || ctx.mode !== "tui" || typeof columns !== "number" || columns < 20) return text;
    return wrapText(text, columns - NOTIFY_PADDING);
  } catch {
    return text; // a stale context: the text as it is
  }
}

/** The parts painted with the host's theme; plain text when the theme fails. */
function paint(ctx: ExtensionContext, ui: HostUi, parts: readonly Painted[]): string {
  try {
    const theme = ui.theme as { fg?: unknown } | undefined;
    const fg = theme?.fg;
    if (typeof fg !== "function") {
      failed(ctx, ui, "theme", { missing: true });
      return parts.map(([, text]) => text).join("");
    }
    let painted = "";
    for (const [color, text] of parts) painted += String(fg.call(theme, color, text));
    return painted;
  } catch (error) {
    failed(ctx, ui, "theme", { missing: false, error });
    return parts.map(([, text]) => text).join("");
  }
}

/** Sets the status text under `key` (`undefined` clears it), painted part by part; never throws. */
export function setStatus(ctx: ExtensionContext, key: string, parts: readonly Painted[] | undefined): void {
  const ui = uiOf(ctx);
  if (!ui) return;
  call(ctx, ui, "setStatus", [key, parts === undefined ? undefined : paint(ctx, ui, parts)]);
}
