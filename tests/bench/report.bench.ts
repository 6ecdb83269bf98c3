// Benchmark: the /context report for a 5,000-message session (budget 20 ms),
// through the real path — `readReport`: the collector (Pi's estimateTokens on
// every message, into typed arrays) and one call into the wasm core — against
// a straightforward TypeScript version of the same computation
// (tests/bench/reference/report.ts) over the same collected inputs, in the same
// process. The two reports are checked to agree first, and the counts the
// report event carries are checked against Pi's estimateTokens.
//
// The product requires the wasm path to be faster than the TypeScript one; the
// last lines print the ratios TS / wasm (above 1: wasm is faster). The check
// gates the build's: the collector and the export around it are the same code
// in both paths, so the whole's ratio is the build's diluted by shared work
// (about 1.1×), and a noisy machine can tip it either way.
//
// The session is synthetic but sized like a long real one: a system message,
// user prompts of 0.1–1.5 KB, assistant turns with thinking, text and tool
// calls, tool results from 0.5 KB to 40 KB, custom messages of 12 types, shell
// executions and a few images. Pi's own projection is not timed (the stub
// returns a prebuilt one): the budget is this package's work.
import assert from "node:assert/strict";
import { estimateTokens } from "@earendil-works/pi-coding-agent";
import { reportCore as core } from "../../extension/report/wasm.ts";
import { collect } from "../../extension/report/collect.ts";
import { REPORT_EVENT, type ReportEvent, readReport } from "../../extension/report/actions.ts";
import { toExport } from "../../extension/report/export.ts";
import type { ContextReport } from "../../extension/report/types.ts";
import { buildReport as reference } from "./reference/report.ts";
import { alternatingMedians } from "./alternating.ts";
import { faster, timeBudget } from "./verdict.ts";

const MESSAGES = 5_000;
let seed = 42;
const random = () => {
  seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
  return seed / 2 ** 31;
};
const text = (min: number, max: number) => {
  const n = Math.floor(min + random() * (max - min));
  const words = ["alpha", "beta", "status", "retry", "503", "handler", "src/lib/a.ts", "const", "return", "日本語", "😀"];
  let s = "";
  while (s.length < n) s += `${words[Math.floor(random() * words.length)]} `;
  return s.slice(0, n);
};
const PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";

// 50 tool definitions (Pi's four, 46 from extensions or MCP) and 20 context files, in the system message.
const toolDefs = Array.from({ length: 50 }, (_, i) => ({
  name: ["read", "bash", "edit", "write"][i] ?? `mcp_tool_${i}`,
  description: text(150, 350),
  parameters: { type: "object", properties: { path: { type: "string", description: text(30, 60) } } },
}));
const contextFiles = Array.from(
  { length: 20 },
  (_, i) => `<project_instructions path="/work/repo/pkg${i}/AGENTS.md">\n${text(300, 3000)}\n</project_instructions>`,
);
const sections = {
  preamble: text(200, 300),
  rules: text(2000, 3000),
  docs: text(4000, 6000),
  project_context: `<project_context>\nProject-specific instructions and guidelines:\n\n${contextFiles.join("\n\n")}\n</project_context>`,
  cwd: "<cwd>\n/work/repo\n</cwd>",
};
// synthetic Pi messages are loosely typed
const messages: any[] = [{ role: "system", content: "", sections, toolsAdded: toolDefs, timestamp: 0 }];
// Each reply's usage, as a provider reports it: the context grows with the session.
const usage = (i: number) => ({
  input: 200,
  output: 300,
  cacheRead: 40 * i,
  cacheWrite: 500,
  totalTokens: 1000 + 40 * i,
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0.001 },
});
let call = 0;
while (messages.length < MESSAGES) {
  const i = messages.length;
  if (i % 97 === 0) messages.push({ role: "custom", customType: `pack-${i % 12}`, content: text(200, 8000), display: true, timestamp: i });
  else if (i % 101 === 0)
    messages.push({
      role: "bashExecution",
      command: `rg -n status src/${i}`,
      output: text(500, 20_000),
      exitCode: 0,
      cancelled: false,
      truncated: false,
      timestamp: i,
    });
  const content: unknown[] = [{ type: "text", text: text(100, 1500) }];
  if (i % 400 === 1) content.push({ type: "image", data: PNG, mimeType: "image/png" });
  messages.push({ role: "user", content, timestamp: i });
  const tools = 1 + Math.floor(random() * 3);
  for (let t = 0; t < tools && messages.length < MESSAGES - 2; t++) {
    const id = `call_${++call}`;
    messages.push({
      role: "assistant",
      content: [
        { type: "thinking", thinking: text(200, 3000) },
        { type: "text", text: text(50, 800) },
        { type: "toolCall", id, name: t % 2 ? "read" : "bash", arguments: { command: text(20, 200) } },
      ],
      stopReason: "toolUse",
      usage: usage(i),
      timestamp: i,
    });
    const size = Math.floor(500 * 80 ** random());
    messages.push({
      role: "toolResult",
      toolCallId: id,
      toolName: t % 2 ? "read" : "bash",
      content: [{ type: "text", text: text(size, size + 1) }],
      isError: false,
      timestamp: i,
    });
  }
  messages.push({ role: "assistant", content: [{ type: "text", text: text(200, 2000) }], stopReason: "stop", usage: usage(i), timestamp: i });
}
messages.length = MESSAGES;
const chars = messages.reduce((s, m) => s + JSON.stringify(m).length, 0);

const projection = { messages, entries: messages.map((m, i) => ({ sourceEntry: { id: `e${i}` }, messages: [m] })) };
const branch = messages.map((m, i) => ({ type: "message", id: `e${i}`, message: m }));
const events: ReportEvent[] = [];
// stand-ins for Pi's ExtensionAPI and ExtensionContext
const pi: any = {
  getActiveTools: () => toolDefs.map((t) => t.name),
  getAllTools: () => toolDefs,
  getSettings: () => ({}),
  events: { emit: (_: string, report: ReportEvent) => events.length < 1 && events.push(report) },
};
// as above
const ctx: any = {
  sessionManager: { buildSessionProjection: () => projection, getBranch: () => branch, getEntries: () => branch },
  getContextUsage: () => ({ tokens: 4_200_000, contextWindow: 10_000_000, percent: 42 }),
  model: { provider: "faux", id: "faux-1", contextWindow: 10_000_000 },
  getSystemPrompt: () => text(9000, 9001),
};

const viaWasm = (): ContextReport => {
  const result = readReport(pi, ctx);
  if (!result.ok) throw new Error(result.error);
  return result.value;
};
// The same path around the build as readReport's (the series, the export, the event), so that the
// two differ only in the step compared: a reference without that shared work would win by it.
const viaTypeScript = (): ContextReport => {
  const inputs = collect(pi, ctx);
  const report = reference(inputs);
  report.series = { tokens: inputs.requests.tokens, marks: inputs.requests.marks };
  const event = toExport(report, inputs.messages.tokens, ctx.sessionManager.getSessionId?.() ?? "");
  pi.events.emit(REPORT_EVENT, event);
  return event;
};

// The two agree on every figure the reference computes.
const a = viaWasm();
const b = viaTypeScript();
const figures = (r: ContextReport) => ({
  headline: { tokens: r.headline.tokens, window: r.headline.window, free: r.headline.free },
  threshold: { at: r.threshold.at, headroom: r.threshold.headroom, reserve: r.threshold.reserve },
  windowGauge: r.windowGauge,
  estimate: r.estimate,
  rows: r.rows,
  drift: r.drift,
  requests: r.requests,
  largest: r.largest,
});
assert.deepEqual(figures(a), figures(b));
assert.equal(a.largest.length, 5);
// The event carries each message's count as the core read it: Pi's own estimateTokens.
assert.deepEqual(
  events[0]?.counts,
  messages.map((m) => estimateTokens(m)),
);

function median(run: () => unknown, samples = 101): number {
  for (let i = 0; i < 5; i++) run();
  const times: number[] = [];
  for (let i = 0; i < samples; i++) {
    const start = performance.now();
    run();
    times.push(performance.now() - start);
  }
  times.sort((x, y) => x - y);
  return times[Math.floor(times.length / 2)];
}

const inputs = collect(pi, ctx);
const collectMs = median(() => collect(pi, ctx));
// The build is the step the two paths differ in (the rest is the same code on both sides), so its
// ratio is the one gated; alternating too, for the same reason as the whole's.
const [coreMs, referenceMs] = alternatingMedians([() => core.buildReport(inputs), () => reference(inputs)], 5, 301);
// The two whole paths alternate, sample by sample, so that a machine's slow
// spell falls on both alike and the ratio the check gates on stays the ratio.
const [wasmTotal, tsTotal] = alternatingMedians([viaWasm, viaTypeScript], 5, 301);
const ms = (n: number) => `${n.toFixed(2)} ms`.padStart(9);
console.log(
  `/context report, ${MESSAGES} messages (${(chars / 1e6).toFixed(1)} MB of message JSON), medians of 101 warm runs (the whole report: 301, alternating):`,
);
console.log("                                       wasm path   TypeScript   TS / wasm");
console.log(`  collect (Pi's estimateTokens, kinds) ${ms(collectMs)}    ${ms(collectMs)}   (shared code)`);
console.log(`  build (the report from the inputs)   ${ms(coreMs)}    ${ms(referenceMs)}   ${(referenceMs / coreMs).toFixed(2)}x`);
console.log(`  whole report (collect + build)       ${ms(wasmTotal)}    ${ms(tsTotal)}   ${(tsTotal / wasmTotal).toFixed(2)}x`);
console.log(`  wasm path ${timeBudget("/context report", wasmTotal, 20)} (20 ms); its build ${faster("/context report", referenceMs / coreMs)}`);
