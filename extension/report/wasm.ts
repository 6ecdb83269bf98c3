// The report's core call, typed. It can throw on malformed input: call it
// through `callCore`.
import * as wasm from "../../pkg/context_guard.js";
import "../core.ts"; // instantiates the wasm module before any call
import type { ContextInputs, ContextReport } from "./types.ts";

export const reportCore = {
  // The per-message columns and the per-request series cross as typed arrays (a copy of
  // memory), the rest as one small JSON text; the core asks `describe` for the five messages it lists, and returns a few
  // kilobytes of JSON (tests/bench/report.bench.ts). Rust leaves a None field out, so it
  // reads as undefined.
  buildReport: (inputs: ContextInputs): ContextReport => {
    const { tokens, kind, kinds, describe } = inputs.messages;
    // A caller that built its inputs by hand may leave the series out: then there is none.
    const { tokens: series = [], marks = [], ...requests } = inputs.requests ?? {};
    const text = JSON.stringify({ ...inputs, messages: { kinds }, requests });
    const columns = [tokens, kind, Float64Array.from(series), Uint32Array.from(marks)] as const;
    return JSON.parse(wasm.buildReport(text, ...columns, (index: number) => JSON.stringify(describe(index))));
  },
};
