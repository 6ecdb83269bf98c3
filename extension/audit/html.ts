// The audit as one self-contained page for a person: inline SVG and CSS, no
// script, no network. At the top, the whole audit in sentences; then the
// sessions with the guard and those without side by side (a table of their
// average figures, and the sessions in two columns), each session named by
// its date, project folder and first prompt, with what the guard did and
// would do in tokens and dollars and a chart of context per request; then
// tool output by tool, and how the figures are made. Every mark a chart
// draws has a class of its own (`mark-…`) and an entry in the legend beside
// it; every text wraps (tests/e2e/audit-page.test.ts checks both in Chromium).
import { core } from "../core.ts";
import { type Estimate, type Figures, tokensOf } from "./figures.ts";
import {
  type Audited,
  billSentence,
  didSentence,
  moneySentence,
  estimates,
  folderName,
  groupFigures,
  guardOn,
  plural,
  short,
  startDate,
  summaryLines,
  totals,
  usd,
  wouldSentences,
} from "./format.ts";

const esc = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
/** Text a session wrote (a path, a tool name, an error), as one escaped line without control characters. */
const line = (s: string, max = 600) => esc(core.sanitizeLine(s, max));
const tokens = (n: number) => `${short(n)} tokens`;

/** The marks the charts draw, each with the words of its legend entry. */
const MARKS = {
  context: "context sent with each request, in tokens as the provider counted them",
  request: "one request",
  edit: "the guard removed or shortened tool output here, between two requests",
  compaction: "Pi compacted the conversation here (older messages replaced by a summary)",
  output: "tool output, in tokens (characters / 4)",
  with: "sessions with the guard",
  without: "sessions without the guard",
} as const;
type Mark = keyof typeof MARKS;

/** A legend swatch: the class the chart draws, so it looks the same (lines drawn across, where their dashes show). */
function swatch(mark: Mark): string {
  const shape =
    mark === "request"
      ? '<circle class="mark-request" cx="15" cy="6" r="3.5"/>'
      : mark === "output" || mark === "with" || mark === "without"
        ? `<rect class="mark-${mark}" x="0" y="1" width="30" height="10"/>`
        : `<line class="mark-${mark}" x1="0" x2="30" y1="6" y2="6"/>`;
  return `<svg class="swatch" viewBox="0 0 30 12" aria-hidden="true">${shape}</svg>`;
}

function legend(marks: Mark[]): string {
  return `<ul class="legend">${marks.map((m) => `<li>${swatch(m)}<span>${MARKS[m]}</span></li>`).join("")}</ul>`;
}

const CW = 600;
const CH = 150;
const INSET = 8;
/** Dots for each request up to this many requests; more would be a smear. */
const DOTS_UP_TO = 60;

/**
 * Context tokens per request as a line (dots too when there are few), on a scale whose top is `top`
 * (the same for every session of the page, so that their charts compare); a vertical line where the
 * guard edited (dashed) or Pi compacted (dotted), between the requests it came between.
 */
export function contextChart(f: Figures, top: number): string {
  const s = f.contextSeries;
  if (s.length === 0) return '<p class="note">No request of this session recorded its usage, so there is no chart of it.</p>';
  const peak = Math.max(1, top);
  const span = CW - 2 * INSET;
  const x = (i: number) => (s.length === 1 ? CW / 2 : INSET + (i * span) / (s.length - 1));
  const y = (v: number) => CH - INSET - (v / peak) * (CH - 2 * INSET);
  const between = (at: number) => {
    const half = s.length === 1 ? span / 4 : span / (s.length - 1) / 2;
    return Math.min(CW - INSET / 2, Math.max(INSET / 2, at >= s.length ? x(s.length - 1) + half : at <= 0 ? x(0) - half : (x(at - 1) + x(at)) / 2));
  };
  const where = (at: number) => (at <= 0 ? "before the first request" : `after request ${at}`);
  const vertical = (mark: Mark, at: number, title: string) => {
    const xi = between(at).toFixed(1);
    return `<line class="mark-${mark}" x1="${xi}" x2="${xi}" y1="${INSET / 2}" y2="${CH - INSET / 2}"><title>${title}</title></line>`;
  };
  const dots = s.length <= DOTS_UP_TO;
  const marks: Mark[] = ["context"];
  if (dots) marks.push("request");
  if (f.editsAt.length) marks.push("edit");
  if (f.compactionsAt.length) marks.push("compaction");
  const svg = [
    `<svg class="chart" viewBox="0 0 ${CW} ${CH}" role="img" aria-label="context per request">`,
    ...f.editsAt.map((at) => vertical("edit", at, `the guard edited the context ${where(at)}`)),
    ...f.compactionsAt.map((at) => vertical("compaction", at, `Pi compacted the conversation ${where(at)}`)),
    s.length > 1 ? `<polyline class="mark-context" points="${s.map((v, i) => `${x(i).toFixed(1)},${y(v).toFixed(1)}`).join(" ")}"/>` : "",
    ...(dots
      ? s.map(
          (v, i) =>
            `<circle class="mark-request" cx="${x(i).toFixed(1)}" cy="${y(v).toFixed(1)}" r="3.5"><title>request ${i + 1}: ${short(v)} tokens</title></circle>`,
        )
      : []),
    "</svg>",
  ].join("");
  return [
    '<figure class="context">',
    `<figcaption>Context sent with each request: from 0 at the bottom to ${tokens(peak)} at the top, the largest context of any session on this page, so that the charts compare.</figcaption>`,
    svg,
    `<div class="axis"><span>request 1</span><span>request ${s.length}</span></div>`,
    legend(marks),
    "</figure>",
  ].join("");
}

/** Horizontal bars, one per row, with their legend: `rows` are [label, value, words]. */
function bars(mark: Mark | ((i: number) => Mark), rows: [string, number, string][], caption: string, labels = "bar-label"): string {
  const max = Math.max(1, ...rows.map(([, v]) => v));
  const markOf = typeof mark === "function" ? mark : () => mark;
  const used = [...new Set(rows.map((_, i) => markOf(i)))];
  const body = rows.map(([label, v, words], i) => {
    const w = Math.max(0.5, (100 * v) / max).toFixed(1);
    return `<div class="bar-row"><span class="${labels}">${label}</span><svg class="bar" viewBox="0 0 100 10" preserveAspectRatio="none" aria-hidden="true"><rect class="mark-${markOf(i)}" x="0" y="0" width="${w}" height="10"/></svg><span class="bar-value">${words}</span></div>`;
  });
  return `<figure class="bars"><figcaption>${caption}</figcaption>${body.join("")}${legend(used)}</figure>`;
}

/** Tool output by tool over every session, largest first. */
export function toolChart(out: Record<string, { results: number; chars: number }>): string {
  const list = Object.entries(out).sort((a, b) => b[1].chars - a[1].chars);
  if (list.length === 0) return '<p class="note">No tool output in these sessions.</p>';
  return bars(
    "output",
    list.map(([tool, o]) => [line(tool, 120), o.chars, `${short(tokensOf(o.chars))} tokens in ${plural(o.results, "result")}`]),
    "What the tools returned, over every session: the part of the context the guard works on.",
  );
}

/** One session: its name, its figures beside the other sessions', what the guard did and would do, its chart. */
function card(a: Audited, e: Estimate, top: number): string {
  const s = a.session;
  const f = s.branch;
  const on = guardOn(s);
  const date = startDate(s);
  const when = date ? `<time datetime="${esc(s.startedAt ?? "")}">${date}</time>` : "<span>date not recorded</span>";
  const prompt = s.firstPrompt ? `<p class="prompt">“${esc(s.firstPrompt)}”</p>` : '<p class="prompt none">(no prompt in this session)</p>';
  const average = f.contextSeries.length ? f.contextSeries.reduce((n, c) => n + c, 0) / f.contextSeries.length : 0;
  const output = Object.values(f.toolOutput);
  const outputChars = output.reduce((n, o) => n + o.chars, 0);
  const results = output.reduce((n, o) => n + o.results, 0);
  const would = e.would
    ? e.would.candidates
      ? `up to ${tokens(e.would.candidateTokens)}`
      : "nothing"
    : a.wouldDoError
      ? `not computed: ${line(a.wouldDoError, 300)}`
      : "not computed";
  const money = moneySentence(s, e);
  const facts: [string, string][] = [
    ...(money ? [["Money", esc(money)] as [string, string]] : []),
    ["Requests", `${f.requests}${f.compactions ? `, ${plural(f.compactions, "compaction")}` : ", no compaction"}`],
    ["Context per request", `${tokens(average)} on average, ${short(f.peakContext)} at the peak`],
    ["Tool output", `${tokens(tokensOf(outputChars))} in ${plural(results, "result")}`],
    [
      "Cost, as Pi recorded it",
      f.cost.total === 0 ? "$0: no cost recorded" : `${usd(f.cost.total)}${f.requests ? ` (${usd(f.cost.total / f.requests)} per request)` : ""}`,
    ],
    ["The guard kept out", e.did ? tokens(e.did.keptTokens) : "nothing: it was off"],
    // What it could do, only where it did not run (issue 28).
    ...(on ? [] : [["The guard could keep out", would] as [string, string]]),
  ];
  const did = didSentence(e);
  const bill = billSentence(s, e);
  const what = on ? undefined : wouldSentences(e, on);
  const said = [
    did ? `<p class="did">${did}${bill ? ` ${esc(bill)}` : ""}</p>` : "",
    what
      ? `<p class="would">${what.what}${what.spared ? ` ${what.spared}` : ""}</p>`
      : a.wouldDoError && !on
        ? `<p class="would">What the guard would do was not computed: ${line(a.wouldDoError, 300)}.</p>`
        : "",
  ];
  const whole = s.file
    ? `<p class="note">The file also holds abandoned branches: ${s.entries} entries in all, ${s.branchEntries} on the branch Pi would resume (the one shown here); ${s.file.requests} requests and ${usd(s.file.cost.total)} in all.</p>`
    : "";
  return [
    `<article class="session ${on ? "with" : "without"}">`,
    `<h3>${when} <span class="sep">·</span> <span class="folder">${line(folderName(s.cwd), 200)}</span></h3>`,
    prompt,
    `<p class="where">in <span class="path">${line(s.cwd) || "(no folder recorded)"}</span>; file <span class="path">${line(s.path)}</span> (${short(s.bytes)}B)</p>`,
    `<dl class="facts">${facts.map(([k, v]) => `<dt>${k}</dt><dd>${v}</dd>`).join("")}</dl>`,
    ...said,
    contextChart(f, top),
    whole,
    ...s.warnings.map((m) => `<p class="warn">Warning: ${line(m)}</p>`),
    "</article>",
  ].join("");
}

/** The two groups' figures per session, side by side, and a chart of their context per request. */
function comparison(withList: Audited[], withEst: Estimate[], without: Audited[], withoutEst: Estimate[]): string {
  const a = groupFigures(withList, withEst);
  const b = groupFigures(without, withoutEst);
  const rows: [string, (g: typeof a) => string][] = [
    ["Sessions", (g) => String(g.sessions)],
    ["Requests", (g) => short(g.requests)],
    ["Context per request", (g) => tokens(g.contextPerRequest)],
    ["Largest context", (g) => tokens(g.peakContext)],
    ["Tool output", (g) => tokens(g.toolOutputTokens)],
    ["Compactions", (g) => short(g.compactions)],
    ["Cost, as Pi recorded it", (g) => usd(g.cost)],
    ["Cost per request", (g) => usd(g.costPerRequest)],
    ["The guard kept out", (g) => tokens(g.keptTokens)],
    ["The guard could (still) keep out, at most", (g) => tokens(g.wouldTokens)],
  ];
  const table = [
    '<table class="compare"><thead><tr><th scope="col">Per session, on average</th><th scope="col">With the guard</th><th scope="col">Without the guard</th></tr></thead><tbody>',
    ...rows.map(([k, v]) => `<tr><th scope="row">${k}</th><td>${v(a)}</td><td>${v(b)}</td></tr>`),
    "</tbody></table>",
  ].join("");
  const chart = bars(
    (i) => (i === 0 ? "with" : "without"),
    [
      ["With the guard", a.contextPerRequest, `${tokens(a.contextPerRequest)} per request`],
      ["Without the guard", b.contextPerRequest, `${tokens(b.contextPerRequest)} per request`],
    ],
    "Context sent per request, on average over every request of each group.",
    "bar-label words",
  );
  return `<section class="compare"><h2>With and without the guard</h2><p>The same figures for each kind of session, so that they can be set against each other. Sessions differ in their work, so read the difference as a hint, not a measurement.</p>${table}${chart}</section>`;
}

const STYLE = `
:root{color-scheme:light;--ink:#1d1f23;--muted:#5b616b;--line:#d9dce1;--context:#2459c4;--edit:#17803d;--compaction:#c2261f;--output:#7347c0;--with:#17803d;--without:#8a8f98}
*{box-sizing:border-box}
body{margin:0 auto;padding:24px;max-width:1240px;font:15px/1.5 system-ui,-apple-system,"Segoe UI",sans-serif,"Noto Color Emoji","Apple Color Emoji","Segoe UI Emoji";color:var(--ink);background:#f6f7f9;overflow-wrap:anywhere}
h1{font-size:24px;margin:0 0 8px}
h2{font-size:19px;margin:28px 0 8px}
h3{font-size:16px;margin:0 0 4px}
p{margin:6px 0}
.lede{font-size:17px}
.note,.where,figcaption{color:var(--muted);font-size:13px}
.path{font-family:ui-monospace,"DejaVu Sans Mono",monospace;font-size:12px}
.prompt{font-size:15px;font-style:italic;margin:2px 0 6px}
.prompt.none{font-style:normal;color:var(--muted)}
.sep{color:var(--muted)}
.groups{display:grid;grid-template-columns:repeat(auto-fit,minmax(min(360px,100%),1fr));gap:20px;align-items:start}
.group{min-width:0}
.session{background:#fff;border:1px solid var(--line);border-left:5px solid var(--without);border-radius:6px;padding:14px 16px;margin:0 0 16px;min-width:0}
.session.with{border-left-color:var(--with)}
.facts{display:grid;grid-template-columns:minmax(0,12.5em) minmax(0,1fr);gap:2px 12px;margin:8px 0;font-size:14px}
.facts dt{color:var(--muted)}
.facts dd{margin:0}
figure{margin:12px 0 0;min-width:0}
svg.chart{display:block;width:100%;height:auto;background:#fbfbfc;border:1px solid var(--line);border-radius:4px}
.axis{display:flex;justify-content:space-between;gap:8px;color:var(--muted);font-size:12px}
.legend{list-style:none;padding:0;margin:6px 0 0;display:flex;flex-wrap:wrap;gap:4px 18px;font-size:13px}
.legend li{display:flex;align-items:center;gap:6px;min-width:0}
.legend span{min-width:0}
svg.swatch{flex:none;width:30px;height:12px}
.bar-row{display:grid;grid-template-columns:minmax(0,12em) minmax(0,1fr);gap:2px 10px;align-items:center;margin:4px 0}
.bar-label{font-family:ui-monospace,"DejaVu Sans Mono",monospace;font-size:13px}
.bar-label.words{font-family:inherit;font-size:14px}
svg.bar{display:block;width:100%;height:14px}
.bar-value{grid-column:2;color:var(--muted);font-size:13px}
table.compare{width:100%;border-collapse:collapse;table-layout:fixed;background:#fff;border:1px solid var(--line);font-size:14px}
table.compare th,table.compare td{text-align:left;vertical-align:top;padding:6px 10px;border-top:1px solid var(--line)}
table.compare thead th{background:#eef0f3}
table.compare tbody th{font-weight:normal;color:var(--muted)}
.warn{color:#8a4b00}
ul.how{padding-left:20px}
.mark-context{fill:none;stroke:var(--context);stroke-width:2;stroke-linejoin:round;vector-effect:non-scaling-stroke}
.mark-request{fill:var(--context);stroke:none}
.mark-edit{stroke:var(--edit);stroke-width:2;stroke-dasharray:6 4;vector-effect:non-scaling-stroke}
.mark-compaction{stroke:var(--compaction);stroke-width:2;stroke-dasharray:2 3;vector-effect:non-scaling-stroke}
.mark-output{fill:var(--output)}
.mark-with{fill:var(--with)}
.mark-without{fill:var(--without)}
@media (max-width:600px){body{padding:12px}h1{font-size:21px}.facts{grid-template-columns:minmax(0,1fr)}.facts dd{margin-bottom:4px}.bar-row{grid-template-columns:minmax(0,1fr)}.bar-value{grid-column:1}}
`;

const HOW = [
  "A session is named by the day and time Pi started it (this computer's time zone), its project folder and its first prompt.",
  "“With the guard” means the session file holds the guard's records; the guard writes one each time it acts, so a session where it was on but never acted counts as without.",
  "Context tokens are what the provider counted for each request (Pi's usage). Tokens of tool output and of what the guard removes are estimated as characters / 4, as Pi estimates them.",
  "Costs “as Pi recorded it” are the sum of each reply's recorded cost. The guard's savings are estimates: the tokens the later requests did not send (or would not have sent), times the session's average price per input token: what it paid for input, cache reads and cache writes, divided by those tokens. A session that records no costs is priced at all the sessions' average.",
  "Removing something from the context makes the provider write the context after it to its cache again: for what the guard would do, that is priced at the cache-write price less the cache-read price, once per run end, from the earliest removal. What the guard did paid its rewrites already: they are in the recorded cost, not taken off its savings.",
  "The guard's net effect on the main model's bill is the same estimate /guard and /context show: for every request after an edit, the tokens its records kept out (less what recall brought back) priced at the cache-read price; less, at each edit, the tokens the first request after it wrote again (what the request before sent, less what the edit removed and what the request read from the cache) priced at the write price less the read price; less the classifier's recorded cost. Prices come from the session's recorded usage.",
  "“Would” is the guard with its default settings at the end of each run, as if its classifier dropped every output it would ask about whole: the most it could remove; it is shown for the sessions the guard did not run on. Old images it removes without asking; that is the least. Old exchanges are left out of the totals, since they hold the tool outputs already counted. Items are counted from the end of their own run until the next compaction.",
];

export function html(list: Audited[], failed: { path: string; error: string }[]): string {
  const t = totals(list);
  const est = estimates(list);
  const top = Math.max(1, ...list.map((a) => a.session.branch.peakContext));
  const dates = list
    .map((a) => startDate(a.session))
    .filter((d): d is string => d !== undefined)
    .sort();
  const folders = new Set(list.map((a) => a.session.cwd));
  const span = dates.length
    ? dates[0].slice(0, 10) === dates.at(-1)?.slice(0, 10)
      ? `On ${dates[0].slice(0, 10)}`
      : `From ${dates[0].slice(0, 10)} to ${dates.at(-1)?.slice(0, 10)}`
    : "At dates not recorded";
  const lede = list.length
    ? `${span}, in ${plural(folders.size, "project folder")}: ${plural(t.requests, "request")}, ${usd(t.cost.total)} as Pi recorded it. The guard was on in ${t.withGuard} of them and off in ${t.withoutGuard}.`
    : "No session could be read.";
  const index = list.map((a, i) => ({ a, e: est[i] }));
  const withIdx = index.filter(({ a }) => guardOn(a.session));
  const withoutIdx = index.filter(({ a }) => !guardOn(a.session));
  const group = (title: string, items: typeof index, kind: string) =>
    `<div class="group ${kind}"><h2>${title} (${plural(items.length, "session")})</h2>${items.map(({ a, e }) => card(a, e, top)).join("")}</div>`;
  const groups =
    withIdx.length && withoutIdx.length
      ? [group("With the guard", withIdx, "with"), group("Without the guard", withoutIdx, "without")]
      : withIdx.length
        ? [group("Sessions, all with the guard", withIdx, "with")]
        : withoutIdx.length
          ? [group("Sessions, all without the guard", withoutIdx, "without")]
          : [];
  return [
    "<!doctype html>",
    '<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">',
    `<title>Context audit: ${plural(list.length, "Pi session")}</title>`,
    `<style>${STYLE}</style></head><body>`,
    `<header><h1>Context audit of ${plural(list.length, "Pi session")}</h1><p class="lede">${lede}</p>`,
    ...summaryLines(list, est).map((l) => `<p>${l}</p>`),
    "</header>",
    withIdx.length && withoutIdx.length
      ? comparison(
          withIdx.map((x) => x.a),
          withIdx.map((x) => x.e),
          withoutIdx.map((x) => x.a),
          withoutIdx.map((x) => x.e),
        )
      : "",
    `<section class="groups">${groups.join("")}</section>`,
    `<section><h2>Tool output by tool</h2>${toolChart(t.toolOutput)}</section>`,
    failed.length
      ? `<section><h2>Files not audited</h2>${failed.map((f) => `<p class="warn"><span class="path">${line(f.path)}</span>: ${line(f.error)}</p>`).join("")}</section>`
      : "",
    `<section><h2>How these figures are made</h2><ul class="how">${HOW.map((h) => `<li>${h}</li>`).join("")}</ul></section>`,
    "</body></html>",
    "",
  ].join("\n");
}
