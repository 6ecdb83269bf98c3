// A straightforward TypeScript version of one mid-run checkpoint (docs/GUARD.md
// "Mid-run checkpoints") for large outputs, written plainly for the benchmark:
// the same steps as the Rust core (crates/guard/src/checkpoint/, with
// pass/plan.rs's `plan_items`, cache.rs's rewrite measure, items.rs's
// `superseded_by`, decide/request.rs's checkpoint wording, then pass/finish.rs)
// from the same projected entries, so the two can be timed against each other
// and checked to agree. The chunking, segments, replacements and the record
// come from the run-end pass's reference (pass.ts). Small outputs and old
// exchanges are left out: the benchmark's run has none a checkpoint may judge
// (its other outputs are `edit` results, excluded tools), so they cost the core
// nothing either. Not used by the extension.
import type { ProjectedEntry } from "../../../extension/guard/collect.ts";
import type {
  BreakEvenDecision,
  GuardClassifierContext,
  GuardClassifierQuestion,
  GuardSettings,
  LargeOutputState,
  PassAnswers,
} from "../../../extension/guard/types.ts";
import { withholdRequests } from "./secrets.ts";
import {
  clipMiddle,
  findRun,
  finishPass,
  focusQuestion,
  largeOutputs,
  type Output,
  planOutput,
  type ReferenceState,
  type Run,
  suffix,
  toolLabel,
} from "./pass.ts";

// Pi's messages, read loosely as the core reads them
type Message = any;

const RECALL_TOOL = "recall";
const LATER_CALLS_MAX = 30;
const LATER_CALLS_KEPT = 15;

const SITUATION =
  "A coding agent is still working on the user's question. Below is the output of one of its earlier tool calls, split into numbered chunks. Only the chunks that are kept stay visible to the agent; the others are replaced by a short note (the agent can recall them).";
const SITUATION_HISTORY = " earlier_conversation shows the session so far, and the agent will likely continue it.";
const TOOL_FAILED = "The call failed. Its details are usually no longer needed once the agent got past it.";
const KEEP_WHOLE =
  "To finish user_question, will the agent still need all of this tool output? Lines that are out of date or that the agent has already acted on and moved past are not needed.";
const FOCUS =
  "Which part of this tool output will the agent still need to finish user_question? whole = most of the output is needed; none = nothing in it is needed; chunk_N = a few chunks are needed, chunk_N is the most important.";

/** The main model as far as its prompt cache matters (cache.rs). */
export interface MainModel {
  provider: string;
  api: string;
}

/** What the gates measured (checkpoint/mod.rs `Gate`, the parts a large-output run has). */
export interface ReferenceGate {
  outputs: number;
  pendingChars: number;
  batchChars: number;
  turns: number;
  factor: number;
  rewriteChars: number;
}

/** Characters of one message as the guard's size model counts them (size.rs, text and tool calls). */
function messageChars(m: Message): number {
  if (typeof m?.content === "string") return m.content.length;
  if (!Array.isArray(m?.content)) return typeof m?.summary === "string" ? m.summary.length : 0;
  let n = 0;
  for (const b of m.content) {
    if (b?.type === "text") n += typeof b.text === "string" ? b.text.length : 0;
    else if (b?.type === "toolCall") n += String(b.name ?? "").length + JSON.stringify(b.arguments ?? null).length;
    else if (b?.type === "thinking") n += String(b.thinking ?? "").length + Math.ceil(String(b.thinkingSignature ?? b.signature ?? "").length / 2);
  }
  return n;
}

const normalizedCommand = (c: string) => {
  const words = c.split(/\s+/).filter(Boolean);
  if (words.at(-1) === "2>&1") words.pop();
  return words.join(" ");
};
const pathOf = (a: Message) => (typeof a?.path === "string" ? a.path : typeof a?.file_path === "string" ? a.file_path : undefined);

/** Why a later call outdated this output (its file edited or read again, the same call again), or undefined. */
function supersededBy(tool: string, args: Message, later: { name: string; arguments: Message }[]): string | undefined {
  for (const { name, arguments: a } of later) {
    if (tool === "read") {
      const path = pathOf(args);
      if (path === undefined) return undefined;
      if ((name === "edit" || name === "write") && pathOf(a) === path) return "the file was changed later in the run";
      if (
        name === "read" &&
        pathOf(a) === path &&
        JSON.stringify(a?.offset) === JSON.stringify(args?.offset) &&
        JSON.stringify(a?.limit) === JSON.stringify(args?.limit)
      ) {
        return "the same file was read again later in the run";
      }
    } else if (tool === "bash") {
      if (typeof args?.command !== "string") return undefined;
      if (name === "bash" && typeof a?.command === "string" && normalizedCommand(a.command) === normalizedCommand(args.command)) {
        return "the same command was run again later in the run";
      }
    } else if (name === tool && JSON.stringify(a) === JSON.stringify(args)) {
      return "the same call was made again later in the run";
    }
  }
  return undefined;
}

function laterToolCalls(labels: string[]): string[] {
  if (labels.length <= LATER_CALLS_MAX) return labels;
  return [...labels.slice(0, LATER_CALLS_KEPT), `[… ${labels.length - 2 * LATER_CALLS_KEPT} more calls …]`, ...labels.slice(-LATER_CALLS_KEPT)];
}

function checkpointRequest(
  run: Run,
  o: Output,
  lines: number,
  part: number,
  parts: number,
  firstNumber: number,
  texts: string[],
  later: string[],
  superseded: string | undefined,
): GuardClassifierContext {
  const size = lines === 1 ? "1 line" : `${lines} lines`;
  const state = { situation: run.earlier ? SITUATION + SITUATION_HISTORY : SITUATION } as LargeOutputState & Record<string, unknown>;
  if (run.earlier) state.earlier_conversation = run.earlier;
  state.user_question = clipMiddle(run.question, 4000);
  const notes = run.notes.trim();
  state.agent_progress = {
    latest_note: clipMiddle(run.answer.trim(), 2000),
    ...(notes !== "" ? { earlier_notes: notes.length <= 2000 ? notes : suffix(notes, 2000) } : {}),
  };
  state.later_tool_calls = laterToolCalls(later);
  if (superseded !== undefined) state.superseded = superseded;
  state.tool = o.tool;
  state.tool_arguments = clipMiddle(o.arguments === null ? "{}" : JSON.stringify(o.arguments), 600);
  if (o.isError) state.tool_status = TOOL_FAILED;
  state.output_size = parts > 1 ? `${size}, part ${part} of ${parts}` : size;
  const keys = texts.map((_, i) => `chunk_${firstNumber + i}`);
  state.chunks = Object.fromEntries(keys.map((k, i) => [k, texts[i]]));
  const questions: Record<string, GuardClassifierQuestion> = {
    keep_whole: {
      type: "bool",
      instructions: KEEP_WHOLE,
      criteria: { true: "All of the output is still needed", false: "Only some chunks, or none, are needed" },
    },
    focus: focusQuestion(FOCUS, keys),
  };
  for (const k of keys) {
    questions[k] = {
      type: "bool",
      instructions: `To finish user_question, will the agent still need the lines in ${k}? Lines that are out of date or that the agent has already acted on and moved past are not needed.`,
      criteria: { true: `${k} is still needed`, false: `${k} is not needed` },
    };
  }
  return { state, questions };
}

/**
 * The checkpoint's first step: the run's large outputs old enough and not
 * judged mid-run before (`judged`: entry ids from earlier mid-run records),
 * the batch and the break-even, then one request per segment with the
 * checkpoint's wording. `gate` is undefined when the checkpoint is skipped.
 */
export function planCheckpoint(
  entries: readonly ProjectedEntry[],
  settings: GuardSettings,
  model: MainModel,
  judged: ReadonlySet<string> = new Set(),
  arrived?: ReadonlyMap<string, string>,
): { requests: GuardClassifierContext[]; state: ReferenceState; gate: ReferenceGate | undefined } {
  const requests: GuardClassifierContext[] = [];
  const none = { requests, state: { phase: "mid-run" as const, settings, answer: "", outputs: [], requests: 0 }, gate: undefined };
  if (!settings.enabled || !settings.midRun) return none;
  const run = findRun(entries, settings);
  if (!run) return none;

  // Turns: assistant messages of the run before each entry; an output's age
  // is the turns after the one that called it.
  const turnAt: number[] = [];
  let turns = 0;
  const calls: { index: number; name: string; arguments: Message }[] = [];
  entries.forEach((e, i) => {
    turnAt.push(turns);
    if (i < run.promptIndex) return;
    for (const m of e.messages as Message[]) {
      if (m?.role !== "assistant") continue;
      if (i > run.promptIndex) turns++;
      for (const b of m.content ?? []) if (b?.type === "toolCall") calls.push({ index: i, name: b.name ?? "", arguments: b.arguments ?? null });
    }
  });
  const indexOf = new Map(entries.map((e, i) => [e.sourceEntry.id, i]));
  const eligible = largeOutputs(entries, run, { ...settings, minRunChars: 0 }).filter((o) => {
    const i = indexOf.get(o.entryId) ?? 0;
    return o.tool !== RECALL_TOOL && !judged.has(o.entryId) && turns - turnAt[i] >= settings.midRunMinAgeTurns;
  });
  if (eligible.length === 0) return none;

  const codex = model.provider === "openai-codex" || model.api === "openai-codex-responses";
  const pendingChars = eligible.reduce((n, o) => n + o.text.length, 0);
  const gate: ReferenceGate = {
    outputs: eligible.length,
    pendingChars,
    batchChars: codex ? settings.midRunBatchCharsOpenAI : settings.midRunBatchChars,
    turns,
    factor: 0,
    rewriteChars: 0,
  };
  if (pendingChars < gate.batchChars) return none;
  const breakEven: BreakEvenDecision[] = [];
  if (settings.midRunBreakEven) {
    // Characters written again from the first edited entry on (the whole context for Codex and Anthropic).
    const first = Math.min(...eligible.map((o) => indexOf.get(o.entryId) ?? 0));
    const whole = codex || model.api === "anthropic-messages";
    let rewrite = 0;
    entries.forEach((e, i) => {
      if (whole || i >= first) for (const m of e.messages) rewrite += messageChars(m);
    });
    gate.factor = codex ? 13 : 16;
    gate.rewriteChars = rewrite;
    // The rule of guard/worth.rs as the benchmark's run meets it: no earlier pass (the prior share, 60%), no
    // earlier run (as many later requests as turns so far), no catalog price (in tokens).
    const expectedChars = Math.floor((pendingChars * 600) / 1000);
    const later = Math.max(1, turns);
    if (expectedChars * later < gate.factor * rewrite) return none;
    const cache = codex ? "openai-codex" : whole ? "anthropic" : "prefix";
    breakEven.push({
      rule: "checkpoint",
      savedChars: pendingChars,
      requests: turns,
      factor: gate.factor,
      rewriteChars: rewrite,
      minSavingChars: 0,
      cache,
      basis: whole ? "whole" : "first-edit",
      expectedChars,
      later,
      gainMicros: 0,
      costMicros: 0,
      room: false,
      paidOff: true,
    });
  }

  const outputs = eligible.map((o) => {
    const at = indexOf.get(o.entryId) ?? 0;
    const later = calls.filter((c) => c.index > at);
    const labels = later.map((c) => toolLabel(c.name, c.arguments));
    const superseded = supersededBy(o.tool, o.arguments, later);
    return planOutput(o, settings, requests, (lines, part, parts, first, texts) =>
      checkpointRequest(run, o, lines, part, parts, first, texts, labels, superseded),
    );
  });
  // The checkpoint's own threshold decides chunks; there is no answer to cite yet.
  const decided: GuardSettings = { ...settings, chunkKeepThreshold: settings.midRunChunkKeepThreshold, keepCitedFiles: false };
  // Every request to the judge passes the secrets step (issue 18), as in the core.
  withholdRequests(requests, arrived);
  return { requests, state: { phase: "mid-run", settings: decided, answer: "", outputs, requests: requests.length, breakEven }, gate };
}

/** The checkpoint's second step: the run-end pass's finish, with the checkpoint's phase and threshold. */
export function finishCheckpoint(state: ReferenceState, answers: PassAnswers) {
  return finishPass(state, answers);
}

/** Entry ids the branch's mid-run records judged with an answer (the memo, memo.rs). */
export function judgedMidRun(records: readonly { phase?: string; results?: { kind?: string; entryId?: string; reason?: string }[] }[]): Set<string> {
  const unanswered = ["timeout", "error", "aborted"];
  const out = new Set<string>();
  for (const r of records) {
    if (r.phase !== "mid-run") continue;
    for (const x of r.results ?? []) {
      if (
        (x.kind === "large" || x.kind === "small") &&
        typeof x.entryId === "string" &&
        !(x.reason ?? "").split(",").some((p) => unanswered.includes(p.trim()))
      )
        out.add(x.entryId);
    }
  }
  return out;
}
