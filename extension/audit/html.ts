// The audit as one self-contained HTML page: inline SVG, no script, no
// network. Per session a chart of context per request (the guard's edits
// and Pi's compactions marked), then a bar chart of tool output by tool.
import type { Figures } from "./figures.ts";
import { type Audited, short, totals } from "./format.ts";

const esc = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

const W = 720;
const H = 160;
const PAD = 30;

/** Context tokens per request as a polyline; a dashed line after each request where the guard edited (green) or Pi compacted (red). */
export function contextChart(f: Figures): string {
  const s = f.contextSeries;
  const peak = Math.max(1, ...s);
  const x = (i: number) => PAD + (s.length <= 1 ? 0 : (i * (W - 2 * PAD)) / (s.length - 1));
  const y = (v: number) => H - PAD - (v / peak) * (H - 2 * PAD);
  const points = s.map((v, i) => `${x(i).toFixed(1)},${y(v).toFixed(1)}`).join(" ");
  const mark = (at: number, colour: string, title: string) => {
    const xi = x(Math.max(0, at - 0.5)).toFixed(1);
    return `<line x1="${xi}" x2="${xi}" y1="${PAD}" y2="${H - PAD}" stroke="${colour}" stroke-dasharray="4 3"><title>${title}</title></line>`;
  };
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" role="img" aria-label="context per request">`,
    `<line x1="${PAD}" x2="${W - PAD}" y1="${H - PAD}" y2="${H - PAD}" stroke="#999"/>`,
    `<text x="2" y="${PAD}" font-size="11">${short(peak)}</text><text x="${PAD}" y="${H - 8}" font-size="11">request 1</text><text x="${W - PAD - 60}" y="${H - 8}" font-size="11">request ${s.length}</text>`,
    ...f.editsAt.map((at) => mark(at, "#2a2", `guard edit after request ${at}`)),
    ...f.compactionsAt.map((at) => mark(at, "#c22", `compaction after request ${at}`)),
    `<polyline fill="none" stroke="#36c" stroke-width="1.5" points="${points}"/>`,
    "</svg>",
  ].join("");
}

/** Tool output characters by tool, largest first, one horizontal bar each. */
export function toolChart(out: Record<string, { results: number; chars: number }>): string {
  const list = Object.entries(out).sort((a, b) => b[1].chars - a[1].chars);
  const max = Math.max(1, ...list.map(([, o]) => o.chars));
  const row = 22;
  const bars = list.map(([tool, o], i) => {
    const w = ((W - 260) * o.chars) / max;
    const yy = 10 + i * row;
    return `<text x="0" y="${yy + 14}" font-size="12">${esc(tool)}</text><rect x="140" y="${yy}" width="${w.toFixed(1)}" height="16" fill="#36c"/><text x="${(146 + w).toFixed(1)}" y="${yy + 13}" font-size="11">${short(o.chars)} chars, ${o.results} results</text>`;
  });
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${20 + list.length * row}" role="img" aria-label="tool output by tool">${bars.join("")}</svg>`;
}

export function html(list: Audited[], failed: { path: string; error: string }[]): string {
  const t = totals(list);
  const sessions = list.map(({ session: s, wouldDo: w }) => {
    const f = s.branch;
    const would = w
      ? `<p>Guard would: old images ${short(w.lower.chars)} chars (${w.lower.items}); all ${w.upper.items} candidates ${short(w.upper.chars)} chars (${w.upper.superseded} superseded) over ${w.runs} runs.</p>`
      : "";
    return `<section><h2>${esc(s.path)}</h2><p>${f.requests} requests, peak ${short(f.peakContext)}, final ${short(f.finalContext)} tokens, ${f.compactions} compactions, ${f.contextEdits} guard edits, cost $${f.cost.total.toFixed(4)}.</p>${contextChart(f)}${would}${s.warnings.map((m) => `<p class="warn">${esc(m)}</p>`).join("")}</section>`;
  });
  return [
    "<!doctype html>",
    '<html lang="en"><head><meta charset="utf-8"><title>pi-context-guard audit</title>',
    "<style>body{font:14px system-ui,sans-serif;margin:2em;max-width:780px}h2{font-size:14px;word-break:break-all}.warn{color:#a60}</style></head><body>",
    `<h1>pi-context-guard audit</h1><p>${t.sessions} sessions, ${t.requests} requests, peak ${short(t.peakContext)} tokens, cost $${t.cost.total.toFixed(4)}. Guard would keep out at least ${short(t.lower.chars)} and at most ${short(t.upper.chars)} characters.</p>`,
    "<h2>Tool output by tool</h2>",
    toolChart(t.toolOutput),
    ...sessions,
    ...failed.map((f) => `<p class="warn">${esc(f.path)}: not audited: ${esc(f.error)}</p>`),
    "</body></html>",
    "",
  ].join("\n");
}
