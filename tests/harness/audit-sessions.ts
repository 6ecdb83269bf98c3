// Generated Pi session files (format v3, as Pi 1.3.0 and 1.6.0 write them)
// for the audit's size tests and benchmark: runs of a prompt, tool calls with
// outputs of a chosen size, and a reply, each assistant message with usage.
// Written in pieces, so a 200 MB file never exists whole in memory.
import { createWriteStream } from "node:fs";

export interface Shape {
  /** Stop once the file reaches this many bytes. */
  bytes: number;
  /** Characters of each tool output. */
  outputChars: number;
  /** Tool calls per run. */
  callsPerRun: number;
}

/** Writes a session to `path`; resolves to what it wrote: bytes, runs, tool results, requests. */
export async function writeSession(path: string, shape: Shape): Promise<{ bytes: number; runs: number; results: number; requests: number }> {
  const out = createWriteStream(path);
  let bytes = 0;
  const write = async (entry: object) => {
    const line = `${JSON.stringify(entry)}\n`;
    bytes += Buffer.byteLength(line);
    if (!out.write(line)) await new Promise<void>((r) => out.once("drain", () => r()));
  };
  let id = 0;
  let parent: string | null = null;
  const at = new Date(0).toISOString();
  const next = async (entry: Record<string, unknown>) => {
    const own = `e${++id}`;
    await write({ ...entry, id: own, parentId: parent, timestamp: at });
    parent = own;
  };
  await write({ type: "session", version: 3, id: "generated", timestamp: at, cwd: "/generated" });
  const line = "src/module/file.ts:42: export function handler(request: Request) { return respond(request); }\n";
  const output = line.repeat(Math.ceil(shape.outputChars / line.length)).slice(0, shape.outputChars);
  let runs = 0;
  let results = 0;
  let requests = 0;
  let context = 1000;
  const usage = () => ({ input: 10, output: 50, cacheRead: context, cacheWrite: 500, totalTokens: context + 560, cost: { input: 0, output: 0, cacheRead: 0.0003, cacheWrite: 0.001, total: 0.0013 } });
  while (bytes < shape.bytes) {
    runs++;
    await next({ type: "message", message: { role: "user", content: [{ type: "text", text: `run ${runs}: find the handler` }], timestamp: 0 } });
    for (let c = 0; c < shape.callsPerRun; c++) {
      const call = `call_${runs}_${c}`;
      requests++;
      await next({ type: "message", message: { role: "assistant", content: [{ type: "toolCall", id: call, name: "bash", arguments: { command: `rg -n handler part${c}` } }], provider: "anthropic", api: "anthropic-messages", model: "m", usage: usage(), stopReason: "toolUse", timestamp: 0 } });
      await next({ type: "message", message: { role: "toolResult", toolCallId: call, toolName: "bash", content: [{ type: "text", text: output }], isError: false, timestamp: 0 } });
      results++;
      context += Math.ceil(shape.outputChars / 4);
    }
    requests++;
    await next({ type: "message", message: { role: "assistant", content: [{ type: "text", text: "The handler is in src/module/file.ts." }], provider: "anthropic", api: "anthropic-messages", model: "m", usage: usage(), stopReason: "stop", timestamp: 0 } });
  }
  await new Promise<void>((r, j) => out.end((e?: Error | null) => (e ? j(e) : r())));
  return { bytes, runs, results, requests };
}
