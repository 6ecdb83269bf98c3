// The `/guard audit` screen in Pi's TUI: the audit's text, wrapped to the
// width and scrolled; nothing else. Every line goes through the core's
// `sanitizeLine` before it is painted (a session's prompt or path may hold
// anything).
import type { Theme } from "@earendil-works/pi-coding-agent";
import { type Component, matchesKey, type TUI, truncateToWidth } from "@earendil-works/pi-tui";
import { core } from "../core.ts";
import { wrapLine } from "../wrap.ts";

/** Lines below the screen that Pi's own chrome (footer, status) can take. */
const PI_CHROME = 4;
/** A line is never longer than this before it is wrapped. */
const LINE_MAX = 4000;

export const AUDIT_HINT = "↑↓ jk scroll · PgUp/PgDn · g/G · q close";

export class AuditScreen implements Component {
  /** PgUp/PgDn scroll this screen, not Pi's transcript (see report/view.ts). */
  readonly capturesViewportInput = true;
  private top = 0;
  private cache: { width: number; lines: string[] } | undefined;
  private readonly lines: string[];
  private readonly tui: TUI;
  private readonly theme: Theme;
  private readonly title: string;
  private readonly close: () => void;

  constructor(tui: TUI, theme: Theme, title: string, text: string, close: () => void) {
    this.tui = tui;
    this.theme = theme;
    this.title = title;
    this.close = close;
    // sanitizeLine trims a line's ends: its indent is put back (wrapLine keeps it on every line).
    this.lines = text
      .replace(/\n$/, "")
      .split("\n")
      .map((l) => (/^ */.exec(l)?.[0] ?? "") + core.sanitizeLine(l, LINE_MAX));
  }

  invalidate(): void {
    this.cache = undefined;
  }

  private height(): number {
    const rows = this.tui.terminal?.rows;
    return Math.max(3, (typeof rows === "number" && rows > 0 ? rows : 24) - PI_CHROME - 2);
  }

  private body(width: number): string[] {
    if (this.cache?.width !== width) {
      const wrapped = this.lines.flatMap((l) => (l ? wrapLine(l, width) : [""]));
      this.cache = { width, lines: wrapped.map((l) => truncateToWidth(l, width, "…")) };
    }
    return this.cache.lines;
  }

  render(width: number): string[] {
    const w = Math.max(1, width);
    const body = this.body(w);
    const height = this.height();
    this.top = Math.max(0, Math.min(this.top, body.length - height));
    const visible = body.slice(this.top, this.top + height);
    const position = body.length > height ? ` · lines ${this.top + 1}-${this.top + visible.length} of ${body.length}` : "";
    const t = this.theme;
    return [
      truncateToWidth(`${t.fg("accent", t.bold(" Audit"))}${t.fg("dim", ` · ${this.title}${position}`)}`, w, "…"),
      ...visible,
      truncateToWidth(t.fg("dim", ` ${AUDIT_HINT}`), w, "…"),
    ];
  }

  handleInput(data: string): void {
    const page = this.height();
    if (matchesKey(data, "escape") || data === "q") return this.close();
    if (matchesKey(data, "up") || data === "k") this.top -= 1;
    else if (matchesKey(data, "down") || data === "j") this.top += 1;
    else if (matchesKey(data, "pageUp")) this.top -= page;
    else if (matchesKey(data, "pageDown")) this.top += page;
    else if (matchesKey(data, "home") || data === "g") this.top = 0;
    else if (matchesKey(data, "end") || data === "G") this.top = Number.MAX_SAFE_INTEGER;
    else return;
    this.top = Math.max(0, Math.min(this.top, this.body(this.cache?.width ?? 80).length - page));
    this.tui.requestRender();
  }
}
