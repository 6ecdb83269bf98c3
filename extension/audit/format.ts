// The audit for a person, in words: the terminal text, the versioned JSON
// object, and the facts both and the page (html.ts) share: a session named
// by its date, folder and first prompt; whether the guard was on; what it
// did and would do in tokens and dollars (figures.ts `estimate`); the
// sessions with and without the guard side by side. Formatting only.
import { sparkline as drawSparkline } from "../report/spark.ts";
import { core } from "../core.ts";
import { guardCore } from "../guard/wasm.ts";
import { type Cost, emptyCost, type Estimate, estimate, type Figures, pricesOf, tokensOf } from "./figures.ts";
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
  /** Sessions whose file holds the guard's records, and the others. */
  withGuard: number;
  withoutGuard: number;
  bytes: number;
  requests: number;
  peakContext: number;
  toolOutput: Record<string, { results: number; chars: number }>;
  keptOut: Record<string, number>;
  recallsAfterDistill: number;
  recalledChars: number;
  compactions: number;
  cost: Cost;
  lower: { items: number; chars: number };
  upper: { items: number; chars: number; superseded: number; supersededChars: number };
  rewriteChars: number;
}

/** Whether the guard was on: the session's file holds its records (it writes one each time it acts). */
export const guardOn = (s: SessionRead): boolean => (s.file ?? s.branch).guardRecords > 0;

export function totals(list: Audited[]): Totals {
  const t: Totals = {
    sessions: list.length,
    withGuard: 0,
    withoutGuard: 0,
    bytes: 0,
    requests: 0,
    peakContext: 0,
    toolOutput: {},
    keptOut: {},
    recallsAfterDistill: 0,
    recalledChars: 0,
    compactions: 0,
    cost: emptyCost(),
    lower: { items: 0, chars: 0 },
    upper: { items: 0, chars: 0, superseded: 0, supersededChars: 0 },
    rewriteChars: 0,
  };
  for (const { session: s, wouldDo: w } of list) {
    const f = s.branch;
    if (guardOn(s)) t.withGuard++;
    else t.withoutGuard++;
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
    for (const k of Object.keys(t.cost) as (keyof Cost)[]) t.cost[k] += f.cost[k];
    if (w) {
      t.lower.items += w.lower.items;
      t.lower.chars += w.lower.chars;
      for (const k of Object.keys(t.upper) as (keyof Totals["upper"])[]) t.upper[k] += w.upper[k];
      for (const c of w.candidates) t.rewriteChars += c.rewriteChars;
    }
  }
  return t;
}

/** Each session's estimate, priced by its own usage, else by all the sessions' usage together. */
export function estimates(list: Audited[]): Estimate[] {
  const all = pricesOf(totals(list).cost);
  return list.map(({ session: s, wouldDo: w }) => estimate(s.branch, w, (id) => s.later.after(id), pricesOf(s.branch.cost), all, s.bill?.savedTokens));
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

/** Dollars: $12.34, $0.27, $0.0123; a cost too small for four decimals says so. */
export function usd(n: number): string {
  if (n === 0) return "$0";
  if (n > 0 && n < 0.00005) return "under $0.0001";
  return `$${n.toFixed(n >= 0.1 ? 2 : 4)}`;
}

/** "1 result", "2 results". */
export const plural = (n: number, one: string, many = `${one}s`): string => `${n} ${n === 1 ? one : many}`;

const pad = (n: number) => String(n).padStart(2, "0");

/** When the session started, in this machine's time zone: `2026-12-01 09:05`; undefined when the header has no date. */
export function startDate(s: SessionRead): string | undefined {
  if (!s.startedAt) return undefined;
  const d = new Date(s.startedAt);
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}`;
}

/** The project folder's own name: the last part of the session's `cwd` (Pi writes it with / or \). */
export function folderName(cwd: string): string {
  const parts = cwd.split(/[\\/]+/).filter(Boolean);
  return parts.at(-1) ?? (cwd || "(no folder)");
}

/** Per session of a group, on average: the figures the page and the text set side by side. */
export interface GroupFigures {
  sessions: number;
  requests: number;
  /** Context tokens per request, over every request of the group. */
  contextPerRequest: number;
  peakContext: number;
  toolOutputTokens: number;
  compactions: number;
  cost: number;
  costPerRequest: number;
  /** What the guard's records kept out (tokens), and what it would still keep out at most. */
  keptTokens: number;
  wouldTokens: number;
}

export function groupFigures(list: Audited[], est: Estimate[]): GroupFigures {
  const n = list.length || 1;
  let requests = 0;
  let series = 0;
  let sent = 0;
  let peak = 0;
  let output = 0;
  let compactions = 0;
  let cost = 0;
  let kept = 0;
  let would = 0;
  list.forEach(({ session: s }, i) => {
    const f = s.branch;
    requests += f.requests;
    series += f.contextSeries.length;
    for (const c of f.contextSeries) sent += c;
    peak += f.peakContext;
    for (const o of Object.values(f.toolOutput)) output += tokensOf(o.chars);
    compactions += f.compactions;
    cost += f.cost.total;
    kept += est[i].did?.keptTokens ?? 0;
    would += est[i].would?.candidateTokens ?? 0;
  });
  return {
    sessions: list.length,
    requests: requests / n,
    contextPerRequest: series ? sent / series : 0,
    peakContext: peak / n,
    toolOutputTokens: output / n,
    compactions: compactions / n,
    cost: cost / n,
    costPerRequest: requests ? cost / requests : 0,
    keptTokens: kept / n,
    wouldTokens: would / n,
  };
}

/** How the dollars of an estimate were priced, in words. */
export function priceNote(e: Estimate): string {
  if (e.pricePerToken === null) return "no dollar estimate: no session here records costs";
  const perMillion = `$${(e.pricePerToken * 1e6).toFixed(2)} per million input tokens`;
  return `estimated at ${perMillion}, ${e.priceFrom === "session" ? "this session's" : "all these sessions'"} average`;
}

const tokens = (n: number) => `${short(n)} tokens`;
/** " (about $0.27)", or nothing when there is no price. */
const about = (n: number | null) => (n === null ? "" : ` (about ${usd(n)})`);

/** What the guard did, in sentences; undefined when the session holds none of its records. */
export function didSentence(e: Estimate): string | undefined {
  const d = e.did;
  if (!d) return undefined;
  // In tokens only: the money is the bill's one answer (moneySentence), never a second figure here (issue 28).
  const lines = [
    `The guard kept ${tokens(d.keptTokens)} of tool output out of the context at ${plural(d.passes, "run end or checkpoint", "run ends and checkpoints")}${d.sparedTokens === null ? "" : `, so the requests after that sent ${short(d.sparedTokens)} fewer tokens in all`}.`,
    `Its classifier cost ${usd(d.classifierUsd)}.`,
  ];
  if (d.recalls > 0) lines.push(`The agent asked for removed output back ${d.recalls === 1 ? "once" : `${d.recalls} times`} (${tokens(d.recalledTokens)}).`);
  else lines.push("The agent never asked for removed output back.");
  return lines.join(" ");
}

/**
 * The one money answer (issue 28), the bill's as `/guard`'s first line and the status bar say it: "The
 * guard saved $0.27 on this session's bill so far (est.)." Undefined where the guard did nothing or
 * there is no price: the bill's line (billSentence) then says so once, in tokens.
 */
export function moneySentence(s: SessionRead, e: Estimate): string | undefined {
  return e.did && s.bill?.answer ? `The guard ${s.bill.answer}.` : undefined;
}

/** The bill's parts (guard/bill.rs's line, as `/guard details` and `/context` show it); undefined where the guard did nothing. */
export function billSentence(s: SessionRead, e: Estimate): string | undefined {
  if (!e.did || !s.bill) return undefined;
  return `Its net effect on the main model's bill so far: ${s.bill.line}.`;
}

/**
 * What the guard would do, in two sentences: what it would remove or ask about (starting "The guard
 * would"), and what that would spare the later requests and cost in cache writes (absent when there is
 * nothing to remove).
 */
export function wouldSentences(e: Estimate, on: boolean): { what: string; spared: string | undefined } | undefined {
  const w = e.would;
  if (!w) return undefined;
  const more = on ? " still" : "";
  if (w.candidates === 0) {
    return {
      what: `The guard would${more} find nothing to remove here with its default settings: no tool output large enough and no old image (0 tokens, $0).`,
      spared: undefined,
    };
  }
  const images =
    w.images > 0 ? `remove ${plural(w.images, "old image")} (${tokens(w.imageTokens)}) without asking anyone${w.images < w.candidates ? ", and " : ""}` : "";
  const outputs = w.candidates - w.images;
  const asks =
    outputs > 0
      ? `show its classifier ${plural(outputs, "tool output")} of ${tokens(w.candidateTokens - w.imageTokens)} to shorten or drop${w.superseded > 0 ? ` (${w.superseded} already outdated by a later call)` : ""}`
      : "";
  const range =
    w.images > 0 && w.images < w.candidates
      ? `between ${tokens(w.sparedLowerTokens)}${about(w.sparedLowerUsd)} (the images alone) and ${tokens(w.sparedUpperTokens)}${about(w.sparedUpperUsd)} (everything dropped)`
      : `up to ${tokens(w.sparedUpperTokens)}${about(w.sparedUpperUsd)}`;
  const net = w.sparedUpperUsd !== null && w.rewriteUsd !== null ? w.sparedUpperUsd - w.rewriteUsd : undefined;
  const balance = net === undefined ? ` (${priceNote(e)})` : `: on balance about ${usd(Math.abs(net))} ${net >= 0 ? "saved" : "lost"}, ${priceNote(e)}`;
  return {
    what: `The guard would${more} ${images}${asks}.`,
    spared: `Dropping them would spare the later requests ${range} but make the provider write ${tokens(w.rewriteTokens)} to its cache again${about(w.rewriteUsd)}${balance}.`,
  };
}

/** The terminal's form of a line a session may have written: control and invisible characters out. */
const clean = (s: string, max = 400) => core.sanitizeLine(s, max);

function byTool(out: Record<string, { results: number; chars: number }>): string {
  const list = Object.entries(out).sort((a, b) => b[1].chars - a[1].chars);
  return list.map(([tool, o]) => `${clean(tool, 60)} ${tokens(tokensOf(o.chars))} (${plural(o.results, "result")})`).join(", ") || "none";
}

function figureLines(f: Figures, indent: string): string[] {
  const compactions = f.compactions === 0 ? "no compaction" : plural(f.compactions, "compaction");
  return [
    `${indent}${plural(f.requests, "request")}, context per request ${sparkline(f.contextSeries)} peak ${tokens(f.peakContext)}, last ${short(f.finalContext)}; ${compactions}`,
    `${indent}tool output: ${byTool(f.toolOutput)}`,
    `${indent}cost as Pi recorded it: ${usd(f.cost.total)}; cache reads ${tokens(f.cost.cacheReadTokens)} (${usd(f.cost.cacheRead)}), cache writes ${tokens(f.cost.cacheWriteTokens)} (${usd(f.cost.cacheWrite)})`,
  ];
}

const KIND_WORDS: Record<string, string> = { large: "large outputs", small: "small outputs", image: "old images", exchange: "old exchanges" };

/** A session's name line: its date, its folder, its first prompt. */
export function nameLine(s: SessionRead): string {
  const prompt = s.firstPrompt ? `"${s.firstPrompt}"` : "(no prompt)";
  return `${startDate(s) ?? "(no date)"}  ${clean(folderName(s.cwd), 200)}  ${prompt}`;
}

export function text(list: Audited[], failed: { path: string; error: string }[]): string {
  const out: string[] = [];
  const est = estimates(list);
  list.forEach(({ session: s, wouldDo: w, wouldDoError }, i) => {
    const e = est[i];
    const on = guardOn(s);
    out.push(nameLine(s));
    const money = moneySentence(s, e);
    if (money) out.push(`  ${money}`);
    out.push(`  in ${clean(s.cwd) || "(no folder recorded)"}; file ${clean(s.path)} (${short(s.bytes)}B); guard ${on ? "on" : "off (no records of it)"}`);
    out.push(...figureLines(s.branch, "  "));
    if (s.file)
      out.push(`  the whole file, abandoned branches too (${s.entries} entries; ${s.branchEntries} on the branch above):`, ...figureLines(s.file, "    "));
    const did = didSentence(e);
    if (did) out.push(`  ${did}`);
    const bill = billSentence(s, e);
    if (bill) out.push(`  ${bill}`);
    // What the guard could do, only where it did not run (issue 28): a session it ran on says what it did.
    if (w && e.would && !on) {
      const n = e.would;
      const images = n.images > 0 ? `${tokens(n.imageTokens)} (${plural(n.images, "image")})` : "none";
      const outputs = n.candidates - n.images;
      const asks =
        outputs > 0
          ? `ask its classifier about ${plural(outputs, n.images > 0 ? "more tool output" : "tool output")} (${tokens(n.candidateTokens - n.imageTokens)}) it could shorten or drop${n.superseded > 0 ? ` (${n.superseded} outdated by a later call)` : ""}`
          : `no${n.images > 0 ? " other" : ""} tool output to ask its classifier about`;
      out.push(`  guard would: remove old images: ${images}; ${asks}.`);
      const spared = wouldSentences(e, on)?.spared;
      if (spared) out.push(`  ${spared}`);
      const kinds = Object.entries(w.byKind).map(
        ([kind, k]) =>
          `${KIND_WORDS[kind] ?? kind} ${k.items} (${tokens(tokensOf(k.chars))}${kind === "exchange" ? "; these contain the outputs above, counted once" : ""})`,
      );
      if (kinds.length) out.push(`    by kind: ${kinds.join(", ")}; cache rewrites as the ${w.cache} cache works`);
    } else if (wouldDoError && !on) out.push(`  guard would: not computed (${clean(wouldDoError)})`);
    for (const warning of s.warnings) out.push(`  warning: ${clean(warning)}`);
  });
  for (const f of failed) out.push(`${clean(f.path)}: not audited: ${clean(f.error)}`);
  const t = totals(list);
  out.push(
    `total: ${plural(t.sessions, "session")} (${t.withGuard} with the guard, ${t.withoutGuard} without), ${short(t.bytes)}B, ${plural(t.requests, "request")}, peak ${tokens(t.peakContext)}, ${plural(t.compactions, "compaction")}, cost as recorded ${usd(t.cost.total)} (cache reads ${usd(t.cost.cacheRead)}, writes ${usd(t.cost.cacheWrite)})`,
    `  tool output: ${byTool(t.toolOutput)}`,
  );
  out.push(...summaryLines(list, est).map((l) => `  ${l}`));
  return `${out.join("\n")}\n`;
}

/** The whole audit in a few sentences: what the guard did, what it would do, with against without. */
export function summaryLines(list: Audited[], est: Estimate[]): string[] {
  const lines: string[] = [];
  const sum = (pick: (e: Estimate) => number | null | undefined, of = est) => of.reduce((n, e) => n + (pick(e) ?? 0), 0);
  const priced = est.some((e) => e.pricePerToken !== null);
  const money = (n: number) => (priced ? ` (about ${usd(n)}, estimated)` : "");
  const on = est.filter((e) => e.did).length;
  if (on > 0) {
    // The money answer first: the sum of the sessions' bills, the figure each card and `/guard` give.
    const bills = list.filter((a, i) => est[i].did && a.session.bill?.netUsd != null).map((a) => a.session.bill?.netUsd ?? 0);
    if (bills.length > 0) {
      const net = bills.reduce((a, b) => a + b, 0);
      const unpriced = on - bills.length;
      // Worded by the bill's one rule (guard/bill.rs `answer`), as each session's is.
      const answer = guardCore.moneyAnswer(net, `the bills of ${plural(bills.length, "session")}`);
      lines.push(`The guard ${answer}${unpriced > 0 ? `; ${plural(unpriced, "other session")} had no price` : ""}.`);
    }
    lines.push(
      `It kept ${tokens(sum((e) => e.did?.keptTokens))} of tool output out of the context in ${plural(on, "session")}, so the requests after that sent ${short(sum((e) => e.did?.sparedTokens))} fewer tokens; its classifier cost ${usd(sum((e) => e.did?.classifierUsd))}.`,
    );
  }
  // What it could do: only in the sessions it did not run on (issue 28).
  const off = est.filter((e, i) => e.would && !guardOn(list[i].session));
  if (off.length > 0) {
    const images = sum((e) => e.would?.imageTokens, off);
    const least = images > 0 ? `at least ${tokens(images)} (old images, removed with no classifier) and ` : "";
    const items = sum((e) => e.would?.candidates, off);
    const what = images > 0 ? plural(items, "tool output or image", "tool outputs and images") : plural(items, "tool output");
    lines.push(
      `In ${plural(off.length, "session")} without it, the guard could keep out ${least}up to ${tokens(sum((e) => e.would?.candidateTokens, off))} (${what}), so the later requests would send up to ${tokens(sum((e) => e.would?.sparedUpperTokens, off))} fewer${money(sum((e) => e.would?.sparedUpperUsd, off))}, while the provider would write ${tokens(sum((e) => e.would?.rewriteTokens, off))} to its cache again${money(sum((e) => e.would?.rewriteUsd, off))}.`,
    );
  }
  const withList = list.filter((a) => guardOn(a.session));
  const without = list.filter((a) => !guardOn(a.session));
  if (withList.length > 0 && without.length > 0) {
    const a = groupFigures(
      withList,
      est.filter((_, i) => guardOn(list[i].session)),
    );
    const b = groupFigures(
      without,
      est.filter((_, i) => !guardOn(list[i].session)),
    );
    lines.push(
      `With the guard against without, per session on average: ${short(a.requests)} against ${short(b.requests)} requests, context ${short(a.contextPerRequest)} against ${short(b.contextPerRequest)} tokens per request, peak ${short(a.peakContext)} against ${short(b.peakContext)}, ${usd(a.costPerRequest)} against ${usd(b.costPerRequest)} per request.`,
    );
  }
  return lines;
}

/** The `--json` object (docs/AUDIT.md describes each field). */
export function json(list: Audited[], failed: { path: string; error: string }[]): object {
  const est = estimates(list);
  return {
    version: AUDIT_JSON_VERSION,
    sessions: list.map(({ session: s, wouldDo: w, wouldDoError }, i) => ({
      path: s.path,
      id: s.id,
      cwd: s.cwd,
      startedAt: s.startedAt ?? null,
      firstPrompt: s.firstPrompt,
      guardOn: guardOn(s),
      bytes: s.bytes,
      entries: s.entries,
      branchEntries: s.branchEntries,
      branch: s.branch,
      file: s.file ?? null,
      wouldDo: w ?? null,
      wouldDoError: wouldDoError ?? null,
      estimate: est[i],
      bill: s.bill ?? null,
      warnings: s.warnings,
    })),
    failed,
    totals: totals(list),
  };
}
