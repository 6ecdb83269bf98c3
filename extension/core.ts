// The WebAssembly core, loaded synchronously when the extension loads.
//
// Every call into the core goes through `callCore`, which turns a trap or a
// thrown error into a value: an exception never reaches Pi from here. The
// typed wrappers of each part's calls live with the part (report/wasm.ts,
// guard/wasm.ts); this file keeps only what both use.
import { readFileSync } from "node:fs";
import * as wasm from "../pkg/context_guard.js";

const started = performance.now();
wasm.initSync({ module: readFileSync(new URL("../pkg/context_guard_bg.wasm", import.meta.url)) });

/** Milliseconds spent reading, compiling and instantiating the wasm at load. */
export const coreLoadMs = performance.now() - started;

/**
 * Text blocks at least this long cross into the core beside its JSON, as UTF-8 in one buffer (shorter
 * ones cost less inside it): the pass's and the audit's inputs both.
 */
export const OUT_OF_LINE_CHARS = 256;

/**
 * A session entry or message as Pi wrote it, read defensively: its fields are checked where they are
 * used, since a saved session may come from any Pi version.
 */
// biome-ignore lint/suspicious/noExplicitAny: untyped JSON from Pi's session files, each field checked where read
export type Loose = Record<string, any>;

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
  sanitizeLine: (text: string, max: number): string => wasm.sanitizeLine(text, max),
};
