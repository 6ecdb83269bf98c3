// The guard's core, as TypeScript sees it: the data that crosses the wasm
// boundary and the exports of crates/wasm/src/guard.rs. Types only; no logic lives here.
//
// What the core writes with serde is generated from the Rust structs (ts-rs, the
// crates' `ts` feature; scripts/gen-types.sh) and re-exported here, so the two
// cannot drift apart. What the core reads by hand (lenient readers, `from_value`)
// or writes by hand stays written here, each with why.
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
//   const pass = wasm.planPass(scans, json, texts, lengths); // scans: a session's `new Scans()`
//   const requests = JSON.parse(pass.takeRequests()); // chunks as ranges: slice them
//   const run = await runRequests(requests, classify, { concurrency, timeoutMs }); // guard/requests.ts
//   const outcome = JSON.parse(wasm.finishPass(pass, enc.encode(JSON.stringify(run satisfies PassAnswers))));
//
// Every export can throw (malformed input); call it through callCore.

import type { CheckpointGates } from "../generated/CheckpointGates.ts";
import type { GuardClassifierQuestion } from "../generated/GuardClassifierQuestion.ts";
import type { GuardDraft } from "../generated/GuardDraft.ts";
import type { GuardSettings } from "../generated/GuardSettings.ts";
import type { JudgePrice } from "../generated/JudgePrice.ts";
import type { LargeOutputState } from "../generated/LargeOutputState.ts";

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
  planPass(scans: ScansHandle, input: Uint8Array, texts: Uint8Array, lengths: Uint32Array): PassHandle;
  /**
   * Step one of a mid-run checkpoint (guard/checkpoint/mod.rs): as `planPass`, with the JSON of
   * `CheckpointInput`; the handle's `gate` says what the gates measured. Finished by `finishPass`.
   */
  planCheckpoint(scans: ScansHandle, input: Uint8Array, texts: Uint8Array, lengths: Uint32Array): PassHandle;
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

/**
 * `new Scans()`: a session's large tool outputs with the secrets found in them when they arrived
 * (guard/scanned.rs); the plans read them instead of scanning again. `free()` when the session ends.
 */
export interface ScansHandle {
  /** Scans the large outputs among a `PassInput`'s entries (planPass's form) not held yet; how many it scanned. */
  note(input: Uint8Array, texts: Uint8Array, lengths: Uint32Array): number;
  free(): void;
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

/** Why a pass or checkpoint has nothing to ask (guard/pass/mod.rs `Skip`); crosses as its name (`as_str`). */
export type { PassSkip } from "../generated/PassSkip.ts";

// ---------------------------------------------------------------------------
// Settings (settings.rs): every key of docs/GUARD.md "Settings" with its default.

export type { GuardSettings } from "../generated/GuardSettings.ts";
export type { LaterRequests } from "../generated/LaterRequests.ts";
/** `warnings`: one per ignored value, naming the key (the file's path is the extension's to add). */
export type { ParsedSettings } from "../generated/ParsedSettings.ts";
/** `maxSegmentChars` as the classifier's window allows (guard/segment_fit.rs); `warning` names the key when it was clipped. */
export type { SegmentFit } from "../generated/SegmentFit.ts";

// ---------------------------------------------------------------------------
// The pass's input (entry.rs, guard/pass/)

/**
 * One projected session entry: `guard/collect.ts` `coreEntries` builds these from
 * `event.context.contextEntries`. `messages` are Pi's `AgentMessage`s as they are
 * (unknown roles and fields are ignored); `raw` is `sourceEntry.message` when an
 * edit changed what the model sees. Image `data` may be cut to its first kilobytes.
 * Written here: the core reads it by hand (`ContextEntry::from_value`).
 */
export interface GuardEntry {
  id: string;
  entryType: string;
  messages: unknown[];
  raw?: unknown;
}

/**
 * The main model as its prompt cache matters (guard/cache.rs `MainModel`); missing fields read as empty or false.
 * Written here: the core reads it by hand (`MainModel::from_value`), and its serde form leaves fields out.
 */
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

/** Written here: the core reads it by hand (`PassInput::from_value`), every field but `entries` and `settings` optional. */
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
export type { JudgePrice } from "../generated/JudgePrice.ts";

/**
 * Which gates a checkpoint applies (guard/checkpoint/mod.rs `Gates`): `mid-run` (`midRun`, age, batch, break-even)
 * or `every-eligible` (none of those: for distilling before Pi compacts).
 */
export type { CheckpointGates } from "../generated/CheckpointGates.ts";

/** Written here: the core reads it by hand (`CheckpointInput::from_value`). */
export interface CheckpointInput extends PassInput {
  gates?: CheckpointGates;
  /** Turns between the plan and the turn end its edits land at, the judge in the background (issue 27); 0 when waited for. */
  lag?: number;
}

/** What a checkpoint's gates measured (guard/checkpoint/mod.rs `Gate`); 0 where a gate did not apply. */
export type { CheckpointGate } from "../generated/CheckpointGate.ts";
/** How the main model's provider caches (guard/cache.rs `Cache`). */
export type { CacheKind } from "../generated/CacheKind.ts";
/** Where a rewrite starts (guard/cache.rs `Basis`). */
export type { RewriteBasis } from "../generated/RewriteBasis.ts";
/** One break-even decision with its numbers (guard/cache.rs `BreakEven`): savedChars × requests ≥ factor × rewriteChars. */
export type { BreakEvenDecision } from "../generated/BreakEvenDecision.ts";
export type { BreakEvenRule } from "../generated/BreakEvenRule.ts";

// ---------------------------------------------------------------------------
// Classifier requests (guard/classify.rs, guard/decide/request.rs): Pi's ClassifierContext / ClassifierQuestion

export type { GuardClassifierQuestion } from "../generated/GuardClassifierQuestion.ts";
/** The state of a large-output request, keys in the order the core writes them; absent parts are left out. */
export type { LargeOutputState } from "../generated/LargeOutputState.ts";
/** Every kind of request state: large output, small outputs, old exchanges. */
export type { ClassifierState } from "../generated/ClassifierState.ts";

/**
 * Send as `ctx.modelRegistry.classify(model, context, options)` takes it. Written here: the core writes it
 * by hand (its own `Serialize`, and `wire.rs`'s compact form that wasm.ts writes out). `state` can be any
 * `ClassifierState`; typed as the large one, whose chunks the extension reads.
 */
export interface GuardClassifierContext {
  state: LargeOutputState;
  /** `keep_whole` (bool), `focus` (choice: whole, none, chunk_N…), then one `chunk_N` (bool) per chunk. */
  questions: Record<string, GuardClassifierQuestion>;
}

/** How one request ended: `RequestOutcome` of guard/requests.ts. Written here: the core reads it by hand (`replied` included). */
export type GuardRequestOutcome =
  | { status: "answered"; answers: Record<string, unknown>; inputTokens: number; costUsd: number }
  /** A judge's reply (guard/judge.ts): the core reads its text as the answers (classify.rs `Answers::from_judge`). */
  | { status: "replied"; text: string; inputTokens: number; costUsd: number }
  | { status: "error"; message: string }
  | { status: "timeout" };

/** `RunResult` of guard/requests.ts: one outcome per request, in the order of the requests. Read by hand. */
export interface PassAnswers {
  outcomes: GuardRequestOutcome[];
  timedOut: boolean;
  ms: number;
}

// ---------------------------------------------------------------------------
// The pass's outcome (guard/outcome.rs): Pi SessionBoundaryDrafts to append. `wire.rs` writes it by hand,
// with serde's names and shapes, except that replacement texts may come as parts (wasm.ts joins them).

/** The context_edit drafts, then the record when the pass made a request; `record` is null when none was made. */
export type { PassOutcome } from "../generated/PassOutcome.ts";
/** A `context_edit` (`replacement: null` omits the entry: whole exchanges only) or the record. */
export type { GuardDraft } from "../generated/GuardDraft.ts";
export type ContextEditDraft = Extract<GuardDraft, { type: "context_edit" }>;
export type GuardRecordDraft = Extract<GuardDraft, { type: "custom" }>;
/** The record a pass appends (custom type `context-guard`); `/guard` shows the last one. */
export type { GuardRecord } from "../generated/GuardRecord.ts";
export type { GuardResult } from "../generated/GuardResult.ts";
export type { PassPhase } from "../generated/PassPhase.ts";

// ---------------------------------------------------------------------------
// recall (recall.rs)

/** Written here: the core reads it by hand (`RecallRequest::from_value`). */
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

/** `images`: indexes of the image blocks to attach; `exchangeImages`: `[entry, block]` (entry 0 the prompt). */
export type { RecallReply } from "../generated/RecallReply.ts";
export type { RecallToolInfo } from "../generated/RecallToolInfo.ts";

// ---------------------------------------------------------------------------
// Distill before compacting (guard/compaction.rs).

/** What the extension read at a `turn_end`. Written here: the core reads it by hand (`CompactionInput::from_value`). */
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
  /** For starting early: Pi's estimate at the last few turn ends, oldest first, and the turns a judge asked now takes. */
  ahead?: { earlier: number[]; lag: number };
}

/** `none`: Pi does not compact; `distill`: run the checkpoint; `append`: its edits keep Pi under; `compact`: append nothing. */
export type { CompactionDecision } from "../generated/CompactionDecision.ts";
export type { CompactionAction } from "../generated/CompactionAction.ts";

/** One branch entry the bill reads (economics/bill.rs `Event`), in branch order. Written here: read by hand, no serde form. */
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
