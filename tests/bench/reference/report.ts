// A straightforward TypeScript version of the /context report, written plainly
// for the benchmark: the same inputs and outputs as the Rust core
// (crates/report/src/), so the two can be timed against each other in one
// process and checked to agree. Not used by the extension.
import type { ContextInputs, ContextReport, Hue, Kind, Largest, Row } from "../../../extension/report/types.ts";

const MAX_SAFE = Number.MAX_SAFE_INTEGER;
const whole = (t: number) => (Number.isFinite(t) && t > 0 ? Math.min(Math.round(t), MAX_SAFE) : 0);
const pct = (part: number, total: number) => (total === 0 ? 0 : (part * 100) / total);
const pctText = (p: number) => `${p.toFixed(1)}%`;
const cells = (part: number, total: number, of: number) => (part === 0 || total === 0 ? 0 : Math.min(of, Math.max(1, Math.round((part / total) * of))));

function count(n: number): string {
  if (n < 1000) return String(n);
  const tenthsK = Math.floor((n + 50) / 100);
  if (tenthsK < 10_000) return `${Math.floor(tenthsK / 10)}.${tenthsK % 10}k`;
  const tenthsM = Math.floor((n + 50_000) / 100_000);
  return `${Math.floor(tenthsM / 10)}.${tenthsM % 10}M`;
}

function sanitize(s: string, max: number): string {
  const first = s.trimStart().split("\n")[0] ?? "";
  let out = "";
  let lastSpace = true;
  for (const ch of first) {
    const c = /[\p{Cc}\u200b-\u200f\u202a-\u202e\u2066-\u2069\ufeff]/u.test(ch) ? " " : ch;
    if (/\s/u.test(c)) {
      if (!lastSpace) out += " ";
      lastSpace = true;
    } else {
      out += c;
      lastSpace = false;
    }
  }
  const trimmed = out.trimEnd();
  if (trimmed.length <= max) return trimmed;
  let cut = "";
  for (const ch of trimmed) {
    if (cut.length + ch.length > max - 1) break;
    cut += ch;
  }
  return `${cut.trimEnd()}…`;
}

const HUES: Record<string, Hue> = { system: "hue1", tools: "hue2", user: "hue3", assistant: "hue4", toolResults: "hue5" };
const hueOf = (id: string, depth: number): Hue => (depth > 0 ? "faint" : (HUES[id] ?? "meta"));
const BUCKETS: Record<string, string> = {
  user: "user",
  assistant: "assistant",
  toolResult: "toolResults",
  custom: "custom",
  compactionSummary: "summaries",
  branchSummary: "summaries",
  bashExecution: "shell",
};

/** The system message's rows: each a stretch of one character stream, worth ceil(end/4) - ceil(start/4). */
function systemRows(inputs: ContextInputs, add: (id: string, label: string, tokens: number, n: number, depth: number) => void) {
  const { content, sections, tools, toolsChars } = inputs.system;
  const stretch = (a: number, b: number) => Math.ceil(b / 4) - Math.ceil(a / 4);
  const cwdText = sections.find((x) => x.name === "cwd")?.text ?? "";
  const cwd = cwdText.replace(/^<cwd>\n/, "").replace(/\n<\/cwd>$/, "");
  const children: [string, string, number][] = [];
  if (content.length > 0 && sections.length > 0) children.push(["system:content", "content", stretch(0, content.length)]);
  let at = content.length;
  for (const { name, text } of sections) {
    const end = at + text.length;
    const label = sanitize(name, 40);
    if (name !== "project_context") children.push([`system:${label}`, label, stretch(at, end)]);
    else {
      const open = '<project_instructions path="';
      const starts: number[] = [];
      for (let i = text.indexOf(open); i >= 0; i = text.indexOf(open, i + 1)) if (i === 0 || text.slice(0, i).endsWith("\n\n")) starts.push(i);
      const files: [string, string, number][] = [];
      starts.forEach((start, k) => {
        const limit = starts[k + 1] ?? text.length;
        const close = text.slice(start, limit).lastIndexOf("</project_instructions>");
        const stop = close < 0 ? limit : start + close + "</project_instructions>".length;
        const after = text.slice(start + open.length, limit);
        const path = after.includes('">') ? after.slice(0, after.indexOf('">')) : "";
        const rel = cwd && path.startsWith(`${cwd}/`) ? path.slice(cwd.length + 1) : path;
        const clean = sanitize(rel, 4096);
        const name = clean.length <= 40 ? clean : `…${clean.slice(clean.length - 39)}`;
        files.push([`system:file:${name}`, name, stretch(at + start, at + stop)]);
      });
      children.push([`system:${label}`, label, stretch(at, end) - files.reduce((s, f) => s + f[2], 0)], ...files);
    }
    at = end;
  }
  add("system", "System prompt", stretch(0, at), 0, 0);
  for (const [id, label, t] of children) add(id, label, t, 0, 1);
  const toolsEnd = at + toolsChars;
  add("tools", "Tool definitions", stretch(at, toolsEnd), tools.length, 0);
  let from = at + 1;
  const each = tools.map((t) => {
    const end = Math.min(from + t.chars, toolsEnd);
    const row = { label: sanitize(t.name, 40) || "(no name)", tokens: stretch(Math.min(from, end), end) };
    from = end + 1;
    return row;
  });
  for (const t of each.sort((a, b) => b.tokens - a.tokens)) add(`tool:${t.label}`, t.label, t.tokens, 0, 1);
}

/** Context per request: count, first, peak (the first of equal peaks), last, marks, cache, cost. */
function requestFigures(inputs: ContextInputs): ContextReport["requests"] {
  const { tokens, marks, last, cost } = inputs.requests;
  const r = { count: tokens.length, first: 0, peak: 0, peakAt: 0, last: 0, compactions: 0, edits: 0 };
  tokens.forEach((raw, i) => {
    const t = whole(raw);
    if (i === 0) r.first = t;
    if (i === 0 || t > r.peak) [r.peak, r.peakAt] = [t, i + 1];
    r.last = t;
    if ((marks[i] ?? 0) & 1) r.compactions++;
    if ((marks[i] ?? 0) & 2) r.edits++;
  });
  const cache = last ? { read: whole(last.cacheRead), written: whole(last.cacheWrite), uncached: whole(last.input) } : undefined;
  return { ...r, ...(cache ? { cache } : {}), ...(cost !== undefined && Number.isFinite(cost) && cost > 0 ? { cost } : {}) };
}

export function buildReport(inputs: ContextInputs): ContextReport {
  // Headline and threshold.
  const positive = (v: number | undefined) => (v !== undefined && whole(v) > 0 ? whole(v) : undefined);
  const fromUsage = positive(inputs.usage?.contextWindow);
  const fromModel = positive(inputs.model?.contextWindow);
  const window = fromUsage ?? fromModel;
  const rawTokens = inputs.usage?.tokens;
  const tokens = typeof rawTokens === "number" && Number.isFinite(rawTokens) && rawTokens >= 0 ? whole(rawTokens) : undefined;
  const percent =
    tokens === undefined
      ? undefined
      : Number.isFinite(inputs.usage?.percent ?? Number.NaN)
        ? (inputs.usage?.percent as number)
        : window
          ? (tokens * 100) / window
          : undefined;
  const settings = (inputs.compaction.settings ?? {}) as Record<string, unknown>;
  const enabled = typeof settings.enabled === "boolean" ? settings.enabled : inputs.compaction.defaults.enabled;
  const reserve = whole(inputs.compaction.defaults.reserveTokens);
  const at = window === undefined ? undefined : Math.max(0, window - reserve);

  // Composition.
  const buckets = new Map<string, { tokens: number; count: number }>();
  const types: { name: string; tokens: number; count: number }[] = [];
  const results: { name: string; tokens: number; count: number }[] = [];
  const { tokens: counts, kind, kinds } = inputs.messages;
  const kindOf = (i: number): Kind => kinds[kind[i]] ?? { role: "" };
  for (let i = 0; i < counts.length; i++) {
    const m = kindOf(i);
    const t = whole(counts[i]);
    if (m.role === "system") continue;
    const id = BUCKETS[m.role] ?? `role:${m.role}`;
    const b = buckets.get(id) ?? { tokens: 0, count: 0 };
    b.tokens += t;
    b.count += 1;
    buckets.set(id, b);
    if (m.role === "toolResult") {
      const name = m.toolName ?? "";
      const r = results.find((x) => x.name === name);
      if (r) {
        r.tokens += t;
        r.count += 1;
      } else results.push({ name, tokens: t, count: 1 });
    }
    if (m.role === "custom") {
      const name = m.customType ?? "";
      const type = types.find((x) => x.name === name);
      if (type) {
        type.tokens += t;
        type.count += 1;
      } else types.push({ name, tokens: t, count: 1 });
    }
  }
  const rows: Row[] = [];
  const caption = (label: string, id: string, n: number) => (id === "system" || n === 0 ? label : `${label} (${n})`);
  const add = (id: string, label: string, tokens: number, n: number, depth: number) =>
    rows.push({
      id,
      label,
      tokens,
      count: n,
      percent: 0,
      cells: 0,
      thin: false,
      hue: hueOf(id, depth),
      depth,
      caption: caption(label, id, n),
      tokensText: count(tokens),
      percentText: "",
    });
  systemRows(inputs, add);
  for (const [id, label] of [
    ["user", "User"],
    ["assistant", "Assistant"],
    ["toolResults", "Tool results"],
  ]) {
    const b = buckets.get(id);
    if (b) add(id, label, b.tokens, b.count, 0);
  }
  for (const r of [...results].sort((a, b) => b.tokens - a.tokens)) {
    const label = sanitize(r.name, 40) || "(no tool)";
    add(`result:${label}`, label, r.tokens, r.count, 1);
  }
  const custom = buckets.get("custom");
  if (custom) {
    add("custom", "Injected context", custom.tokens, custom.count, 0);
    const sorted = [...types].sort((a, b) => b.tokens - a.tokens);
    sorted.slice(0, 5).forEach((t) => {
      const label = sanitize(t.name, 40) || "(no type)";
      add(`custom:${label}`, label, t.tokens, t.count, 1);
    });
    const rest = sorted.slice(5);
    if (rest.length)
      add(
        "customOther",
        `${rest.length} more type${rest.length === 1 ? "" : "s"}`,
        rest.reduce((s, t) => s + t.tokens, 0),
        rest.reduce((s, t) => s + t.count, 0),
        1,
      );
  }
  for (const [id, label] of [
    ["summaries", "Summaries"],
    ["shell", "Shell output"],
  ]) {
    const b = buckets.get(id);
    if (b) add(id, label, b.tokens, b.count, 0);
  }
  for (const [id, b] of buckets) {
    if (id.startsWith("role:")) {
      const label = sanitize(id.slice(5), 40) || "(no role)";
      add(`role:${label}`, label, b.tokens, b.count, 0);
    }
  }
  const estimate = rows.filter((r) => r.depth === 0).reduce((s, r) => s + r.tokens, 0);
  for (const r of rows) {
    r.percent = pct(r.tokens, estimate);
    r.cells = cells(r.tokens, estimate, 8);
    r.thin = r.cells === 1 && r.percent < 50 / 8;
    r.percentText = pctText(r.percent);
  }

  // Largest.
  const ranked = Array.from(counts, (t, index) => ({ m: kindOf(index), index, tokens: whole(t) }))
    .filter((x) => x.m.role !== "system")
    .sort((a, b) => b.tokens - a.tokens || a.index - b.index)
    .slice(0, 5);
  const describe = (k: Kind, index: number) => {
    const m = { ...k, ...inputs.messages.describe(index) };
    const text = m.text ? sanitize(m.text, 40) || undefined : undefined;
    const named = (s?: string) => (s ? sanitize(s, 40) || undefined : undefined);
    let found: string | undefined;
    if (m.role === "toolResult") found = named(m.toolName);
    else if (m.role === "custom") found = named(m.customType);
    else if (m.role === "bashExecution") found = m.command === undefined ? undefined : sanitize(`$ ${m.command.trimStart()}`, 40);
    else if (m.role === "assistant") found = text ?? (named(m.toolName) ? sanitize(`calls ${named(m.toolName)}`, 40) : undefined);
    return found ?? text ?? "";
  };
  const largest: Largest[] = ranked.map(({ m, index, tokens }) => {
    const bucket = BUCKETS[m.role] ?? "other";
    const share = pct(tokens, estimate);
    return {
      index,
      role: sanitize(m.role, 40),
      bucket,
      tokens,
      percent: share,
      cells: cells(tokens, estimate, 8),
      thin: cells(tokens, estimate, 8) === 1 && share < 50 / 8,
      hue: hueOf(bucket, 0),
      descriptor: describe(m, index),
      tokensText: count(tokens),
      percentText: pctText(share),
    };
  });

  // Drift, history, gauge.
  const difference = tokens === undefined ? undefined : tokens - estimate;
  const note =
    difference === undefined
      ? "unknown"
      : difference === 0
        ? "none"
        : difference > 0
          ? "unattributed"
          : kind.some((k) => kinds[k]?.role === "assistant")
            ? "estimateAbove"
            : "hostCountsMessagesOnly";
  const used = tokens ?? estimate;
  const verdict =
    window === undefined || tokens === undefined
      ? "unknown"
      : at !== undefined && enabled
        ? used > at
          ? "over"
          : used >= at * 0.8
            ? "near"
            : "ok"
        : used >= window
          ? "over"
          : used >= window * 0.8
            ? "near"
            : "ok";

  return {
    headline: {
      tokens,
      window,
      windowSource: fromUsage ? "usage" : fromModel ? "model" : "unknown",
      percent,
      free: tokens !== undefined && window ? Math.max(0, window - tokens) : undefined,
      pending: inputs.usage !== undefined && tokens === undefined,
    },
    threshold: {
      state: !enabled ? "off" : window === undefined ? "unknownWindow" : "on",
      enabled,
      reserve,
      reserveSource: "default",
      modelKey: inputs.model ? `${inputs.model.provider}/${inputs.model.id}` : undefined,
      at: enabled ? at : undefined,
      headroom: enabled && at !== undefined && tokens !== undefined ? at - tokens : undefined,
      problem: undefined,
    },
    windowGauge: {
      filled: window ? cells(used, window, 10) : 0,
      of: 10,
      thresholdCell: enabled && at !== undefined && window ? Math.max(1, cells(at, window, 10)) : undefined,
      basis: window === undefined ? "none" : tokens === undefined ? "estimate" : "host",
      verdict,
    },
    estimate,
    rows,
    drift: { host: tokens, estimate, difference, note },
    history: { count: inputs.history.count, latest: undefined },
    requests: requestFigures(inputs),
    largest,
    compacted: undefined,
    sentences: {
      headline: "",
      threshold: "",
      composition: `Composition (estimate: ${count(estimate)} tokens)`,
      bars: "",
      drift: "",
      history: "",
      requests: "",
    },
    text: "",
  };
}
