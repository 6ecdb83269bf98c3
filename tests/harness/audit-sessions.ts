// Generated Pi session files (format v3, as Pi 1.3.0 and 1.6.0 write them)
// for the audit's size tests, its page test and the benchmark: runs of a
// prompt, tool calls with outputs of a chosen size, and a reply, each
// assistant message with usage priced as a model's catalog prices it. On
// request: the guard's edits and records after each run (a session with the
// guard on), a compaction, a chosen start date, folder and first prompt.
// Written in pieces, so a 200 MB file never exists whole in memory.
import { createWriteStream } from "node:fs";

export interface Shape {
  /** Stop once the file reaches this many bytes. */
  bytes: number;
  /** Characters of each tool output. */
  outputChars: number;
  /** Tool calls per run. */
  callsPerRun: number;
  /** The header's `timestamp` (default the epoch). */
  startedAt?: string;
  /** The header's `cwd` (default `/generated`). */
  cwd?: string;
  /** The first prompt's text (default `run 1: find the handler`). */
  prompt?: string;
  /** The tools called, in turn (default `bash` only). */
  tools?: string[];
  /**
   * The guard on: after each run it keeps `keep` of each output (a `context_edit` with the rest cut, and
   * a `context-guard` record of the pass), and the context grows by what it kept only.
   */
  guard?: { keep: number };
  /** A compaction after this run (1-based): the context starts again from its summary. */
  compactAfterRun?: number;
}

/** Dollars per token, as a catalog prices a mid-size model: input, output, cache read, cache write. */
export const PRICES = { input: 3e-6, output: 15e-6, cacheRead: 0.3e-6, cacheWrite: 3.75e-6 };

const TOOL_ARGS: Record<string, (n: number) => object> = {
  bash: (n) => ({ command: `rg -n handler part${n}` }),
  read: (n) => ({ path: `src/module/part${n}.ts` }),
};

/** Writes a session to `path`; resolves to what it wrote: bytes, runs, tool results, requests, records, edits. */
export async function writeSession(
  path: string,
  shape: Shape,
): Promise<{ bytes: number; runs: number; results: number; requests: number; records: number; edits: number; cost: number }> {
  const out = createWriteStream(path);
  let bytes = 0;
  const write = async (entry: object) => {
    const line = `${JSON.stringify(entry)}\n`;
    bytes += Buffer.byteLength(line);
    if (!out.write(line)) await new Promise<void>((r) => out.once("drain", () => r()));
  };
  let id = 0;
  let parent: string | null = null;
  const at = shape.startedAt ?? new Date(0).toISOString();
  const next = async (entry: Record<string, unknown>) => {
    const own = `e${++id}`;
    await write({ ...entry, id: own, parentId: parent, timestamp: at });
    parent = own;
    return own;
  };
  await write({ type: "session", version: 3, id: "generated", timestamp: at, cwd: shape.cwd ?? "/generated" });
  const line = "src/module/file.ts:42: export function handler(request: Request) { return respond(request); }\n";
  const output = line.repeat(Math.ceil(shape.outputChars / line.length)).slice(0, shape.outputChars);
  const tools = shape.tools ?? ["bash"];
  const kept = shape.guard ? Math.round(shape.outputChars * shape.guard.keep) : shape.outputChars;
  let runs = 0;
  let results = 0;
  let requests = 0;
  let records = 0;
  let edits = 0;
  let cost = 0;
  let context = 1000;
  const usage = () => {
    const u = { input: 10, output: 50, cacheRead: context, cacheWrite: 500 };
    const c = {
      input: u.input * PRICES.input,
      output: u.output * PRICES.output,
      cacheRead: u.cacheRead * PRICES.cacheRead,
      cacheWrite: u.cacheWrite * PRICES.cacheWrite,
    };
    const total = c.input + c.output + c.cacheRead + c.cacheWrite;
    cost += total;
    return { ...u, totalTokens: context + 560, cost: { ...c, total } };
  };
  const reply = (content: object[], stopReason: string) => ({
    role: "assistant",
    content,
    provider: "anthropic",
    api: "anthropic-messages",
    model: "m",
    usage: usage(),
    stopReason,
    timestamp: 0,
  });
  while (bytes < shape.bytes) {
    runs++;
    const prompt = runs === 1 && shape.prompt !== undefined ? shape.prompt : `run ${runs}: find the handler`;
    const promptId = await next({ type: "message", message: { role: "user", content: [{ type: "text", text: prompt }], timestamp: 0 } });
    const outputs: { id: string; tool: string; label: string }[] = [];
    for (let c = 0; c < shape.callsPerRun; c++) {
      const call = `call_${runs}_${c}`;
      const tool = tools[c % tools.length];
      const args = (TOOL_ARGS[tool] ?? (() => ({ query: `part${c}` })))(c);
      requests++;
      await next({ type: "message", message: reply([{ type: "toolCall", id: call, name: tool, arguments: args }], "toolUse") });
      const result = await next({
        type: "message",
        message: { role: "toolResult", toolCallId: call, toolName: tool, content: [{ type: "text", text: output }], isError: false, timestamp: 0 },
      });
      outputs.push({ id: result, tool, label: `${tool} ${JSON.stringify(args)}` });
      results++;
      context += Math.ceil(shape.outputChars / 4);
    }
    requests++;
    await next({ type: "message", message: reply([{ type: "text", text: "The handler is in src/module/file.ts." }], "stop") });
    if (shape.guard && outputs.length > 0) {
      // As the guard's run-end pass writes them: the edits first, then the record of the pass.
      for (const o of outputs) {
        await next({
          type: "context_edit",
          targetId: o.id,
          replacement: {
            content: [
              { type: "text", text: `${output.slice(0, kept)}\n[context-guard: ${shape.outputChars - kept} chars kept out; recall({"entryId":"${o.id}"})]` },
            ],
          },
        });
        edits++;
      }
      const results = outputs.map((o) => ({
        kind: "large",
        entryId: o.id,
        tool: o.tool,
        label: o.label,
        outcome: "distilled",
        reason: "chunks",
        beforeChars: shape.outputChars,
        afterChars: kept,
      }));
      await next({
        type: "custom",
        customType: "context-guard",
        data: {
          v: 1,
          phase: "run-end",
          model: "anthropic/small",
          savedChars: (shape.outputChars - kept) * outputs.length,
          requests: 1,
          inputTokens: 2000,
          costUsd: 0.0004,
          ms: 900,
          timedOut: false,
          results,
        },
      });
      records++;
      context -= Math.ceil(((shape.outputChars - kept) * outputs.length) / 4);
    }
    if (shape.compactAfterRun === runs) {
      await next({ type: "compaction", summary: "## Goal\nFind the handler.", firstKeptEntryId: promptId, tokensBefore: context });
      context = 1000;
    }
  }
  await new Promise<void>((r, j) => out.end((e?: Error | null) => (e ? j(e) : r())));
  return { bytes, runs, results, requests, records, edits, cost };
}
