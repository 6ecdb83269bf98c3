/* tslint:disable */
/* eslint-disable */
export const memory: WebAssembly.Memory;
export const __wbg_pass_free: (a: number, b: number) => void;
export const buildReport: (a: number, b: number, c: number, d: number, e: number, f: number, g: any) => [number, number, number, number];
export const finishPass: (a: number, b: number, c: number) => [number, number, number, number];
export const guardSavings: (a: number, b: number, c: number, d: number, e: number, f: number, g: any) => [number, number];
export const guardSummary: (a: number, b: number) => [number, number, number, number];
export const parseSettings: (a: number, b: number) => [number, number];
export const pass_skipped: (a: number) => [number, number];
export const pass_takeRequests: (a: number) => [number, number];
export const planPass: (a: number, b: number, c: number, d: number, e: number, f: number) => [number, number, number];
export const recall: (a: number, b: number) => [number, number, number, number];
export const recallToolInfo: () => [number, number];
export const sanitizeLine: (a: number, b: number, c: number) => [number, number];
export const setEnabled: (a: number, b: number, c: number) => [number, number, number, number];
export const shortCount: (a: number) => [number, number];
export const toolLabel: (a: number, b: number, c: number, d: number) => [number, number];
export const version: () => [number, number];
export const __wbindgen_malloc: (a: number, b: number) => number;
export const __wbindgen_realloc: (a: number, b: number, c: number, d: number) => number;
export const __wbindgen_free: (a: number, b: number, c: number) => void;
export const __wbindgen_exn_store: (a: number) => void;
export const __externref_table_alloc: () => number;
export const __wbindgen_externrefs: WebAssembly.Table;
export const __externref_table_dealloc: (a: number) => void;
export const __wbindgen_start: () => void;
