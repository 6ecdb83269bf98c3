/* tslint:disable */
/* eslint-disable */

/**
 * `guard::pin::Log`, for one session.
 */
export class CacheLog {
    free(): void;
    [Symbol.dispose](): void;
    constructor();
    /**
     * The usage of the response to the last planned request (tokens).
     */
    observe(model: string, cache_read: number, cache_write: number): void;
    /**
     * The `Plan` (JSON text) for one Messages request body (JSON text) to
     * `model` (`provider/id`) at `now_ms`; throws when the body is not JSON.
     */
    plan(body: string, model: string, now_ms: number): string;
    /**
     * The read points (tool_use ids) for the break-even rules, as JSON text.
     */
    readPoints(model: string, now_ms: number): string;
}

/**
 * A run-end pass between its two steps. The plan stays here, inside the
 * wasm module, while the extension asks the classifier: only its requests
 * cross, and `finishPass` reads the rest where it is (see `pass::Planned`).
 * `finishPass` consumes it; otherwise call `free()`. A mid-run checkpoint
 * is the same kind of pass, with what its gates measured beside it.
 */
export class Pass {
    private constructor();
    free(): void;
    [Symbol.dispose](): void;
    /**
     * The JSON text of `ClassifierContext[]`, one request each, in order, in
     * the compact form `guard/wasm.ts` writes out (`wire::requests_compact`:
     * chunk questions as their wording, parts sent already as `head` and
     * `questionsOf`); chunks of an out-of-line text come as `[text, start,
     * end]` (see `pass::plan_json`). Moved out: a second call gives `""`.
     */
    takeRequests(): string;
    /**
     * A checkpoint's `Gate` (JSON text): what its gates measured.
     */
    readonly gate: string | undefined;
    /**
     * How many tool outputs the pass asks about, then the entries it
     * would edit, one a line (`PassState::held`).
     */
    readonly held: string;
    /**
     * Why there is nothing to ask, if so: `off`, `no-run`, `no-large-outputs`,
     * `below-min-run-chars`, `no-classifier`; for a checkpoint also
     * `mid-run-off`, `nothing-eligible`, `below-batch`, `not-paying-off`;
     * `judge-not-worth-it` for both.
     */
    readonly skipped: string | undefined;
}

/**
 * A session's large outputs with the secrets found in them when they
 * arrived (`scanned::Scanned`): a pass or checkpoint planned with it finds
 * only what it does not hold. One per session; `free()` when it ends.
 */
export class Scans {
    free(): void;
    [Symbol.dispose](): void;
    constructor();
    /**
     * Scans the large tool outputs among the entries of a `PassInput` (in
     * `planPass`'s form; its `settings` say which are large and the user's
     * patterns) that are not scanned yet. How many were scanned.
     */
    note(input: Uint8Array | number[], texts: Uint8Array | number[], lengths: Uint32Array | number[]): number;
}

/**
 * The audit's candidates (`guard::audit`): the same input forms as
 * `planPass` (a whole branch), the JSON of every run end's candidates out.
 */
export function auditCandidates(input: Uint8Array | number[], texts: Uint8Array | number[], lengths: Uint32Array | number[]): string;

/**
 * Distill before compacting: the JSON text of a `guard::compaction::CompactionInput`
 * in, its `Decision` out (whether Pi is about to compact, whether the
 * checkpoint's edits keep it under the threshold, the line `/guard` shows).
 */
export function beforeCompaction(input: string): string;

/**
 * Builds the whole report (rows, drift, history, largest, gauges, text) from
 * one read of Pi (see `report::build_json`):
 *
 * - `inputs`: `ContextInputs` as JSON text, without the per-message columns;
 * - `tokens`, `kind`: Pi's count and the kind of each message, from a
 *   `Float64Array` and a `Uint32Array` (wasm-bindgen copies the memory);
 * - `series`, `marks`: each request's context tokens and marks over the
 *   branch, from a `Float64Array` and a `Uint32Array`;
 * - `describe(index)`: the JSON text of message `index`'s `MessageText`,
 *   called only for the messages the report lists. A throw, a non-string or
 *   bad JSON gives that message no descriptor, not a failed report.
 *
 * Returns `ContextReport` as JSON text.
 */
export function buildReport(inputs: string, tokens: Float64Array | number[], kind: Uint32Array | number[], series: Float64Array | number[], marks: Uint32Array | number[], describe: (index: number) => string): string;

/**
 * How many secrets `text` holds (`guard::secrets::Secrets::find`): the
 * step as a pass runs it, for the benchmark, without writing the text back.
 */
export function countSecrets(text: string): number;

/**
 * Step two: the JSON text of `Outcome` from a planned pass (consumed) and
 * the UTF-8 JSON of the runner's `PassAnswers`.
 */
export function finishPass(pass: Pass, answers: Uint8Array | number[]): string;

/**
 * `maxSegmentChars` clipped to what a classifier with `contextWindow` tokens
 * takes, and the warning naming the key when it was (`undefined`: unknown window).
 */
export function fitSegment(settings: string, context_window?: number | null): string;

/**
 * The guard's net effect on the main model's bill so far: the JSON text of a
 * `guard::bill::BillInput` (the branch's events, the catalog's prices) in, the
 * `Bill` as JSON out.
 */
export function guardBill(input: string): string;

/**
 * `{ stats, status }`: the savings, lifetime total and usage on the branch,
 * and the status-bar text, from the columns of `stats::columns`:
 *
 * - `shape`: the edited messages' roles, forms, blocks and text lengths, from a `Uint32Array`;
 * - `heads`: the heads of their texts (and tool calls' names and arguments),
 *   joined, as UTF-16 code units in little-endian bytes (Node's
 *   `buffer.write(heads, "utf16le")`, one native copy);
 * - `marks`: the branch's records and compactions, six numbers each, from a `Float64Array`;
 * - `money`: the bill's two words for the status bar (`saved $0.27`), or empty;
 * - `image_head(index, chars)`: a prefix of an image's base64 data, asked
 *   only for images in edited entries and only as far as its dimensions
 *   need. A throw or a non-string reads as no data (an unreadable image).
 *
 * wasm-bindgen copies the three arrays into the module's memory in one step each.
 */
export function guardSavings(shape: Uint32Array | number[], heads: Uint8Array | number[], marks: Float64Array | number[], money: string, image_head: (index: number, chars: number) => string): string;

/**
 * The `/guard` report, from the JSON text of a `SummaryInput`.
 */
export function guardSummary(input: string): string;

/**
 * A chat model as the judge: the user message for one request, from the
 * JSON text of its `state` and of its questions as `[id, type,
 * instructions, [[key, text], …]]` lists (`guard::judge::prompt`). Its reply
 * goes back to `finishPass` as a `replied` outcome.
 */
export function judgePrompt(state: string, questions: string): string;

/**
 * A chat model as the judge: its system prompt.
 */
export function judgeSystemPrompt(): string;

/**
 * Before step two, when the judge answered after the boundary the pass was
 * planned at (docs/GUARD.md, "Nobody waits for the judge"): checks and re-weighs the plan against the
 * context now, the `PassInput` in `planPass`'s form, `ms` after planning at
 * the entry `anchor` (`pass::land`). The ids of the items dropped, one a line.
 */
export function landPass(pass: Pass, input: Uint8Array | number[], texts: Uint8Array | number[], lengths: Uint32Array | number[], anchor: string, ms: number, in_request: boolean): string;

/**
 * The one money answer for a net effect in dollars (`guard::bill::answer`):
 * `saved $0.27 on <whose> so far (est.)`. A net that is not finite reads as 0.
 */
export function moneyAnswer(net_usd: number, whose: string): string;

/**
 * `Parsed` (`{ settings, warnings }`) from the settings file's text (`""` for no file).
 */
export function parseSettings(json: string): string;

/**
 * Step one of a mid-run checkpoint: as `planPass`, with the JSON of
 * `CheckpointInput` (`PassInput` and `gates`); finished by `finishPass`.
 */
export function planCheckpoint(scans: Scans, input: Uint8Array | number[], texts: Uint8Array | number[], lengths: Uint32Array | number[]): Pass;

/**
 * Step one of a run-end pass: the UTF-8 JSON of `PassInput` whose long text
 * blocks are out of line (`{"type":"text","textAt":k}`), the out-of-line
 * texts as UTF-8 one after another, and their byte lengths; `scans`, the
 * secrets of outputs found when they arrived.
 */
export function planPass(scans: Scans, input: Uint8Array | number[], texts: Uint8Array | number[], lengths: Uint32Array | number[]): Pass;

/**
 * `RecallReply` for a `RecallRequest`.
 */
export function recall(request: string): string;

/**
 * `RecallToolInfo`: the `recall` tool's description and parameter texts.
 */
export function recallToolInfo(): string;

/**
 * The provider requests of each run of a branch (`run::run_lengths`), from
 * one letter per message (`u`, `a`, `t`, `r`, `c`, other): the one
 * definition of a run, for the `median` estimator of later requests.
 */
export function runLengths(kinds: Uint8Array | number[]): Uint32Array;

/**
 * For each message (one letter each, as `runLengths` takes them), 1 where it
 * starts a run (`run::starts_run`), else 0: the audit's later requests count
 * runs by the same definition.
 */
export function runStarts(kinds: Uint8Array | number[]): Uint8Array;

/**
 * One line safe to paint on a terminal, at most `max` JavaScript characters
 * (for text the screen shows that did not come through the report, such as
 * an error message from Pi).
 */
export function sanitizeLine(text: string, max: number): string;

/**
 * The settings file's text with `enabled` set; throws when the text is not a
 * JSON object (the file is then left as it is).
 */
export function setEnabled(json: string, enabled: boolean): string;

/**
 * The settings file's text with `model` set (`/guard model <provider/id>`); throws when `model` is not
 * `provider/id` or the text is not a JSON object (the file is then left as it is).
 */
export function setModel(json: string, model: string): string;

/**
 * A count as notes and the status bar show it: `950`, `1.2k`, `36.1k`, `1.3M`.
 */
export function shortCount(n: number): string;

/**
 * How notes and records name a call, such as ``bash `rg -n status` ``, from
 * the tool name and the JSON text of its arguments.
 */
export function toolLabel(tool: string, args: string): string;

/**
 * Prices per token from a session's recorded usage (`economics::bill::usage_prices`,
 * the bill's rule) and the rewrite's premium over a read: `[read, write,
 * premium]`, NaN where not recorded. The totals are dollars and tokens: cache
 * reads, cache writes, uncached input.
 */
export function usagePrices(cost_read: number, read: number, cost_write: number, write: number, cost_input: number, input: number): Float64Array;

/**
 * The core's version.
 */
export function version(): string;

/**
 * A text with its secrets withheld, as a request to the judge would carry
 * it, and what was found (`guard::secrets::withhold_text_json`): for the
 * corpus tests and the benchmark.
 */
export function withholdSecrets(text: string, patterns: string): string;

export type InitInput = RequestInfo | URL | Response | BufferSource | WebAssembly.Module;

export interface InitOutput {
    readonly memory: WebAssembly.Memory;
    readonly __wbg_cachelog_free: (a: number, b: number) => void;
    readonly __wbg_pass_free: (a: number, b: number) => void;
    readonly __wbg_scans_free: (a: number, b: number) => void;
    readonly auditCandidates: (a: number, b: number, c: number, d: number, e: number, f: number) => [number, number, number, number];
    readonly beforeCompaction: (a: number, b: number) => [number, number, number, number];
    readonly buildReport: (a: number, b: number, c: number, d: number, e: number, f: number, g: number, h: number, i: number, j: number, k: any) => [number, number, number, number];
    readonly cachelog_new: () => number;
    readonly cachelog_observe: (a: number, b: number, c: number, d: number, e: number) => void;
    readonly cachelog_plan: (a: number, b: number, c: number, d: number, e: number, f: number) => [number, number, number, number];
    readonly cachelog_readPoints: (a: number, b: number, c: number, d: number) => [number, number];
    readonly countSecrets: (a: number, b: number) => number;
    readonly finishPass: (a: number, b: number, c: number) => [number, number, number, number];
    readonly fitSegment: (a: number, b: number, c: number, d: number) => [number, number];
    readonly guardBill: (a: number, b: number) => [number, number, number, number];
    readonly guardSavings: (a: number, b: number, c: number, d: number, e: number, f: number, g: number, h: number, i: any) => [number, number];
    readonly guardSummary: (a: number, b: number) => [number, number, number, number];
    readonly judgePrompt: (a: number, b: number, c: number, d: number) => [number, number, number, number];
    readonly judgeSystemPrompt: () => [number, number];
    readonly landPass: (a: number, b: number, c: number, d: number, e: number, f: number, g: number, h: number, i: number, j: number, k: number) => [number, number, number, number];
    readonly moneyAnswer: (a: number, b: number, c: number) => [number, number];
    readonly parseSettings: (a: number, b: number) => [number, number];
    readonly pass_gate: (a: number) => [number, number];
    readonly pass_held: (a: number) => [number, number];
    readonly pass_skipped: (a: number) => [number, number];
    readonly pass_takeRequests: (a: number) => [number, number];
    readonly planCheckpoint: (a: number, b: number, c: number, d: number, e: number, f: number, g: number) => [number, number, number];
    readonly planPass: (a: number, b: number, c: number, d: number, e: number, f: number, g: number) => [number, number, number];
    readonly recall: (a: number, b: number) => [number, number, number, number];
    readonly recallToolInfo: () => [number, number];
    readonly runLengths: (a: number, b: number) => [number, number];
    readonly runStarts: (a: number, b: number) => [number, number];
    readonly sanitizeLine: (a: number, b: number, c: number) => [number, number];
    readonly scans_new: () => number;
    readonly scans_note: (a: number, b: number, c: number, d: number, e: number, f: number, g: number) => [number, number, number];
    readonly setEnabled: (a: number, b: number, c: number) => [number, number, number, number];
    readonly setModel: (a: number, b: number, c: number, d: number) => [number, number, number, number];
    readonly shortCount: (a: number) => [number, number];
    readonly toolLabel: (a: number, b: number, c: number, d: number) => [number, number];
    readonly usagePrices: (a: number, b: number, c: number, d: number, e: number, f: number) => [number, number];
    readonly version: () => [number, number];
    readonly withholdSecrets: (a: number, b: number, c: number, d: number) => [number, number];
    readonly __wbindgen_malloc: (a: number, b: number) => number;
    readonly __wbindgen_realloc: (a: number, b: number, c: number, d: number) => number;
    readonly __wbindgen_free: (a: number, b: number, c: number) => void;
    readonly __wbindgen_exn_store: (a: number) => void;
    readonly __externref_table_alloc: () => number;
    readonly __wbindgen_externrefs: WebAssembly.Table;
    readonly __externref_table_dealloc: (a: number) => void;
    readonly __wbindgen_start: () => void;
}

export type SyncInitInput = BufferSource | WebAssembly.Module;

/**
 * Instantiates the given `module`, which can either be bytes or
 * a precompiled `WebAssembly.Module`.
 *
 * @param {{ module: SyncInitInput }} module - Passing `SyncInitInput` directly is deprecated.
 *
 * @returns {InitOutput}
 */
export function initSync(module: { module: SyncInitInput } | SyncInitInput): InitOutput;

/**
 * If `module_or_path` is {RequestInfo} or {URL}, makes a request and
 * for everything else, calls `WebAssembly.instantiate` directly.
 *
 * @param {{ module_or_path: InitInput | Promise<InitInput> }} module_or_path - Passing `InitInput` directly is deprecated.
 *
 * @returns {Promise<InitOutput>}
 */
export default function __wbg_init (module_or_path?: { module_or_path: InitInput | Promise<InitInput> } | InitInput | Promise<InitInput>): Promise<InitOutput>;
