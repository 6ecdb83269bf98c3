// The WebAssembly core, loaded synchronously when the extension loads.
//
// Every call into the core goes through `callCore`, which turns a trap or a
// thrown error into a value: an exception never reaches Pi from here.
import { readFileSync } from "node:fs";
import * as wasm from "../pkg/context_guard.js";
import type { ContextInputs, ContextReport } from "./report/types.ts";

const started = performance.now();
wasm.initSync({ module: readFileSync(new URL("../pkg/context_guard_bg.wasm", import.meta.url)) });

/** Milliseconds spent reading, compiling and instantiating the wasm at load. */
export const coreLoadMs = performance.now() - started;

export type CoreResult<T> = { ok: true; value: T } | { ok: false; error: string };

/** Calls a core export and returns its value or the error's message. */
export function callCore<T>(call: () => T): CoreResult<T> {
  try {
    return { ok: true, value: call() };
  } catch (error) {
    return { ok: false, error: error instanceof Error ? error.message : String(error) };
  }
}

export const core = {
  version: (): string => wasm.version(),
  // The per-message columns cross as typed arrays (a copy of memory), the rest as one small
  // JSON text; the core asks `describe` for the five messages it lists, and returns a few
  // kilobytes of JSON (tests/bench/report.bench.ts). Rust leaves a None field out, so it
  // reads as undefined.
  buildReport: (inputs: ContextInputs): ContextReport => {
    const { tokens, kind, kinds, systems, describe } = inputs.messages;
    const text = JSON.stringify({ ...inputs, messages: { kinds, systems } });
    return JSON.parse(wasm.buildReport(text, tokens, kind, (index: number) => JSON.stringify(describe(index))));
  },
  sanitizeLine: (text: string, max: number): string => wasm.sanitizeLine(text, max),
};
