// The audit as text (terminal), as the versioned JSON object, and the
// sparkline of context per request. Formatting only.
import { sparkline as drawSparkline } from "../report/spark.ts";
import type { Figures } from "./figures.ts";
import type { SessionRead } from "./read.ts";
import type { WouldDo } from "./would-do.ts";

/** The JSON object's version: bump it when a field changes meaning or goes (docs/AUDIT.md). */
export const AUDIT_JSON_VERSION = 1;

export interface Audited {
  session: SessionRead;
  wouldDo: WouldDo | undefined;
  wouldDoError?: string;
}

export interface Totals {
  sessions: number;
  bytes: number;
  requests: number;
  peakContext: number;
  toolOutput: Record<string, { results: number; chars: number }>;
  keptOut: Record<string, number>;
  recallsAfterDistill: number;
  recalledChars: number;
  compactions: number;
  cost: Figures["cost"];
  lower: { items: number; chars: number };
  upper: { items: number; chars: number; superseded: number; supersededChars: number };
  rewriteChars: number;
}

export function totals(list: Audited[]): Totals {
  const t: Totals = {
    sessions: list.length,
    bytes: 0,
    requests: 0,
    peakContext: 0,
    toolOutput: {},
    keptOut: {},
    recallsAfterDistill: 0,
    recalledChars: 0,
    compactions: 0,
    cost: { total: 0, cacheRead: 0, cacheWrite: 0, cacheReadTokens: 0, cacheWriteTokens: 0 },
    lower: { items: 0, chars: 0 },
    upper: { items: 0, chars: 0, superseded: 0, supersededChars: 0 },
    rewriteChars: 0,
  };
  for (const { session: s, wouldDo: w } of list) {
    const f = s.branch;
    t.bytes += s.bytes;
    t.requests += f.requests;
    t.peakContext = Math.max(t.peakContext, f.peakContext);
    for (const [tool, o] of Object.entries(f.toolOutput)) {
      const into = (t.toolOutput[tool] ??= { results: 0, chars: 0 });
      into.results += o.results;
      into.chars += o.chars;
    }
    for (const [kind, chars] of Object.entries(f.keptOut)) t.keptOut[kind] = (t.keptOut[kind] ?? 0) + chars;
    t.recallsAfterDistill += f.recallsAfterDistill;
    t.recalledChars += f.recalledChars;
    t.compactions += f.compactions;
    for (const k of Object.keys(t.cost) as (keyof Figures["cost"])[]) t.cost[k] += f.cost[k];
    if (w) {
      t.lower.items += w.lower.items;
      t.lower.chars += w.lower.chars;
      for (const k of Object.keys(t.upper) as (keyof Totals["upper"])[]) t.upper[k] += w.upper[k];
      for (const c of w.candidates) t.rewriteChars += c.rewriteChars;
    }
  }
  return t;
}

/** Context per request in at most `width` cells (each the peak of its requests), scaled to the session's peak: the /context screen's sparkline, without its marks. */
export function sparkline(series: number[], width = 40): string {
  return drawSparkline(series, [], width).bars;
}

/** 950, 1.2k, 36.1k, 1.3M. */
export function short(n: number): string {
  if (n < 1000) return String(Math.round(n));
  if (n < 1e6) return `${(n / 1e3).toFixed(1)}k`;
  return `${(n / 1e6).toFixed(1)}M`;
}

const usd = (n: number) => `$${n.toFixed(n >= 1 ? 2 : 4)}`;

function byTool(out: Record<string, { results: number; chars: number }>): string {
  const list = Object.entries(out).sort((a, b) => b[1].chars - a[1].chars);
  return list.map(([tool, o]) => `${tool} ${short(o.chars)} (${o.results})`).join(", ") || "none";
}

function figureLines(f: Figures, indent: string): string[] {
  const lines = [
    `${indent}requests ${f.requests}, context peak ${short(f.peakContext)} final ${short(f.finalContext)} tokens, compactions ${f.compactions}`,
    `${indent}tool output (chars): ${byTool(f.toolOutput)}`,
    `${indent}cost ${usd(f.cost.total)} (cache read ${short(f.cost.cacheReadTokens)} tokens ${usd(f.cost.cacheRead)}, write ${short(f.cost.cacheWriteTokens)} tokens ${usd(f.cost.cacheWrite)})`,
  ];
  if (f.guardRecords > 0) {
    const kept = Object.entries(f.keptOut).map(([k, c]) => `${k} ${short(c)}`).join(", ") || "nothing";
    lines.push(`${indent}guard: ${f.guardRecords} records kept out ${kept} chars; ${f.recallsAfterDistill} recalls brought back ${short(f.recalledChars)} chars; classifier ${usd(f.guardCostUsd)}`);
  }
  return lines;
}

export function text(list: Audited[], failed: { path: string; error: string }[]): string {
  const out: string[] = [];
  for (const { session: s, wouldDo: w, wouldDoError } of list) {
    out.push(`${s.path}  ${short(s.bytes)}B  ${sparkline(s.branch.contextSeries)}`);
    out.push(...figureLines(s.branch, "  "));
    if (s.file) out.push(`  whole file (${s.entries} entries, branch ${s.branchEntries}):`, ...figureLines(s.file, "    "));
    if (w) {
      out.push(`  guard would: remove old images ${short(w.lower.chars)} chars (${w.lower.items}); send ${w.upper.items} candidates ${short(w.upper.chars)} chars over ${w.runs} runs (${w.upper.superseded} superseded, ${short(w.upper.supersededChars)})`);
      for (const [kind, k] of Object.entries(w.byKind)) {
        const overlap = kind === "exchange" ? " (holding the outputs above; not in the total)" : "";
        out.push(`    ${kind}: ${k.items} items ${short(k.chars)} chars${overlap}, cache rewrite ${short(k.rewriteChars)} chars summed (${w.cache})`);
      }
    } else if (wouldDoError) out.push(`  guard would: not computed (${wouldDoError})`);
    for (const warning of s.warnings) out.push(`  warning: ${warning}`);
  }
  for (const f of failed) out.push(`${f.path}: not audited: ${f.error}`);
  const t = totals(list);
  out.push(
    `total: ${t.sessions} sessions ${short(t.bytes)}B, ${t.requests} requests, peak ${short(t.peakContext)} tokens, ${t.compactions} compactions, cost ${usd(t.cost.total)} (cache read ${usd(t.cost.cacheRead)}, write ${usd(t.cost.cacheWrite)})`,
    `  tool output (chars): ${byTool(t.toolOutput)}`,
    `  guard kept out: ${Object.entries(t.keptOut).map(([k, c]) => `${k} ${short(c)}`).join(", ") || "nothing"}; recalls after a distill ${t.recallsAfterDistill} (${short(t.recalledChars)} chars)`,
    `  guard would: at least ${short(t.lower.chars)} chars (old images), at most ${short(t.upper.chars)} chars (${t.upper.items} candidates, ${t.upper.superseded} superseded), cache rewrite ${short(t.rewriteChars)} chars summed over the candidates`,
  );
  return `${out.join("\n")}\n`;
}

/** The `--json` object (docs/AUDIT.md describes each field). */
export function json(list: Audited[], failed: { path: string; error: string }[]): object {
  return {
    version: AUDIT_JSON_VERSION,
    sessions: list.map(({ session: s, wouldDo: w, wouldDoError }) => ({
      path: s.path,
      id: s.id,
      cwd: s.cwd,
      bytes: s.bytes,
      entries: s.entries,
      branchEntries: s.branchEntries,
      branch: s.branch,
      file: s.file ?? null,
      wouldDo: w ?? null,
      wouldDoError: wouldDoError ?? null,
      warnings: s.warnings,
    })),
    failed,
    totals: totals(list),
  };
}
