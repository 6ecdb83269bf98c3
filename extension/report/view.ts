// The /context screen: gauges, the composition table, drift, history, context
// per request (a sparkline, spark.ts), the cache and the cost, and the largest messages, with scrolling, refresh and the guarded compact.
//
// The screen holds the report the core built; keys only move a slice of it or
// ask for a new one (`r`, and after a compaction). Every label was sanitized in
// the core; text that did not come through the report (an error from Pi) goes
// through the core's `sanitizeLine` before it is painted. Every line is cut to
// the width, and the body is clamped so the hint row stays on a short terminal.
import type { ExtensionAPI, ExtensionContext, Theme, ThemeColor } from "@earendil-works/pi-coding-agent";
import { type Component, matchesKey, type TUI, truncateToWidth, visibleWidth, wrapTextWithAnsi } from "@earendil-works/pi-tui";
import { core } from "../core.ts";
import { BUSY, type ReportSources, readReport, startCompact } from "./actions.ts";
import { sparkline } from "./spark.ts";
import type { ContextReport, Hue } from "./types.ts";

/**
 * Pi's themes have no numbered hues, so each category borrows a theme colour
 * that carries no verdict (not success/warning/error): blue, violet, pink,
 * green and amber in the built-in themes.
 */
export const HUE_COLOR: Record<Hue, ThemeColor> = {
  hue1: "mdLink",
  hue2: "syntaxType",
  hue3: "thinkingXhigh",
  hue4: "mdCodeBlock",
  hue5: "mdHeading",
  meta: "muted",
  faint: "dim",
};

const VERDICT_COLOR: Record<ContextReport["windowGauge"]["verdict"], ThemeColor> = {
  ok: "success",
  near: "warning",
  over: "error",
  unknown: "dim",
};

const FULL = "█";
const EMPTY = "░";
/** A share under half a cell: its one cell drawn thin, not as a block it has not earned. */
const THIN = "▏";
/** The window bar's mark where Pi compacts. */
const THRESHOLD = "│";
/** Lines below the screen that Pi's own chrome (footer, status) can take. */
const PI_CHROME = 4;
/** Token and percentage columns. */
const NUM = 7;
const ROW_CELLS = 8;
/** Pi's roles in the largest-message list, in words. */
const ROLE_WORDS: Record<string, string> = {
  toolResult: "tool result",
  bashExecution: "shell",
  branchSummary: "branch summary",
  compactionSummary: "compaction summary",
};

type Feedback = { text: string; level: "info" | "warning" | "error" | "success" } | undefined;

export const HINT = "↑↓ jk scroll · PgUp/PgDn · g/G · r refresh · c compact · q close";
export const CONFIRM = "Compact now? y/N";

/** What the screen asks of the session. */
export interface ScreenHost {
  refresh: () => ReturnType<typeof readReport>;
  isIdle: () => boolean;
  compact: (on: Parameters<typeof startCompact>[3]) => boolean;
  close: () => void;
}

export class ContextScreen implements Component {
  /**
   * In fullscreen mode Pi scrolls its transcript on PgUp/PgDn unless the
   * focused component claims those keys (pi-tui 1.6; older versions give them
   * only to a focused overlay, so there PgUp/PgDn scroll the transcript).
   */
  readonly capturesViewportInput = true;
  private top = 0;
  private confirming = false;
  private compacting = false;
  private feedback: Feedback;
  private cache: { width: number; lines: string[] } | undefined;

  private readonly tui: TUI;
  private readonly theme: Theme;
  private report: ContextReport;
  private readonly host: ScreenHost;

  constructor(tui: TUI, theme: Theme, report: ContextReport, host: ScreenHost) {
    this.tui = tui;
    this.theme = theme;
    this.report = report;
    this.host = host;
  }

  invalidate(): void {
    this.cache = undefined;
  }

  private rows(): number {
    const rows = this.tui.terminal?.rows;
    return typeof rows === "number" && rows > 0 ? rows : 24;
  }

  /** How many body lines fit: the title, the feedback and the hint rows stay. */
  private bodyHeight(): number {
    return Math.max(3, this.rows() - PI_CHROME - 3);
  }

  /** `filled` cells of `of`; `thin`, a share under half a cell, gets its one cell thin (report/gauge.rs). */
  private bar(filled: number, of: number, color: ThemeColor, thin: boolean): string {
    const f = Math.max(0, Math.min(of, filled));
    return this.theme.fg(color, thin ? THIN : FULL.repeat(f)) + this.theme.fg("dim", EMPTY.repeat(of - f));
  }

  private windowBar(): string {
    const g = this.report.windowGauge;
    if (g.basis === "none") return "";
    const color = g.basis === "estimate" ? "dim" : VERDICT_COLOR[g.verdict];
    const cells: string[] = [];
    for (let i = 0; i < g.of; i++) {
      if (i < g.filled) cells.push(this.theme.fg(color, FULL));
      else if (g.thresholdCell !== undefined && i === g.thresholdCell - 1) cells.push(this.theme.fg("muted", THRESHOLD));
      else cells.push(this.theme.fg("dim", EMPTY));
    }
    const note = g.basis === "estimate" ? " estimate, total pending" : g.verdict === "over" ? " past the threshold" : "";
    return `[${cells.join("")}]${this.theme.fg("dim", note)}`;
  }

  /** What the window bar's marks mean, those it shows. */
  private windowLegend(): string {
    const g = this.report.windowGauge;
    const threshold = g.thresholdCell !== undefined && g.thresholdCell > g.filled ? ` · ${THRESHOLD} where Pi compacts` : "";
    return `${FULL} in the window (a tenth of it each)${threshold} · ${EMPTY} free`;
  }

  /** Columns left of the figures: as wide as the widest caption, within the width. */
  private captionColumn(width: number, captions: { caption: string; indent: number }[]): number {
    const fixed = 2 + NUM + NUM + (width >= 34 ? 2 + ROW_CELLS : 0);
    const widest = Math.max(0, ...captions.map((c) => visibleWidth(c.caption) + c.indent));
    return Math.max(4, Math.min(width - fixed, widest));
  }

  /** One table row: caption, tokens, percentage and bar, then an optional note. */
  private tableRow(
    width: number,
    column: number,
    indent: number,
    caption: string,
    tokens: string,
    percent: string,
    cells: number,
    hue: Hue,
    thin: boolean,
    note = "",
  ): string[] {
    const t = this.theme;
    const showBar = width >= 34;
    const captionWidth = Math.max(1, column - indent);
    const label = truncateToWidth(caption, captionWidth, "…");
    const pad = " ".repeat(Math.max(0, captionWidth - visibleWidth(label)));
    const labelColor: ThemeColor = hue === "faint" ? "dim" : "text";
    let line = `  ${" ".repeat(indent)}${t.fg(labelColor, label)}${pad}${t.fg("muted", tokens.padStart(NUM))}${t.fg(HUE_COLOR[hue], percent.padStart(NUM))}`;
    if (showBar) line += `  ${this.bar(cells, ROW_CELLS, HUE_COLOR[hue], thin)}`;
    const lines = [line];
    if (note) {
      const room = width - visibleWidth(line) - 2;
      if (room >= 12) lines[0] = `${line}  ${t.fg("dim", truncateToWidth(note, room, "…"))}`;
      else lines.push(`      ${t.fg("dim", truncateToWidth(note, Math.max(1, width - 6), "…"))}`);
    }
    return lines;
  }

  private sentence(text: string, color: ThemeColor, width: number): string[] {
    return wrapTextWithAnsi(this.theme.fg(color, text), Math.max(1, width - 2)).map((l) => ` ${l}`);
  }

  /** Context per request: the sentence, the sparkline with its marks, the cache and the cost. */
  private requests(width: number): string[] {
    const r = this.report;
    const s = r.sentences;
    const t = this.theme;
    const lines = this.sentence(s.requests, "muted", width);
    const series = r.series;
    if (series && series.tokens.length > 1) {
      const spark = sparkline(series.tokens, series.marks, width - 2);
      lines.push(...this.sentence("Each bar one request, oldest first; its height the context it sent:", "dim", width));
      lines.push(` ${t.fg(HUE_COLOR.hue1, spark.bars)}`);
      if (spark.marks) {
        lines.push(` ${t.fg("warning", spark.marks)}`);
        lines.push(...this.sentence("c: after a compaction, e: after a context edit (the guard's)", "dim", width));
      }
    }
    if (s.cache) lines.push(...this.sentence(s.cache, "dim", width));
    if (s.cost) lines.push(...this.sentence(s.cost, "dim", width));
    return lines;
  }

  /** Every body line at this width. */
  private body(width: number): string[] {
    if (this.cache?.width === width) return this.cache.lines;
    const r = this.report;
    const s = r.sentences;
    const t = this.theme;
    const lines: string[] = [];
    lines.push(...this.sentence(s.headline, "text", width));
    const bar = this.windowBar();
    if (bar) lines.push(` ${bar}`, ...this.sentence(this.windowLegend(), "dim", width));
    lines.push(...this.sentence(s.threshold, "muted", width));
    lines.push("");
    lines.push(...this.sentence(s.composition, "text", width).map((l) => t.bold(l)));
    const rowColumn = this.captionColumn(
      width,
      r.rows.map((row) => ({ caption: row.caption, indent: 2 * row.depth })),
    );
    for (const row of r.rows) {
      lines.push(...this.tableRow(width, rowColumn, 2 * row.depth, row.caption, row.tokensText, row.percentText, row.cells, row.hue, row.thin));
    }
    if (width >= 34) lines.push(...this.sentence(s.bars, "dim", width));
    lines.push(...this.sentence(s.drift, "dim", width));
    if (s.guard) lines.push(...this.sentence(s.guard, "dim", width));
    if (s.keptKinds?.length) {
      lines.push(...this.sentence("  By kind, every pass on this branch:", "dim", width));
      for (const line of s.keptKinds) lines.push(...this.sentence(`    ${line}`, "dim", width));
    }
    if (s.recalled) lines.push(...this.sentence(s.recalled, "dim", width));
    if (s.bill) lines.push(...this.sentence(s.bill, "dim", width));
    lines.push("");
    lines.push(...this.sentence(s.history, "muted", width));
    lines.push(...this.requests(width));
    if (r.largest.length) {
      lines.push("");
      lines.push(...this.sentence("Largest messages", "text", width).map((l) => t.bold(l)));
      const role = (l: (typeof r.largest)[number]) => ROLE_WORDS[l.role] ?? l.role;
      const roleColumn = this.captionColumn(
        width,
        r.largest.map((l) => ({ caption: role(l), indent: 0 })),
      );
      for (const l of r.largest) {
        lines.push(...this.tableRow(width, roleColumn, 0, role(l), l.tokensText, l.percentText, l.cells, l.hue, l.thin, l.descriptor));
      }
    }
    const cut = lines.map((l) => truncateToWidth(l, width, ""));
    this.cache = { width, lines: cut };
    return cut;
  }

  private maxTop(width: number): number {
    return Math.max(0, this.body(width).length - this.bodyHeight());
  }

  render(width: number): string[] {
    const t = this.theme;
    const w = Math.max(1, width);
    const body = this.body(w);
    const height = this.bodyHeight();
    this.top = Math.max(0, Math.min(this.top, this.maxTop(w)));
    const visible = body.slice(this.top, this.top + height);
    const end = this.top + visible.length;
    const position = body.length > height ? ` · lines ${this.top + 1}-${end} of ${body.length}` : "";
    const title = `${t.fg("accent", t.bold(" Context"))}${t.fg("dim", ` · Pi's estimate, then the composition${position}`)}`;
    const out = [truncateToWidth(title, w, "…")];
    out.push(...visible);
    const fb = this.feedback;
    if (fb) {
      const color: ThemeColor = fb.level === "info" ? "muted" : fb.level;
      out.push(truncateToWidth(` ${t.fg(color, fb.text)}`, w, "…"));
    }
    const hint = this.confirming ? t.fg("warning", ` ${CONFIRM}`) : t.fg("dim", ` ${HINT}`);
    out.push(truncateToWidth(hint, w, "…"));
    return out;
  }

  private setFeedback(text: string, level: NonNullable<Feedback>["level"]): void {
    this.feedback = { text: core.sanitizeLine(text, 400), level };
  }

  private repaint(): void {
    this.tui.requestRender();
  }

  private refresh(): void {
    const next = this.host.refresh();
    if (next.ok) {
      this.report = next.value;
      this.invalidate();
      this.setFeedback("Re-read the session", "info");
    } else {
      this.setFeedback(`The report could not be rebuilt: ${next.error}`, "error");
    }
  }

  private compact(): void {
    this.confirming = false;
    const started = this.host.compact({
      done: (next) => {
        this.compacting = false;
        if (next.ok) {
          this.report = next.value;
          this.invalidate();
          this.setFeedback(next.value.compacted?.line ?? "Compacted", "success");
        } else {
          this.setFeedback(`Compacted; the report could not be rebuilt: ${next.error}`, "warning");
        }
        this.repaint();
      },
      failed: (message) => {
        this.compacting = false;
        this.setFeedback(`Compaction failed: ${message}`, "error");
        this.repaint();
      },
    });
    if (started) {
      this.compacting = true;
      this.setFeedback("Compacting…", "info");
    } else {
      this.setFeedback(BUSY, "warning");
    }
  }

  handleInput(data: string): void {
    try {
      this.handleKey(data);
    } catch (error) {
      this.setFeedback(`context: ${error instanceof Error ? error.message : String(error)}`, "error");
    }
    this.repaint();
  }

  private handleKey(data: string): void {
    if (this.confirming) {
      if (data === "y" || data === "Y") this.compact();
      else {
        this.confirming = false;
        this.setFeedback("Compaction cancelled", "info");
      }
      return;
    }
    const width = this.cache?.width ?? 80;
    const page = this.bodyHeight();
    if (matchesKey(data, "escape") || data === "q") return this.host.close();
    if (matchesKey(data, "up") || data === "k") this.top -= 1;
    else if (matchesKey(data, "down") || data === "j") this.top += 1;
    else if (matchesKey(data, "pageUp")) this.top -= page;
    else if (matchesKey(data, "pageDown")) this.top += page;
    else if (matchesKey(data, "home") || data === "g") this.top = 0;
    else if (matchesKey(data, "end") || data === "G") this.top = this.maxTop(width);
    else if (data === "r") this.refresh();
    else if (data === "c") {
      if (this.compacting || !this.host.isIdle()) this.setFeedback(BUSY, "warning");
      else {
        this.confirming = true;
        this.feedback = undefined;
      }
    } else return;
    this.top = Math.max(0, Math.min(this.top, this.maxTop(width)));
  }
}

/** Shows the screen until Esc or q. */
export async function showScreen(pi: ExtensionAPI, ctx: ExtensionContext, report: ContextReport, sources: ReportSources): Promise<void> {
  await ctx.ui.custom<void>((tui, theme, _keybindings, done) => {
    return new ContextScreen(tui, theme, report, {
      refresh: () => readReport(pi, ctx, sources),
      isIdle: () => ctx.isIdle(),
      compact: (on) => startCompact(pi, ctx, "", on, sources),
      close: () => done(undefined),
    });
  });
}
