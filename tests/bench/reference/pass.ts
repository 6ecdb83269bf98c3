// A straightforward TypeScript version of the run-end pass for large outputs,
// written plainly for the benchmark: the same steps as the Rust core
// (crates/guard/src/: run.rs, decide/, render.rs, pass/; crates/scan/src/chunk/)
// from the same projected entries, so the two can be timed against each other in one
// process and checked to agree (the benchmark compares the requests and the
// replacement texts). Whole items (small outputs, old exchanges, old images)
// are left out: the benchmark's session has none, so they cost the core
// nothing either. Not used by the extension. The mid-run checkpoint's
// reference (checkpoint.ts) plans and finishes its outputs with the exports
// below.
import { withholdRequests, withholdSecrets } from "./secrets.ts";
import type {
  BreakEvenDecision,
  ContextEditDraft,
  GuardClassifierContext,
  GuardClassifierQuestion,
  GuardRecord,
  GuardRecordDraft,
  GuardResult,
  GuardSettings,
  LargeOutputState,
  PassAnswers,
} from "../../../extension/guard/types.ts";
import type { ProjectedEntry } from "../../../extension/guard/collect.ts";

// Pi's messages, read loosely as the core reads them
type Message = any;

export const MARK = "[context-guard]";
const STEERING_PREFIX = "[The user added during the run]";
const IMAGE_ONLY = "[the user sent only an image]";

// ---------------------------------------------------------------------------
// Text

export const clipMiddle = (s: string, max: number): string => {
  if (s.length <= max) return s;
  const mark = "\n[…]\n";
  if (max <= mark.length + 1) return prefix(s, max);
  const room = max - mark.length;
  const head = Math.floor((room * 7) / 10);
  return prefix(s, head) + mark + suffix(s, room - head);
};
// Cuts never split a surrogate pair.
const prefix = (s: string, max: number) => (/[\ud800-\udbff]/.test(s.charAt(max - 1)) ? s.slice(0, max - 1) : s.slice(0, max));
export const suffix = (s: string, max: number) =>
  max === 0 ? "" : /[\udc00-\udfff]/.test(s.charAt(s.length - max)) ? s.slice(s.length - max + 1) : s.slice(s.length - max);

function shortCount(n: number): string {
  if (n < 1000) return String(n);
  const tenthsK = Math.floor((n + 50) / 100);
  if (tenthsK < 10_000) return `${Math.floor(tenthsK / 10)}.${tenthsK % 10}k`;
  const tenthsM = Math.floor((n + 50_000) / 100_000);
  return `${Math.floor(tenthsM / 10)}.${tenthsM % 10}M`;
}

function oneLine(s: string, max: number): string {
  const first = s.replace(/[\n\r]/g, " ").trimStart();
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
  return `${prefix(trimmed, max - 1).trimEnd()}…`;
}

export function toolLabel(tool: string, args: Record<string, unknown>): string {
  const name = oneLine(tool, 40);
  const arg = (k: string) => (typeof args?.[k] === "string" && (args[k] as string).trim() !== "" ? (args[k] as string) : undefined);
  const ticked = (s: string) => `\`${oneLine(s.replaceAll("`", "'"), 80)}\``;
  let detail: string | undefined;
  const offset = args?.offset;
  if (tool === "bash") detail = arg("command") && ticked(arg("command") as string);
  else if (tool === "read") {
    const p = arg("path");
    if (p) detail = typeof offset === "number" && offset > 1 && Number.isFinite(offset) ? `${ticked(p)} from line ${Math.floor(offset)}` : ticked(p);
  } else if (tool === "grep" || tool === "find") {
    const p = arg("pattern");
    if (p) detail = arg("path") ? `${ticked(p)} in ${ticked(arg("path") as string)}` : ticked(p);
  } else {
    const k = ["command", "path", "file_path", "pattern", "query", "url", "name"].find((k) => arg(k));
    if (k) detail = ticked(arg(k) as string);
  }
  if (detail) return name ? `${name} ${detail}` : detail;
  return name || "a tool";
}

// ---------------------------------------------------------------------------
// The run and its large outputs (run.rs)

export const blocksText = (blocks: unknown) =>
  Array.isArray(blocks)
    ? blocks
        .filter((b) => b?.type === "text")
        .map((b) => (typeof b.text === "string" ? b.text : ""))
        .join("\n")
    : "";
const contentText = (content: unknown) => {
  const text = typeof content === "string" ? content : blocksText(content);
  return text.trim() === "" && Array.isArray(content) && content.some((b) => b?.type === "image") ? IMAGE_ONLY : text;
};
const hasToolCalls = (m: Message) => m?.role === "assistant" && Array.isArray(m.content) && m.content.some((b: Message) => b?.type === "toolCall");

export interface Run {
  promptIndex: number;
  question: string;
  answer: string;
  notes: string;
  earlier?: LargeOutputState["earlier_conversation"];
  calls: Map<string, { name: string; arguments: unknown }>;
}

export function findRun(entries: readonly ProjectedEntry[], settings: GuardSettings): Run | undefined {
  const flat: { index: number; m: Message }[] = [];
  entries.forEach((e, index) => {
    for (const m of e.messages) flat.push({ index, m });
  });
  const steering = (at: number) => {
    for (let i = at - 1; i >= 0; i--) {
      const m = flat[i].m;
      if (m?.role === "custom") continue;
      return m?.role === "toolResult" || hasToolCalls(m);
    }
    return false;
  };
  let start = -1;
  for (let i = flat.length - 1; i >= 0; i--) {
    if (flat[i].m?.role === "user" && !steering(i)) {
      start = i;
      break;
    }
  }
  if (start < 0) return undefined;
  let question = contentText(flat[start].m.content);
  const texts: string[] = [];
  const calls = new Map<string, { name: string; arguments: unknown }>();
  for (const { m } of flat.slice(start + 1)) {
    if (m?.role === "user") question += `\n\n${STEERING_PREFIX} ${contentText(m.content)}`;
    if (m?.role === "assistant") {
      const text = blocksText(m.content);
      if (text.trim() !== "") texts.push(text);
      for (const b of m.content ?? []) if (b?.type === "toolCall") calls.set(b.id ?? "", { name: b.name ?? "", arguments: b.arguments ?? null });
    }
  }
  const answer = texts.pop() ?? "";
  const run: Run = { promptIndex: flat[start].index, question, answer, notes: texts.join("\n\n"), calls };
  if (settings.historyExchanges > 0) {
    const before = flat.slice(0, start).map((f) => f.m);
    const earlier: NonNullable<LargeOutputState["earlier_conversation"]> = {};
    const summary = before.findLast((m) => m?.role === "compactionSummary" || m?.role === "branchSummary")?.summary;
    if (typeof summary === "string" && summary.trim() !== "") earlier.summary = clipMiddle(summary, 2000);
    const starts = before.flatMap((m, i) => (m?.role === "user" ? [i] : []));
    const firstKept = Math.max(0, starts.length - settings.historyExchanges);
    const exchanges = starts.slice(firstKept).map((s, k) => {
      const end = starts[firstKept + k + 1] ?? before.length;
      const reply = before
        .slice(s + 1, end)
        .reverse()
        .map((m) => (m?.role === "assistant" ? blocksText(m.content) : ""))
        .find((t) => t.trim() !== "");
      return { user: clipMiddle(contentText(before[s].content), 800), assistant: clipMiddle(reply ?? "", 1200) };
    });
    if (firstKept > 0) {
      const first = contentText(before[starts[0]].content);
      if (first.trim() !== "") earlier.first_request = clipMiddle(first, 1000);
    }
    if (exchanges.length > 0) earlier.recent_exchanges = exchanges;
    if (Object.keys(earlier).length > 0) run.earlier = earlier;
  }
  return run;
}

export interface Output {
  entryId: string;
  tool: string;
  arguments: unknown;
  text: string;
  isError: boolean;
}

export function largeOutputs(entries: readonly ProjectedEntry[], run: Run, s: GuardSettings): Output[] {
  const out: Output[] = [];
  for (const e of entries.slice(run.promptIndex + 1)) {
    const m = e.messages[0] as Message;
    if (e.messages.length !== 1 || m?.role !== "toolResult") continue;
    if (!(m.content ?? []).every((b: Message) => b?.type === "text")) continue;
    if (m.isError && !s.distillErrors) continue;
    const call = run.calls.get(m.toolCallId ?? "");
    const tool = call?.name ?? m.toolName ?? "";
    if (s.excludeTools.includes(tool) || s.excludeTools.includes(m.toolName)) continue;
    const text = blocksText(m.content);
    if (text.startsWith(MARK) || text.length < s.minResultChars) continue;
    const raw = e.sourceEntry.message as Message;
    if (raw !== m && !(raw?.role === "toolResult" && (raw.content ?? []).every((b: Message) => b?.type === "text") && blocksText(raw.content) === text))
      continue;
    out.push({ entryId: e.sourceEntry.id, tool, arguments: call?.arguments ?? null, text, isError: m.isError === true });
  }
  return out.reduce((n, o) => n + o.text.length, 0) < s.minRunChars ? [] : out;
}

// ---------------------------------------------------------------------------
// Chunking (docs/GUARD.md "What it judges")

interface Line {
  start: number;
  text: string;
  /** Characters, its newline included. */
  chars: number;
  blank: boolean;
  separator: boolean;
}

export interface Chunk {
  start: number;
  end: number;
  firstLine: number;
  lines: number;
  files: string[];
}

const MATCH = /^(.*?):(\d+):/;

function plausiblePath(p: string): boolean {
  return p.length > 0 && p.length <= 1024 && !/[\x00-\x20\x7f]/.test(p) && !/^\d+$/.test(p);
}

function chunkOutput(text: string): { grep: boolean; chunks: Chunk[] } {
  const lines: Line[] = [];
  let pos = 0;
  while (pos < text.length) {
    let end = text.indexOf("\n", pos);
    const next = end < 0 ? text.length : end + 1;
    if (end < 0) end = text.length;
    const body = text.slice(pos, end);
    const blank = body.trim() === "";
    lines.push({ start: pos, text: body, chars: next - pos, blank, separator: !blank && body.trim() === "--" });
    pos = next;
  }
  const total = lines.reduce((n, l) => n + l.chars, 0);
  let target = Math.max(800, Math.ceil(total / 120));
  if (total <= 480_000) target = Math.min(target, 4000);

  const chunk = (first: number, end: number, files: string[]): Chunk => ({
    start: lines[first].start,
    end: end < lines.length ? lines[end].start : text.length,
    firstLine: first,
    lines: end - first,
    files,
  });
  const windows = (first: number, end: number, files: string[]): Chunk[] => {
    const out: Chunk[] = [];
    let winFirst = first;
    let winChars = 0;
    let lastBlank: { at: number; through: number } | undefined;
    for (let i = first; i < end; i++) {
      const line = lines[i];
      if (line.chars > target) {
        if (i > winFirst) out.push(chunk(winFirst, i, files));
        out.push(chunk(i, i + 1, files));
        winFirst = i + 1;
        winChars = 0;
        lastBlank = undefined;
        continue;
      }
      if (winChars > 0 && winChars + line.chars > target) {
        if (lastBlank && lastBlank.through * 10 >= target * 6) {
          out.push(chunk(winFirst, lastBlank.at + 1, files));
          winFirst = lastBlank.at + 1;
          winChars -= lastBlank.through;
        } else {
          out.push(chunk(winFirst, i, files));
          winFirst = i;
          winChars = 0;
        }
        lastBlank = undefined;
      }
      winChars += line.chars;
      if (line.blank) lastBlank = { at: i, through: winChars };
    }
    if (winFirst < end) out.push(chunk(winFirst, end, files));
    return out;
  };

  // grep-style: the file of each line, from the names seen in `path:line:` lines.
  const matchNames = lines.map((l) => {
    if (l.blank || l.separator) return undefined;
    const m = MATCH.exec(l.text);
    return m && plausiblePath(m[1]) ? m[1] : undefined;
  });
  const counts = new Map<string, number>();
  for (const n of matchNames) if (n !== undefined) counts.set(n, (counts.get(n) ?? 0) + 1);
  const longest = Math.max(0, ...[...counts.keys()].map((n) => n.length));
  // The longest known name that a `name-12-` context line starts with.
  const contextName = (line: string): string | undefined => {
    let found: string | undefined;
    for (const m of line.matchAll(/-(?=\d+-)/g)) {
      if (m.index > longest) break;
      const name = line.slice(0, m.index);
      if (counts.has(name)) found = name;
    }
    return found;
  };
  const files: (string | undefined)[] = [];
  let nonempty = 0;
  let greppy = 0;
  lines.forEach((l, i) => {
    if (l.blank || l.separator) return files.push(undefined);
    nonempty++;
    const match = matchNames[i];
    const context = contextName(l.text);
    let file: string | undefined;
    if (match !== undefined && (counts.get(match) ?? 0) >= 2 && (context === undefined || context.length < match.length)) file = match;
    else if (context !== undefined && match !== undefined && match.length > context.length && (counts.get(match) ?? 0) >= 2) file = match;
    else file = context ?? match;
    if (file !== undefined) greppy++;
    files.push(file);
  });
  if (counts.size === 0 || nonempty < 3 || greppy * 10 < nonempty * 6) return { grep: false, chunks: windows(0, lines.length, []) };

  const groups: { first: number; end: number; file: string | undefined; chars: number }[] = [];
  lines.forEach((line, i) => {
    const g = groups.at(-1);
    const file = files[i];
    if (g && (file === undefined || g.file === file)) {
      g.end = i + 1;
      g.chars += line.chars;
    } else if (g && g.file === undefined) {
      g.file = file;
      g.end = i + 1;
      g.chars += line.chars;
    } else groups.push({ first: i, end: i + 1, file, chars: line.chars });
  });
  const chunks: Chunk[] = [];
  let pending: { first: number; end: number; chars: number; files: string[] } | undefined;
  const flush = () => {
    if (pending) chunks.push(chunk(pending.first, pending.end, pending.files));
    pending = undefined;
  };
  for (const g of groups) {
    const named = g.file === undefined ? [] : [g.file];
    if (g.chars < Math.floor(target / 4)) {
      if (pending && pending.chars + g.chars <= Math.floor(target / 2)) {
        pending.end = g.end;
        pending.chars += g.chars;
        pending.files.push(...named);
      } else {
        flush();
        pending = { first: g.first, end: g.end, chars: g.chars, files: [...named] };
      }
      continue;
    }
    flush();
    if (g.chars * 2 > target * 3) chunks.push(...windows(g.first, g.end, named));
    else chunks.push(chunk(g.first, g.end, named));
  }
  flush();
  return { grep: true, chunks };
}

// ---------------------------------------------------------------------------
// Requests (decide/request.rs)

const SITUATION =
  "A coding agent has answered the user's question. Below is one tool output from its work, split into numbered chunks. Only the chunks that are kept stay visible to the agent; the others are replaced by a short note.";
const SITUATION_HISTORY = " earlier_conversation shows the session so far, and the agent will likely continue it.";
const TOOL_FAILED = "The call failed. Its details are usually no longer needed once the final answer shows the agent got past it.";
const KEEP_WHOLE = "Is all of this tool output still needed for the final answer or for a likely follow-up question?";
const KEEP_WHOLE_HISTORY =
  "Is all of this tool output still needed for the final answer, for a likely follow-up question, or for the user's ongoing task in earlier_conversation?";
const FOCUS =
  "Which part of this tool output does the final answer draw on? whole = most of the output is needed; none = nothing in it is needed; chunk_N = a few chunks are needed, chunk_N is the most important.";

export const chunkText = (text: string, c: Chunk) => text.slice(c.start, c.end).replace(/\n$/, "");

/** The `focus` choice over a segment's chunk keys (the criteria are the same at run end and mid-run). */
export function focusQuestion(instructions: string, keys: string[]): GuardClassifierQuestion {
  return {
    type: "choice",
    instructions,
    criteria: Object.fromEntries([
      ["whole", "Most of the output is needed"],
      ["none", "Nothing in the output is needed"],
      ...keys.map((k) => [k, `A few chunks are needed; ${k} is the most important`]),
    ]),
  };
}

function largeRequest(run: Run, o: Output, lines: number, part: number, parts: number, firstNumber: number, texts: string[]): GuardClassifierContext {
  const history = run.earlier !== undefined;
  const size = lines === 1 ? "1 line" : `${lines} lines`;
  const state: LargeOutputState = { situation: history ? SITUATION + SITUATION_HISTORY : SITUATION } as LargeOutputState;
  if (run.earlier) state.earlier_conversation = run.earlier;
  state.user_question = clipMiddle(run.question, 4000);
  state.final_answer = clipMiddle(run.answer, 6000);
  if (run.notes.trim() !== "") state.agent_notes_during_the_run = clipMiddle(run.notes.trim(), 2000);
  state.tool = o.tool;
  state.tool_arguments = clipMiddle(o.arguments === null ? "{}" : JSON.stringify(o.arguments), 600);
  if (o.isError) state.tool_status = TOOL_FAILED;
  state.output_size = parts > 1 ? `${size}, part ${part} of ${parts}` : size;
  state.chunks = {};
  const keys = texts.map((_, i) => `chunk_${firstNumber + i}`);
  keys.forEach((k, i) => {
    state.chunks[k] = texts[i];
  });
  const questions: Record<string, GuardClassifierQuestion> = {
    keep_whole: {
      type: "bool",
      instructions: history ? KEEP_WHOLE_HISTORY : KEEP_WHOLE,
      criteria: { true: "All of the output is still needed", false: "Only some chunks, or none, are needed" },
    },
    focus: focusQuestion(FOCUS, keys),
  };
  for (const k of keys) {
    const more = history ? ", or that the user's ongoing task in earlier_conversation will need, even if the current question is about something else" : "";
    questions[k] = {
      type: "bool",
      instructions: `Does ${k} hold lines the final answer relies on, or that a likely follow-up question would need${more}?`,
      criteria: { true: `${k} is needed`, false: `${k} is not needed` },
    };
  }
  return { state, questions };
}

// ---------------------------------------------------------------------------
// The pass

export interface PlannedOutput extends Output {
  label: string;
  grep: boolean;
  lines: number;
  chunks: Chunk[];
  /** Per segment: its first chunk, count, and request (undefined: oversize, never sent). */
  segments: { first: number; count: number; request: number | undefined }[];
}

export interface ReferenceState {
  /** The record's phase (a run-end pass unless a checkpoint says otherwise). */
  phase?: "run-end" | "mid-run";
  settings: GuardSettings;
  answer: string;
  outputs: PlannedOutput[];
  requests: number;
  /** A checkpoint's break-even decision (cache.rs `BreakEven`), carried into its record. */
  breakEven?: BreakEvenDecision[];
}

export function planPass(entries: readonly ProjectedEntry[], settings: GuardSettings): { requests: GuardClassifierContext[]; state: ReferenceState } {
  const requests: GuardClassifierContext[] = [];
  const run = settings.enabled ? findRun(entries, settings) : undefined;
  if (!run) return { requests, state: { settings, answer: "", outputs: [], requests: 0 } };
  const outputs = largeOutputs(entries, run, settings).map((o) =>
    planOutput(o, settings, requests, (lines, part, parts, first, texts) => largeRequest(run, o, lines, part, parts, first, texts)),
  );
  // Every request to the judge passes the secrets step (issue 18), as in the core.
  withholdRequests(requests);
  return { requests, state: { settings, answer: run.answer, outputs, requests: requests.length } };
}

/**
 * An output as it arrives (the core's `scanned.rs`): its chunks' texts withheld now, into `arrived`, so the
 * checkpoint that sends them looks them up instead of scanning them.
 */
export function arrive(text: string, arrived: Map<string, string>): void {
  for (const c of chunkOutput(text).chunks) {
    const t = chunkText(text, c);
    if (!arrived.has(t)) arrived.set(t, withholdSecrets(t).text);
  }
}

/**
 * One large output cut into chunks and segments, with one request per
 * sendable segment (built by `request`) pushed onto `requests`.
 */
export function planOutput(
  o: Output,
  settings: GuardSettings,
  requests: GuardClassifierContext[],
  request: (lines: number, part: number, parts: number, firstNumber: number, texts: string[]) => GuardClassifierContext,
): PlannedOutput {
  const { grep, chunks } = chunkOutput(o.text);
  const chars = chunks.map((c) => c.end - c.start);
  const segments: PlannedOutput["segments"] = [];
  let cur: { first: number; count: number; chars: number } | undefined;
  chars.forEach((n, i) => {
    if (n > settings.maxSegmentChars) {
      if (cur) segments.push({ ...cur, request: 0 });
      segments.push({ first: i, count: 1, request: undefined });
      cur = undefined;
      return;
    }
    if (cur && (cur.chars + n > settings.maxSegmentChars || cur.count >= Math.max(1, settings.maxChunksPerSegment))) {
      segments.push({ ...cur, request: 0 });
      cur = undefined;
    }
    cur ??= { first: i, count: 0, chars: 0 };
    cur.count++;
    cur.chars += n;
  });
  if (cur) segments.push({ ...cur, request: 0 });
  const lines = chunks.reduce((n, c) => n + c.lines, 0);
  const parts = segments.filter((g) => g.request !== undefined).length;
  let part = 0;
  for (const g of segments) {
    if (g.request === undefined) continue;
    const texts = chunks.slice(g.first, g.first + g.count).map((c) => chunkText(o.text, c));
    requests.push(request(lines, ++part, parts, g.first + 1, texts));
    g.request = requests.length - 1;
  }
  return { ...o, label: toolLabel(o.tool, o.arguments as Record<string, unknown>), grep, lines, chunks, segments };
}

const traceP = (p: number) => {
  const r = Math.round(p * 100);
  return r >= 100 ? "1" : r <= 0 || !Number.isFinite(r) ? "0" : `.${String(r).padStart(2, "0")}`;
};
const probability = (v: unknown) => (typeof v === "number" && Number.isFinite(v) && v >= 0 && v <= 1 ? v : undefined);

/** One segment's keep flags, reason and trace (the checks of the core's decide/verdict.rs, in its order). */
function interpret(outcome: PassAnswers["outcomes"][number] | undefined, timedOut: boolean, first: number, count: number, s: GuardSettings) {
  const all = (reason: string, trace: string) => ({ keep: new Array<boolean>(count).fill(true), reason, trace });
  if (!outcome) return timedOut ? all("timeout", "timeout") : all("error", "error");
  if (outcome.status === "timeout") return all("timeout", "timeout");
  if (outcome.status !== "answered") return all("error", "error");
  const answers = outcome.answers as Record<string, Record<string, unknown> | undefined>;
  const keys = Array.from({ length: count }, (_, i) => `chunk_${first + i}`);
  const kw = answers.keep_whole && "probability" in answers.keep_whole ? probability(answers.keep_whole.probability) : undefined;
  if (kw === undefined) return all("no-answer", "no-answer (keep_whole)");
  const f = answers.focus;
  const choice = typeof f?.choice === "string" ? f.choice : undefined;
  const probabilities = (f?.probabilities ?? {}) as Record<string, unknown>;
  if (choice === undefined || Object.values(probabilities).some((p) => probability(p) === undefined)) return all("no-answer", "no-answer (focus)");
  const confidence = f?.confidence === undefined || f.confidence === null ? probability(probabilities[choice]) : probability(f.confidence);
  if (confidence === undefined || (choice !== "whole" && choice !== "none" && !keys.includes(choice))) return all("no-answer", "no-answer (focus)");
  const pFocus = probability(probabilities[choice]) ?? confidence;
  const chunkP: number[] = [];
  for (const k of keys) {
    const p = answers[k] && "probability" in answers[k] ? probability(answers[k].probability) : undefined;
    if (p === undefined) return all("no-answer", `no-answer (${k})`);
    chunkP.push(p);
  }
  const head = `kw${traceP(kw)} focus=${choice}:${traceP(pFocus)}`;
  const done = (keep: boolean[], reason: string) => ({ keep, reason, trace: `${head} keep ${keep.filter(Boolean).length}/${count}` });
  if (kw >= s.keepWholeThreshold) return done(new Array(count).fill(true), "whole-needed");
  if (choice === "whole" && pFocus >= s.focusWholeThreshold) return done(new Array(count).fill(true), "whole-chosen");
  const keep = chunkP.map((p) => p >= s.chunkKeepThreshold);
  if (keys.includes(choice)) keep[keys.indexOf(choice)] = true;
  if (keep.some(Boolean)) return done(keep, "chunks");
  if (choice === "none" && pFocus >= s.noneThreshold) return done(keep, "none-needed");
  if (choice === "whole") return done(new Array(count).fill(true), "weak-whole");
  let top = -1;
  keys.forEach((k, i) => {
    const p = probability(probabilities[k]);
    if (p !== undefined && (top < 0 || p > (probability(probabilities[keys[top]]) ?? 0))) top = i;
  });
  if (top < 0) return done(new Array(count).fill(true), "weak-none");
  keep[top] = true;
  return done(keep, "top-focus");
}

function omission(run: Chunk[], numbering: "grep" | "output" | { file: number }): string {
  const lines = run.reduce((n, c) => n + c.lines, 0);
  const first = run[0].firstLine;
  const last = first + lines - 1;
  const span = (what: string, base: number) =>
    first === last ? `[… ${what} line ${first + base} omitted]` : `[… ${what} lines ${first + base}-${last + base} omitted]`;
  if (numbering === "output") return span("output", 1);
  if (numbering !== "grep") return span("file", numbering.file);
  const files = [...new Set(run.flatMap((c) => c.files))];
  const count = `${lines} ${lines === 1 ? "line" : "lines"}`;
  if (files.length === 0) return `[… ${count} omitted]`;
  const named = files
    .slice(0, 5)
    .map((f) => oneLine(f, 120))
    .join(", ");
  return `[… ${count} omitted from ${files.length > 5 ? `${named} and ${files.length - 5} more` : named}]`;
}

export function finishPass(state: ReferenceState, answers: PassAnswers) {
  const s = state.settings;
  const entries: (ContextEditDraft | GuardRecordDraft)[] = [];
  const results: GuardResult[] = [];
  let saved = 0;
  for (const o of state.outputs) {
    const keep = new Array<boolean>(o.chunks.length).fill(true);
    const reasons: string[] = [];
    const traces: string[] = [];
    for (const g of o.segments) {
      const v =
        g.request === undefined
          ? { keep: new Array<boolean>(g.count).fill(true), reason: "oversize", trace: "oversize" }
          : interpret(answers.outcomes[g.request], answers.timedOut, g.first + 1, g.count, s);
      v.keep.forEach((k, i) => {
        keep[g.first + i] = k;
      });
      if (!reasons.includes(v.reason)) reasons.push(v.reason);
      traces.push(v.trace);
    }
    const chars = o.text.length;
    const keptChars = o.chunks.reduce((n, c, i) => (keep[i] ? n + c.end - c.start : n), 0);
    let replacement: string | undefined;
    let reason = reasons.join(",");
    if (!keep.every(Boolean)) {
      // keepCitedFiles is off in the benchmark's settings (the default).
      if (keptChars > s.maxKeepRatio * chars) reason = "not-worth";
      else {
        const keptLines = o.chunks.reduce((n, c, i) => (keep[i] ? n + c.lines : n), 0);
        const recall = `recall({"entryId":${JSON.stringify(o.entryId)}})`;
        const lines = `${o.lines} ${o.lines === 1 ? "line" : "lines"}`;
        if (keptLines === 0 && keptChars === 0) {
          replacement = `${MARK} Removed the output of ${o.label}: ${lines} (${shortCount(chars)} chars) judged not needed for the answer. Full output: ${recall}.`;
        } else {
          const parts = [
            `${MARK} Distilled the output of ${o.label}: kept ${keptLines} of ${lines} (${shortCount(keptChars)} of ${shortCount(chars)} chars); the rest was judged not needed for the answer. Full output: ${recall}.`,
          ];
          const numbering = o.grep ? "grep" : o.tool === "read" ? { file: fileOffset(o.arguments) } : "output";
          let removed: Chunk[] = [];
          o.chunks.forEach((c, i) => {
            if (keep[i]) {
              if (removed.length) parts.push(omission(removed, numbering));
              removed = [];
              parts.push(chunkText(o.text, c));
            } else removed.push(c);
          });
          if (removed.length) parts.push(omission(removed, numbering));
          replacement = parts.join("\n");
        }
        if (replacement.length >= chars) {
          replacement = undefined;
          reason = "not-worth";
        }
      }
    }
    const after = replacement?.length ?? chars;
    if (replacement !== undefined) {
      saved += chars - after;
      entries.push({ type: "context_edit", targetId: o.entryId, replacement: { content: [{ type: "text", text: replacement }] } });
    }
    results.push({
      kind: "large",
      entryId: o.entryId,
      tool: o.tool,
      label: o.label,
      outcome: replacement === undefined ? "kept" : keep.some(Boolean) ? "distilled" : "removed",
      reason,
      beforeChars: chars,
      afterChars: after,
      jev: traces.join(" | "),
    });
  }
  const usage = answers.outcomes.slice(0, state.requests).map((o) => (o.status === "answered" ? [o.inputTokens, o.costUsd] : [0, 0]));
  const clean = (x: number) => (Number.isFinite(x) && x > 0 ? x : 0);
  const record: GuardRecord | null =
    state.requests > 0
      ? {
          v: 1,
          phase: state.phase ?? "run-end",
          model: s.model,
          savedChars: saved,
          requests: state.requests,
          inputTokens: usage.reduce((n, u) => n + clean(u[0]), 0),
          costUsd: usage.reduce((n, u) => n + clean(u[1]), 0),
          ms: clean(answers.ms),
          timedOut: answers.timedOut || answers.outcomes.slice(0, state.requests).some((o) => o.status === "timeout"),
          results,
          ...(state.breakEven?.length ? { breakEven: state.breakEven } : {}),
        }
      : null;
  if (record) entries.push({ type: "custom", customType: "context-guard", data: record });
  return { entries, record, savedChars: saved, breakEven: state.breakEven ?? [] };
}

function fileOffset(args: unknown): number {
  const o = (args as { offset?: unknown })?.offset;
  return typeof o === "number" && Number.isFinite(o) && o >= 1 ? Math.floor(o) : 1;
}
