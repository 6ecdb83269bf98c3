// The report's core call, typed. It can throw on malformed input: call it
// through `callCore`.
import * as wasm from "../../pkg/context_guard.js";
import "../core.ts"; // instantiates the wasm module before any call
import type { ContextInputs, ContextReport } from "./types.ts";

export const reportCore = {
  // The per-message columns cross as typed arrays (a copy of memory), the rest as one small
  // JSON text; the core asks `describe` for the five messages it lists, and returns a few
  // kilobytes of JSON (tests/bench/report.bench.ts). Rust leaves a None field out, so it
  // reads as undefined.
  buildReport: (inputs: ContextInputs): ContextReport => {
    const { tokens, kind, kinds, describe } = inputs.messages;
    const text = JSON.stringify({ ...inputs, messages: { kinds } });
    return JSON.parse(wasm.buildReport(text, tokens, kind, (index: number) => JSON.stringify(describe(index))));
  },
};
