// The guard's core calls, typed. Each crosses the wasm boundary once, as JSON
// text (or UTF-8 bytes for the pass, which carries megabytes of output), and
// can throw on malformed input: call them through `callCore`.
import * as wasm from "../../pkg/context_guard.js";
import "../core.ts"; // instantiates the wasm module before any call
import type {
  GuardRecord,
  ParsedSettings,
  PassAnswers,
  PassInput,
  PassOutcome,
  PassSkip,
  GuardClassifierContext,
  RecallReply,
  RecallRequest,
  RecallToolInfo,
} from "../guard-types.ts";
import type { CoreEntry } from "./collect.ts";

const utf8 = new TextEncoder();

export interface Planned {
  requests: GuardClassifierContext[];
  state: Uint8Array;
  skipped: PassSkip | undefined;
}

/** What the statistics read: edited entries, and the branch's records and compactions in order. */
export interface StatsInput {
  edited: CoreEntry[];
  marks: ({ kind: "record"; data: unknown } | { kind: "compaction" })[];
}

/**
 * What the statistics read, as columns (crates/core/src/stats/columns.rs): the
 * edited messages' shape, their texts' heads joined, the records and
 * compactions six numbers each, and the images' base64, which stays here.
 */
export interface SavingsColumns {
  shape: Uint32Array;
  heads: string;
  marks: Float64Array;
  images: string[];
}

export interface GuardStats {
  savedChars: number;
  items: number;
  lifetimeChars: number;
  compacted: boolean;
  runs: number;
  checkpoints: number;
  requests: number;
  inputTokens: number;
  costUsd: number;
}

export interface StatusText {
  text: string;
  saved: string;
  rest: string;
}

export interface SummaryInput {
  enabled: boolean;
  model: string;
  modelProblem?: string;
  settingsPath: string;
  warnings: string[];
  midRun: boolean;
  pruneExchanges: boolean;
  stats: GuardStats;
  records: GuardRecord[];
  coreVersion: string;
  coreLoadMs: number;
}

// The heads as UTF-16 code units, written into one reused buffer: one native
// copy (`encodeInto` to UTF-8 took ~8 times as long for non-ASCII text), and
// the core compares units without decoding (stats/columns.rs).
let headBuffer = Buffer.alloc(64 * 1024);
function headUnits(heads: string): Uint8Array {
  if (headBuffer.length < heads.length * 2) headBuffer = Buffer.alloc(heads.length * 2);
  return headBuffer.subarray(0, headBuffer.write(heads, 0, "utf16le"));
}

export const guardCore = {
  parseSettings: (text: string): ParsedSettings => JSON.parse(wasm.parseSettings(text)),
  setEnabled: (text: string, enabled: boolean): string => wasm.setEnabled(text, enabled),
  planPass: (input: PassInput): Planned => {
    const planned = wasm.planPass(utf8.encode(JSON.stringify(input)));
    try {
      return { requests: JSON.parse(planned.requests), state: planned.state, skipped: planned.skipped as PassSkip | undefined };
    } finally {
      planned.free();
    }
  },
  finishPass: (state: Uint8Array, answers: PassAnswers): PassOutcome =>
    JSON.parse(wasm.finishPass(state, utf8.encode(JSON.stringify(answers)))),
  recall: (request: RecallRequest): RecallReply => JSON.parse(wasm.recall(JSON.stringify(request))),
  recallToolInfo: (): RecallToolInfo => JSON.parse(wasm.recallToolInfo()),
  stats: (input: StatsInput): { stats: GuardStats; status: StatusText } => JSON.parse(wasm.guardStats(JSON.stringify(input))),
  savings: (c: SavingsColumns): { stats: GuardStats; status: StatusText } =>
    JSON.parse(wasm.guardSavings(c.shape, headUnits(c.heads), c.marks, (index, chars) => c.images[index]?.slice(0, chars) ?? "")),
  summary: (input: SummaryInput): string => wasm.guardSummary(JSON.stringify(input)),
};
