// The guard's core calls, typed. Each crosses the wasm boundary once, as JSON
// text, and can throw on malformed input: call them through `callCore`.
//
// The run-end pass carries a megabyte of tool output, so its calls are shaped
// by size (docs/DESIGN.md, "The pass across the boundary"): long text blocks
// cross as UTF-8 bytes beside the JSON, the plan stays inside the wasm module
// (a `Pass` handle) until `finishPass` consumes it, and the requests' chunks
// come back as ranges of those texts, sliced here.
import * as wasm from "../../pkg/context_guard.js";
import { OUT_OF_LINE_CHARS } from "../core.ts"; // and instantiates the wasm module before any call
import type { StatusText } from "../generated/StatusText.ts";
import type { GuardBill, GuardStats } from "../kept.ts";
import type {
  CompactionDecision,
  CompactionInput,
  BreakEvenDecision,
  BillInput,
  CheckpointGate,
  CheckpointInput,
  GuardRecord,
  GuardSettings,
  ParsedSettings,
  SegmentFit,
  PassAnswers,
  PassInput,
  PassOutcome,
  PassSkip,
  GuardClassifierContext,
  RecallReply,
  RecallRequest,
  RecallToolInfo,
} from "./types.ts";

const utf8 = new TextEncoder();
/** A plan given no scans finds every secret itself: this one stays empty. */
const noScans = new wasm.Scans();

export interface Planned {
  requests: GuardClassifierContext[];
  /**
   * The plan, held inside the wasm module, and the texts its ranges refer to: hand it to `finishPass`,
   * which consumes it. A skipped pass has nothing to finish and is already freed; one left over is
   * freed when it is garbage-collected.
   */
  pass: PlannedPass;
  skipped: PassSkip | undefined;
  /** A checkpoint's gate figures; a run end's only when its judge was not worth calling (`runEnd`). */
  gate?: CheckpointGate;
}

export interface PlannedPass {
  readonly plan: wasm.Pass;
  readonly texts: readonly string[];
}

/** A part of a text the core sends back: a string, or `[k, start, end]`, `texts[k].slice(start, end)`. */
type Part = string | [number, number, number];
const part = (texts: readonly string[], p: Part) => (typeof p === "string" ? p : texts[p[0]].slice(p[1], p[2]));

// encodeInto needs room for 3 bytes per UTF-16 unit. The buffer is kept between passes (a fresh one
// costs more than encoding into it, tests/bench/pass.bench.ts), unless a pass needed more than this.
const KEEP_SCRATCH_BYTES = 8 << 20;
let scratch = new Uint8Array(0);

/** `message` with each long text block as `{ type: "text", textAt }`, its text pushed onto `texts`. */
function textsOutOfLine(message: unknown, texts: string[]): unknown {
  const content = (message as { content?: unknown })?.content;
  if (!Array.isArray(content) || !content.some((b) => b?.type === "text" && typeof b.text === "string" && b.text.length >= OUT_OF_LINE_CHARS)) {
    return message;
  }
  return {
    ...(message as object),
    content: content.map((b) =>
      b?.type === "text" && typeof b.text === "string" && b.text.length >= OUT_OF_LINE_CHARS ? { type: "text", textAt: texts.push(b.text) - 1 } : b,
    ),
  };
}

/**
 * What the statistics read, as columns (crates/guard-read/src/stats/columns.rs): the
 * edited messages' shape, their texts' heads joined, the records and
 * compactions six numbers each, and the images' base64, which stays here.
 */
export interface SavingsColumns {
  shape: Uint32Array;
  heads: string;
  marks: Float64Array;
  images: string[];
}

/** The status bar's text: `saved` in the success colour, `rest` dimmed, `text` both (guard-read stats/mod.rs, generated). */
export type { StatusText };

export interface SummaryInput {
  /** `/guard details`: every line; else the short first screen. */
  details?: boolean;
  enabled: boolean;
  model: string;
  modelProblem?: string;
  settingsPath: string;
  warnings: string[];
  midRun: boolean;
  midRunMinAgeTurns?: number;
  midRunMinTurns?: number;
  midRunBatchChars?: number;
  /** The money rule's switch, the room trigger and the estimator of later requests (guard/worth.rs), for the checkpoints' line. */
  midRunBreakEven?: boolean;
  midRunRoomTokens?: number;
  midRunRoomMinTokens?: number;
  laterRequests?: string;
  /** How many runs the `median` estimator has, by where they come from (guard/checkpoint.ts `earlierRunCounts`). */
  earlierRunsSession?: number;
  earlierRunsSaved?: number;
  earlierRunsNote?: string;
  /** The last checkpoint skipped since one last ran, in this process: why, and what its gates measured. */
  lastSkip?: { skipped: PassSkip; gate?: CheckpointGate };
  pruneExchanges: boolean;
  stats: GuardStats;
  records: GuardRecord[];
  coreVersion: string;
  coreLoadMs: number;
  /** The last distill-before-compacting line of this session (guard/compaction.ts). */
  beforeCompaction?: string;
  /** The judge's work in the background and what last landed or was dropped (background.ts). */
  background?: string;
  /** The cache pin's state and last placement (guard/pin.ts `describe`). */
  cachePin?: string;
  /** The last run-end pass's break-even decisions (index.ts), before the records'. */
  lastBreakEven?: BreakEvenDecision[];
}

// The heads as UTF-16 code units, written into one reused buffer: one native
// copy (`encodeInto` to UTF-8 took ~8 times as long for non-ASCII text), and
// the core compares units without decoding (stats/columns.rs).
let headBuffer = Buffer.alloc(64 * 1024);
function headUnits(heads: string): Uint8Array {
  if (headBuffer.length < heads.length * 2) headBuffer = Buffer.alloc(heads.length * 2);
  return headBuffer.subarray(0, headBuffer.write(heads, 0, "utf16le"));
}

/** Each text of a chunk's questions as the core words it: `[before, after]` around the chunk's key. */
type Template = [string, string];

/**
 * A request as the core sends it (guard/wire.rs `requests_compact`): a segment's chunk questions as their
 * wording, a state whose head (the fields before `output_size`) is an earlier request's as `head`, and
 * questions that are an earlier request's as `questionsOf`.
 */
type CoreRequest = GuardClassifierContext & {
  state: { head?: [number, number] };
  chunkQuestions?: { option: Template; instructions: Template; true: Template; false: Template };
  questionsOf?: number;
};

/** A state sent with `head: [j, n]`: the first `n` fields of request `j`'s state (sent in full), then its own. */
function withHead(base: object, n: number, own: CoreRequest["state"]): GuardClassifierContext["state"] {
  const state: Record<string, unknown> = {};
  let i = 0;
  for (const key in base) {
    if (i++ === n) break;
    state[key] = base[key as keyof typeof base];
  }
  for (const key in own) if (key !== "head") state[key] = own[key as keyof typeof own];
  return state as unknown as GuardClassifierContext["state"];
}

/**
 * The questions with a segment's chunk questions written out, for each key of its `chunks` in order:
 * the choice's options go on with `{ key: option }`, and after the other questions comes
 * `{ key: { type: "bool", instructions, criteria: { true, false } } }` (guard/classify.rs `ChunkQuestions`).
 */
function writtenOut(
  keys: string[],
  sent: GuardClassifierContext["questions"],
  t: NonNullable<CoreRequest["chunkQuestions"]>,
): GuardClassifierContext["questions"] {
  // A new object: `sent` may be another request's too. Only the choice is extended, so only it is copied.
  const questions: GuardClassifierContext["questions"] = {};
  for (const key in sent) {
    const q = sent[key];
    if (q.type !== "choice") {
      questions[key] = q;
      continue;
    }
    const criteria = { ...q.criteria };
    for (const k of keys) criteria[k] = t.option[0] + k + t.option[1];
    questions[key] = { type: "choice", instructions: q.instructions, criteria };
  }
  for (const k of keys) {
    questions[k] = {
      type: "bool",
      instructions: t.instructions[0] + k + t.instructions[1],
      criteria: { true: t.true[0] + k + t.true[1], false: t.false[0] + k + t.false[1] },
    };
  }
  return questions;
}

/** `input` in the boundary's form: its long texts out of line, as UTF-8 bytes with their lengths. */
function encodeInput(input: PassInput): { json: Uint8Array; bytes: Uint8Array; lengths: Uint32Array; texts: string[] } {
  const texts: string[] = [];
  const entries = input.entries.map((e) => ({
    ...e,
    messages: e.messages.map((m) => textsOutOfLine(m, texts)),
    raw: e.raw === undefined ? undefined : textsOutOfLine(e.raw, texts),
  }));
  const room = texts.reduce((n, t) => n + t.length * 3, 0);
  const bytes = room <= scratch.length ? scratch : new Uint8Array(room);
  if (room <= KEEP_SCRATCH_BYTES && bytes.length > scratch.length) scratch = bytes;
  const lengths = new Uint32Array(texts.length);
  let at = 0;
  texts.forEach((t, i) => {
    lengths[i] = utf8.encodeInto(t, bytes.subarray(at)).written;
    at += lengths[i];
  });
  return { json: utf8.encode(JSON.stringify({ ...input, entries })), bytes: bytes.subarray(0, at), lengths, texts };
}

/** Step one of a pass or a checkpoint over the boundary's forms: long texts out of line, chunks back as ranges. */
function planWith(
  step: (scans: wasm.Scans, input: Uint8Array, texts: Uint8Array, lengths: Uint32Array) => wasm.Pass,
  input: PassInput,
  scans: wasm.Scans = noScans,
): Planned {
  const { json, bytes, lengths, texts } = encodeInput(input);
  const plan = step(scans, json, bytes, lengths);
  let requests: GuardClassifierContext[];
  let gate: CheckpointGate | undefined;
  try {
    const sent = JSON.parse(plan.takeRequests()) as CoreRequest[];
    requests = sent.map((r) => {
      const chunks = r.state.chunks as Record<string, Part> | undefined;
      for (const key in chunks) chunks[key] = part(texts, chunks[key]);
      const state = r.state.head ? withHead(sent[r.state.head[0]].state, r.state.head[1], r.state) : r.state;
      const asked = r.questionsOf === undefined ? r : sent[r.questionsOf];
      const questions = asked.chunkQuestions ? writtenOut(Object.keys(state.chunks), asked.questions, asked.chunkQuestions) : asked.questions;
      return { state, questions };
    });
    const gateText = plan.gate;
    gate = gateText ? JSON.parse(gateText) : undefined;
  } catch (error) {
    plan.free();
    throw error;
  }
  const skipped = plan.skipped as PassSkip | undefined;
  if (skipped) plan.free();
  return { requests, pass: { plan, texts }, skipped, gate };
}

export const guardCore = {
  parseSettings: (text: string): ParsedSettings => JSON.parse(wasm.parseSettings(text)),
  setEnabled: (text: string, enabled: boolean): string => wasm.setEnabled(text, enabled),
  /** The settings file's text with `model` set; throws when it is not `provider/id` or the text not an object. */
  setModel: (text: string, model: string): string => wasm.setModel(text, model),
  /** `maxSegmentChars` clipped to what the classifier's window takes, with the warning when it was. */
  fitSegment: (settings: GuardSettings, contextWindow: number | undefined): SegmentFit => JSON.parse(wasm.fitSegment(JSON.stringify(settings), contextWindow)),
  /** A run end's plan; `scans`, the secrets of outputs found when they arrived (scans.ts), saves finding them again. */
  planPass: (input: PassInput, scans?: wasm.Scans): Planned => planWith(wasm.planPass, input, scans),
  /** A mid-run checkpoint's plan (guard/checkpoint/mod.rs), finished by `finishPass` like a pass's. */
  planCheckpoint: (input: CheckpointInput, scans?: wasm.Scans): Planned => planWith(wasm.planCheckpoint, input, scans),
  /**
   * Finds the secrets of the large tool outputs among `entries` that `scans` does not hold yet
   * (crates/guard/src/scanned.rs), under `settings`' size threshold and patterns. How many it scanned.
   */
  noteOutputs: (scans: wasm.Scans, entries: PassInput["entries"], settings: GuardSettings): number => {
    const { json, bytes, lengths } = encodeInput({ entries, settings });
    return scans.note(json, bytes, lengths);
  },
  /**
   * Checks and re-weighs a plan whose answers came after the boundary it was planned at against the context
   * now (guard/pass/land.rs), `ms` after planning at the entry `anchor`; `inRequest` when its edits go into a
   * prompt's first request.
   * The ids of the items dropped (edited or gone meanwhile).
   */
  landPass: (pass: PlannedPass, input: PassInput, anchor: string, ms: number, inRequest: boolean): string[] => {
    const { json, bytes, lengths } = encodeInput(input);
    return wasm.landPass(pass.plan, json, bytes, lengths, anchor, ms, inRequest).split("\n").filter(Boolean);
  },
  /** The pass's drafts and record from the judge's answers; the plan is freed unless `keep` (to finish again later). */
  finishPass: (pass: PlannedPass, answers: PassAnswers, keep = false): PassOutcome => {
    let text: string;
    try {
      text = wasm.finishPass(pass.plan, utf8.encode(JSON.stringify(answers)));
    } finally {
      if (!keep) pass.plan.free();
    }
    const outcome: PassOutcome = JSON.parse(text);
    for (const entry of outcome.entries) {
      if (entry.type !== "context_edit" || !entry.replacement) continue;
      for (const block of entry.replacement.content) {
        const parts = block.text as string | Part[];
        if (Array.isArray(parts)) block.text = parts.map((p) => part(pass.texts, p)).join("");
      }
    }
    return outcome;
  },
  /** The judge's system prompt (guard/judge.rs `SYSTEM`). */
  judgeSystemPrompt: (): string => wasm.judgeSystemPrompt(),
  /**
   * The judge's user message for one request (guard/judge.rs `prompt`): the state as `JSON.stringify` writes it
   * (in its order) and the questions as ordered lists, since the core reads JSON objects into sorted maps.
   */
  judgePrompt: (request: GuardClassifierContext): string =>
    wasm.judgePrompt(
      JSON.stringify(request.state),
      JSON.stringify(Object.entries(request.questions).map(([id, q]) => [id, q.type, q.instructions, Object.entries(q.criteria)])),
    ),
  recall: (request: RecallRequest): RecallReply => JSON.parse(wasm.recall(JSON.stringify(request))),
  recallToolInfo: (): RecallToolInfo => JSON.parse(wasm.recallToolInfo()),
  /** `money`: the bill's two words (`saved $0.27`) the status text puts in place of the items, or "". */
  savings: (c: SavingsColumns, money = ""): { stats: GuardStats; status: StatusText } =>
    JSON.parse(wasm.guardSavings(c.shape, headUnits(c.heads), c.marks, money, (index, chars) => c.images[index]?.slice(0, chars) ?? "")),
  summary: (input: SummaryInput): string => wasm.guardSummary(JSON.stringify(input)),
  /** The guard's net effect on the main model's bill (guard/bill.rs) from the branch's events (`guard/bill.ts`). */
  bill: (input: BillInput): GuardBill => JSON.parse(wasm.guardBill(JSON.stringify(input))),
  /**
   * Prices per token from recorded usage, the bill's rule (economics/bill.rs `usage_prices`), and the
   * rewrite's premium over a read: `[read, write, premium]`, NaN where not recorded.
   */
  usagePrices: (costRead: number, readTokens: number, costWrite: number, writeTokens: number, costInput: number, inputTokens: number): number[] =>
    Array.from(wasm.usagePrices(costRead, readTokens, costWrite, writeTokens, costInput, inputTokens)),
  /** The one money answer for a net in dollars (guard/bill.rs `answer`): `saved $0.27 on <whose> so far (est.)`. */
  moneyAnswer: (netUsd: number, whose: string): string => wasm.moneyAnswer(netUsd, whose),
  beforeCompaction: (input: CompactionInput): CompactionDecision => JSON.parse(wasm.beforeCompaction(JSON.stringify(input))),
  /** A text as a request to the judge would carry it, and the secrets found (guard/secrets): for tests and the bench. */
  withholdSecrets: (text: string, patterns: string[] = []): { text: string; found: [kind: string, secret: string][] } =>
    JSON.parse(wasm.withholdSecrets(text, JSON.stringify(patterns))),
  /** How many secrets a text holds (the step as a pass runs it, without the text written back): for the bench. */
  countSecrets: (text: string): number => wasm.countSecrets(text),
  /** The requests of each run (guard/run.rs `run_lengths`), from one letter per message: see `runLengths` in checkpoint.ts. */
  runLengths: (kinds: Uint8Array): number[] => Array.from(wasm.runLengths(kinds)),
  /** For each message (one letter each), whether it starts a run (guard/run.rs `starts_run`). */
  runStarts: (kinds: Uint8Array): boolean[] => Array.from(wasm.runStarts(kinds), (b) => b === 1),
};
