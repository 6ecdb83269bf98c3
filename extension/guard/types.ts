// The guard's core, as TypeScript sees it: the data that crosses the wasm
// boundary (mirrors of the Rust types in crates/base/src) and the exports of
// crates/wasm/src/guard.rs. Types only; no logic lives here.
//
// Structured values cross as JSON (like the /context report): the extension
// stringifies once and parses once. A run-end pass carries a megabyte of tool
// output, so its two calls are shaped by size (wasm.ts does all of it;
// docs/DESIGN.md, "The pass across the boundary"):
//
//   - long text blocks go beside the JSON as UTF-8 (`{ type: "text", textAt: k }`
//     in the JSON, the texts encoded one after another, their byte lengths);
//   - the plan stays inside the wasm module: `planPass` returns a `Pass`
//     handle, `finishPass` consumes it;
//   - chunk texts in the requests, and kept chunks in the replacement texts,
//     come back as `[k, start, end]`: `texts[k].slice(start, end)`.
//
//   const pass = wasm.planPass(json, texts, lengths);
//   const requests = JSON.parse(pass.takeRequests()); // chunks as ranges: slice them
//   const run = await runRequests(requests, classify, { concurrency, timeoutMs }); // guard/requests.ts
//   const outcome = JSON.parse(wasm.finishPass(pass, enc.encode(JSON.stringify(run satisfies PassAnswers))));
//
// Every export can throw (malformed input); call it through callCore.

// ---------------------------------------------------------------------------
// Exports of crates/wasm/src/guard.rs (in pkg/context_guard.d.ts)

export interface GuardExports {
  /** JSON of `ParsedSettings` from the settings file's text (`""` for no file). */
  parseSettings(json: string): string;
  /** The settings file's text with `enabled` set; throws when the text is not a JSON object. */
  setEnabled(json: string, enabled: boolean): string;
  /** JSON of `SegmentFit` from the JSON of `GuardSettings` and the classifier's `contextWindow` (crates/wasm/src/segment_fit.rs). */
  fitSegment(settings: string, contextWindow: number | undefined): string;
  /**
   * Step one of a run-end pass: the UTF-8 JSON of `PassInput` with long text blocks as
   * `{ type: "text", textAt: k }`, those texts as UTF-8 one after another, and their byte lengths.
   */
  planPass(input: Uint8Array, texts: Uint8Array, lengths: Uint32Array): PassHandle;
  /**
   * Step one of a mid-run checkpoint (guard/checkpoint/mod.rs): as `planPass`, with the JSON of
   * `CheckpointInput`; the handle's `gate` says what the gates measured. Finished by `finishPass`.
   */
  planCheckpoint(input: Uint8Array, texts: Uint8Array, lengths: Uint32Array): PassHandle;
  /**
   * Step two: JSON of `PassOutcome` (kept chunks of an out-of-line text as `[k, start, end]`
   * parts of the replacement text) from the pass, which it consumes, and the UTF-8 JSON of `PassAnswers`.
   */
  finishPass(pass: PassHandle, answers: Uint8Array): string;
  /** JSON of `RecallReply` from the JSON of `RecallRequest`. */
  recall(request: string): string;
  /** JSON of `RecallToolInfo`: the tool's description and parameter texts. */
  recallToolInfo(): string;
  /** How notes and records name a call, e.g. bash `rg -n status`, from the tool name and its arguments as JSON. */
  toolLabel(tool: string, argsJson: string): string;
  /** A count as notes and the status bar show it: `950`, `1.2k`, `36.1k`, `1.3M`. */
  shortCount(n: number): string;
  /** JSON of `CompactionDecision` from the JSON of `CompactionInput` (guard/compaction.rs: distill before compacting). */
  beforeCompaction(input: string): string;
}

/** What `planPass` returns: the plan, kept inside the wasm module (`finishPass` consumes it, or call `free()`). */
export interface PassHandle {
  /** JSON of `GuardClassifierContext[]`, one classifier request each, in order, in the core's compact form (written out by `guardCore`); chunks of an out-of-line text as `[k, start, end]`. Moved out: once. */
  takeRequests(): string;
  /** Why there is nothing to ask, when so: a `PassSkip`. */
  readonly skipped: string | undefined;
  /** A checkpoint's `CheckpointGate` as JSON; undefined for a run-end pass. */
  readonly gate: string | undefined;
  free(): void;
}

/** Why a pass or checkpoint has nothing to ask; the last four are a checkpoint's (docs/GUARD.md "Mid-run checkpoints"). */
export type PassSkip =
  | "off"
  | "no-run"
  | "no-large-outputs"
  | "below-min-run-chars"
  | "no-classifier"
  | "mid-run-off"
  | "nothing-eligible"
  | "below-batch"
  | "not-paying-off"
  | "early-in-run"
  | "judge-not-worth-it"
  | "cache-warm";

// ---------------------------------------------------------------------------
// Settings (settings.rs): every key of docs/GUARD.md "Settings" with its default.

export interface GuardSettings {
  enabled: boolean;
  /** `provider/id`, split at the first `/` into the next two. */
  model: string;
  modelProvider: string;
  modelId: string;
  minResultChars: number;
  minRunChars: number;
  keepWholeThreshold: number;
  focusWholeThreshold: number;
  chunkKeepThreshold: number;
  noneThreshold: number;
  maxKeepRatio: number;
  keepCitedFiles: boolean;
  timeoutMs: number;
  concurrency: number;
  maxSegmentChars: number;
  maxChunksPerSegment: number;
  excludeTools: string[];
  /** The user's own secret patterns (regex-lite), besides the built-in rules. */
  secretPatterns: string[];
  /** File-name patterns whose outputs are never sent to the judge. */
  secretFiles: string[];
  distillErrors: boolean;
  historyExchanges: number;
  pinAnthropicCache: boolean;
  midRun: boolean;
  midRunMinAgeTurns: number;
  midRunMinTurns: number;
  midRunBatchChars: number;
  midRunBatchCharsOpenAI: number;
  midRunChunkKeepThreshold: number;
  midRunBreakEven: boolean;
  /** The room trigger (guard/worth.rs): past this many tokens a batch expected to take out `midRunRoomMinTokens` goes; 0 off. */
  midRunRoomTokens: number;
  midRunRoomMinTokens: number;
  /** How later requests are estimated for the money rule. */
  laterRequests: "turns" | "session" | "median";
  smallResultMinChars: number;
  smallKeepThreshold: number;
  pruneExchanges: boolean;
  keepRecentExchanges: number;
  exchangeOmitThreshold: number;
  exchangeBreakEven: boolean;
  exchangeMinSavingChars: number;
  imageKeepTurns: number;
  /** At run end, large and small outputs go through the money rule; what does not pay waits. */
  runEndBreakEven: boolean;
  /** Checkpoints and run ends wait for the judge (issue 27); off, it works in the background. */
  waitForJudge: boolean;
}

/** `maxSegmentChars` as the classifier's window allows (guard/segment_fit.rs); `warning` names the key when it was clipped. */
export interface SegmentFit {
  maxSegmentChars: number;
  warning?: string;
}

export interface ParsedSettings {
  settings: GuardSettings;
  /** One per ignored value, naming the key (the file's path is the extension's to add). */
  warnings: string[];
}

// ---------------------------------------------------------------------------
// The pass's input (entry.rs, guard/pass/)

/**
 * One projected session entry: `guard/collect.ts` `coreEntries` builds these from
 * `event.context.contextEntries`. `messages` are Pi's `AgentMessage`s as they are
 * (unknown roles and fields are ignored); `raw` is `sourceEntry.message` when an
 * edit changed what the model sees. Image `data` may be cut to its first kilobytes.
 */
export interface GuardEntry {
  id: string;
  entryType: string;
  messages: unknown[];
  raw?: unknown;
}

/** The main model as its prompt cache matters (guard/cache.rs `MainModel`); missing fields read as empty or false. */
export interface MainModel {
  provider: string;
  api: string;
  /** `pinAnthropicCache`: off, an Anthropic edit rewrites the whole context (docs/GUARD.md "When an edit pays off"). */
  pin?: boolean;
  /** Tool_use ids (as Anthropic sees them) of the pin's cache entries the next request could read (docs/GUARD.md "The cache pin (Anthropic)"). */
  readPoints?: string[];
  /** Pi's estimate of the context now, in tokens: the price tier and the room trigger read it (guard/worth.rs). */
  contextTokens?: number;
  /** The main model's `model.cost` from Pi's catalog (dollars per million; `tiers` by input size), for the money rule. */
  cost?: unknown;
  /** Ms from this model's last request to the branch's latest message (Pi's message timestamps); absent when unknown. */
  idleMs?: number;
  /** Pi's long cache retention (`PI_CACHE_RETENTION=long`). */
  longRetention?: boolean;
  /** Pi's `cacheWarming` setting (`off`, `streaming`, `idle`), "" when it cannot be read. */
  cacheWarming?: string;
  /** The lifetime the model declares for its retention tier (`model.promptCache`, ms; 0 none). */
  promptCacheMs?: number;
  /** A pass before a prompt's first request, for what waits for a cold cache (guard/cache.rs `MainModel::lapsed`). */
  opening?: boolean;
}

export interface PassInput {
  entries: GuardEntry[];
  /** As `ParsedSettings.settings` gave them (read back through the same validation). */
  settings: GuardSettings;
  /** The classifier and its credential are there (default true); without them only old images go. */
  classifier?: boolean;
  /** The main model (`ctx.model`): its cache decides what an edit rewrites (guard/cache.rs `MainModel`). */
  model?: MainModel;
  /** The guard's records among `entries`: `at` is the entry's index, `data` the record (guard/memo.rs). */
  records?: { at: number; data: unknown }[];
  /** A chat model judges (issue 13): its price and the main model's, for the judge's break-even (guard/pass/plan.rs `weigh_judge`). */
  judge?: JudgePrice;
  /** Provider requests of each earlier run of the session, oldest first (the `median` estimator of later requests, guard/worth.rs). */
  earlierRuns?: number[];
  /** Entries a pass still out with the judge holds: a new plan leaves them alone (issue 27). */
  judging?: string[];
}

/** Dollars per million input tokens from Pi's catalog: the judge's `cost.input`, the main model's `cost.cacheRead` (else `cost.input`). */
export interface JudgePrice {
  inputPerMillion: number;
  mainPerMillion: number;
}

/**
 * Which gates a checkpoint applies (guard/checkpoint/mod.rs `Gates`): `mid-run` (docs/GUARD.md "Mid-run checkpoints": `midRun`,
 * age, batch, break-even) or `every-eligible` (no age, batch or break-even; `midRun` not read: for
 * distilling before Pi compacts). The memo and the candidate rules apply to both.
 */
export type CheckpointGates = "mid-run" | "every-eligible";

export interface CheckpointInput extends PassInput {
  gates?: CheckpointGates;
  /** Turns between the plan and the turn end its edits land at, the judge in the background (issue 27); 0 when waited for. */
  lag?: number;
}

/** What a checkpoint's gates measured (guard/checkpoint/mod.rs `Gate`); 0 where a gate did not apply. */
export interface CheckpointGate {
  gates: CheckpointGates;
  /** Eligible outputs (large and small) and old exchanges. */
  outputs: number;
  exchanges: number;
  /** Their characters together; after `outputsOnly`, the outputs'. */
  pendingChars: number;
  /** The batch they had to reach. */
  batchChars: number;
  /** Assistant messages of the run so far. */
  turns: number;
  /** The break-even (guard/worth.rs): in tokens its factor (0 in money), and the rewrite it weighed. */
  factor: number;
  rewriteChars: number;
  /** Characters expected to go, later requests expected, and in money the expected saving and the cost (millionths of a dollar). */
  expectedChars?: number;
  later?: number;
  gainMicros?: number;
  costMicros?: number;
  /** The room trigger let the batch through (`midRunRoomTokens`). */
  room?: boolean;
  /** The whole batch did not pay off and the outputs alone did: exchanges wait for run end. */
  outputsOnly: boolean;
  /** When the break-even was weighed: the main model's cache and where the rewrite starts. */
  cache?: CacheKind;
  basis?: RewriteBasis;
  /** A chat-model judge's least cost and its edits' most saving, in millionths of a dollar (0 when not weighed). */
  judgeCostMicros: number;
  judgeSavingMicros: number;
  /** A run end's skip (the judge not worth calling): `turns` are then the session's requests so far. */
  runEnd: boolean;
}

/** How the main model's provider caches (guard/cache.rs `Cache`). */
export type CacheKind = "openai-codex" | "anthropic" | "prefix";
/** Where a rewrite starts (guard/cache.rs `Basis`): the whole context, after a read point or the question, or from the first edit. */
export type RewriteBasis = "whole" | "read-point" | "question" | "first-edit";

/** One break-even decision with its numbers (guard/cache.rs `BreakEven`): savedChars × requests ≥ factor × rewriteChars. */
export interface BreakEvenDecision {
  rule: "exchanges" | "images" | "checkpoint" | "outputs";
  /** Characters the edits keep out (a checkpoint: its pending characters). */
  savedChars: number;
  /** Requests so far (run end) or turns so far of the run (checkpoint). */
  requests: number;
  factor: number;
  /** The rewrite weighed (at run end beyond what the pass's other edits rewrite anyway). */
  rewriteChars: number;
  /** `exchangeMinSavingChars` for exchanges, else 0. */
  minSavingChars: number;
  cache: CacheKind;
  basis: RewriteBasis;
  /** Characters expected to go and the later requests expected (guard/worth.rs). */
  expectedChars?: number;
  later?: number;
  /** In money (the catalog has prices): the expected saving and the cost, millionths of a dollar. */
  gainMicros?: number;
  costMicros?: number;
  /** Let through by the room trigger, the money rule not weighed. */
  room?: boolean;
  /** Weighed on a cold cache: the idle time (ms) after which it lapsed, so no rewrite counted. */
  lapsedMs?: number;
  paidOff: boolean;
}

// ---------------------------------------------------------------------------
// Classifier requests (guard/classify.rs, guard/decide/request.rs): Pi's ClassifierContext / ClassifierQuestion

export type GuardClassifierQuestion =
  | { type: "bool"; instructions: string; criteria: { true: string; false: string } }
  | { type: "choice"; instructions: string; criteria: Record<string, string> }
  | { type: "score"; instructions: string; criteria: string[] };

/** The state of a large-output request (docs/GUARD.md "What is sent to the classifier"), keys in this order; absent parts are left out. */
export interface LargeOutputState {
  situation: string;
  earlier_conversation?: {
    summary?: string;
    first_request?: string;
    recent_exchanges?: { user: string; assistant: string }[];
  };
  user_question: string;
  /** Absent at a checkpoint, which sends `agent_progress` instead. */
  final_answer?: string;
  agent_notes_during_the_run?: string;
  agent_progress?: { latest_note: string; earlier_notes?: string };
  /** At a checkpoint: labels of the later calls (above 30, the first and last 15 around a gap line). */
  later_tool_calls?: string[];
  /** At a checkpoint: why a later call made this output out of date. */
  superseded?: string;
  tool: string;
  tool_arguments: string;
  tool_status?: string;
  output_size: string;
  /** `{ chunk_1: "…" }`, numbered across the whole output. */
  chunks: Record<string, string>;
}

/** Send as `ctx.modelRegistry.classify(model, context, options)` takes it. */
export interface GuardClassifierContext {
  state: LargeOutputState;
  /** `keep_whole` (bool), `focus` (choice: whole, none, chunk_N…), then one `chunk_N` (bool) per chunk. */
  questions: Record<string, GuardClassifierQuestion>;
}

/** How one request ended: `RequestOutcome` of guard/requests.ts. Answers are checked by the core. */
export type GuardRequestOutcome =
  | { status: "answered"; answers: Record<string, unknown>; inputTokens: number; costUsd: number }
  /** A judge's reply (guard/judge.ts): the core reads its text as the answers (classify.rs `Answers::from_judge`). */
  | { status: "replied"; text: string; inputTokens: number; costUsd: number }
  | { status: "error"; message: string }
  | { status: "timeout" };

/** `RunResult` of guard/requests.ts: one outcome per request, in the order of the requests. */
export interface PassAnswers {
  outcomes: GuardRequestOutcome[];
  timedOut: boolean;
  ms: number;
}

// ---------------------------------------------------------------------------
// The pass's outcome (guard/outcome.rs): Pi SessionBoundaryDrafts to append

export interface ContextEditDraft {
  type: "context_edit";
  targetId: string;
  replacement: { content: { type: "text"; text: string }[] };
}

export interface GuardRecordDraft {
  type: "custom";
  customType: "context-guard";
  data: GuardRecord;
}

/** The record a pass appends (custom type `context-guard`); `/guard` shows the last one. */
export interface GuardRecord {
  v: 1;
  phase: "run-end" | "mid-run";
  model: string;
  savedChars: number;
  requests: number;
  inputTokens: number;
  costUsd: number;
  ms: number;
  timedOut: boolean;
  results: GuardResult[];
  /** The pass's break-even decisions (absent when none was weighed, and in older records). */
  breakEven?: BreakEvenDecision[];
  /** When the judge answered after the boundary the pass was planned at (issue 27): requests between, ms, and whether the edits went into a prompt's first request. */
  late?: { requests: number; ms: number; inRequest: boolean };
}

export interface GuardResult {
  kind: "large" | "small" | "exchange" | "image";
  entryId: string;
  tool: string;
  /** Such as bash `rg -n status`, one line, clipped. */
  label: string;
  outcome: "distilled" | "removed" | "kept";
  /**
   * Why, as distinct segment reasons joined by `,`: error, timeout, no-answer, whole-needed,
   * whole-chosen, weak-whole, weak-none, none-needed, chunks, top-focus, oversize; or not-worth,
   * bad-plan.
   */
  reason: string;
  beforeChars: number;
  afterChars: number;
  /** Classifier trace, such as `kw.15 focus=chunk_4:.52 keep 9/29` (segments joined by ` | `). */
  jev: string;
  /** Entry ids an exchange omission covers. */
  omitted?: string[];
  /** An output whose edit waits (`deferred`) though the judge answered: the characters its answer would have left. */
  judgedChars?: number;
}

export interface PassOutcome {
  /** The context_edit drafts, then the record when the pass made a request. */
  entries: (ContextEditDraft | GuardRecordDraft)[];
  /** The record's data (also the last of `entries`), or null when no request was made. */
  record: GuardRecord | null;
  /** Characters the edits keep out of the context. */
  savedChars: number;
  /** The pass's break-even decisions, also when no record holds them (a pass that only deferred appends nothing). */
  breakEven: BreakEvenDecision[];
}

// ---------------------------------------------------------------------------
// recall (recall.rs)

export interface RecallRequest {
  entryId: string;
  /** regex-lite syntax (no look-around or back-references), ≤ 500 characters. */
  pattern?: string;
  /** 1-based; with `pattern`, counts matching lines. */
  offset?: number;
  limit?: number;
  /** `getEntry(entryId).message` when the entry is a message entry; absent when the id is unknown. */
  message?: unknown;
  /** For a user message: the raw branch entries after it and the ids the record that omitted it lists (`null`: none did). */
  exchange?: { omitted: string[] | null; entries: { id: string; message: unknown }[] };
}

export interface RecallReply {
  text: string;
  /** Unknown id, bad pattern or parameter: return it as a tool error. */
  isError: boolean;
  /** Indexes into the raw message's `content` of the image blocks to attach after the text. */
  images: number[];
  /** For an exchange transcript: `[entry, block]` of the user images to attach (entry 0 is the prompt, `i + 1` is `exchange.entries[i]`). */
  exchangeImages: [number, number][];
}

export interface RecallToolInfo {
  description: string;
  entryId: string;
  pattern: string;
  offset: string;
  limit: string;
}

// ---------------------------------------------------------------------------
// Distill before compacting (guard/compaction.rs).

/** What the extension read at a `turn_end`: the model's window, Pi's compaction settings and its estimate. */
export interface CompactionInput {
  /** `ctx.model.contextWindow`. */
  window?: number;
  /** `provider/id`, the key of `compaction.modelOverrides`. */
  model?: string;
  /** `pi.getSettings().compaction`, any shape (checked in the core, as `/context` checks it). */
  settings: unknown;
  /** `DEFAULT_COMPACTION_SETTINGS` of the running Pi. */
  defaults: { enabled: boolean; reserveTokens: number };
  /** Pi's estimate of the context after this turn, as it stands. */
  tokens: number;
  /** Once the no-gate checkpoint ran: Pi's estimate with its edits, the outputs they replace, why it gave none. */
  distilled?: { tokens: number; outputs: number; problem?: string };
}

export interface CompactionDecision {
  /** `none`: Pi does not compact; `distill`: run the checkpoint; `append`: its edits keep Pi under; `compact`: append nothing. */
  action: "none" | "distill" | "append" | "compact";
  /** `window - reserve`, when a threshold is in effect. */
  threshold?: number;
  /** The line `/guard` shows. */
  line?: string;
}

/** One branch entry the bill reads (guard/bill.rs `Event`), in branch order. */
export type BillEvent =
  | { type: "request"; usage: { input: number; cacheRead: number; cacheWrite: number; cost: { input: number; cacheRead: number; cacheWrite: number } } }
  | { type: "record"; data: unknown }
  | { type: "recall"; chars: number }
  | { type: "message"; chars: number }
  | { type: "compaction" };

/** What the bill reads: the branch's events, and the catalog's prices of the main model (dollars per million tokens). */
export interface BillInput {
  events: BillEvent[];
  catalog?: { input: number; cacheRead: number; cacheWrite: number };
}
