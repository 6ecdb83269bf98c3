// An Anthropic main model on loopback (spec/pi-offline.md "An Anthropic main
// model, on loopback"): a local HTTP server speaking the Messages API's
// streamed replies, answering Pi's own `anthropic` provider (the official SDK,
// `claude-sonnet-4-5` from Pi's catalog) from a script, and recording every
// request body Pi sends. With it, the guard sees a real Anthropic model (its
// cache rules, its API) and a benchmark measures what Pi puts on the wire.
import { writeFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import type { Loose } from "./pi.ts";
import type { Call, PiSession, Said, SessionOptions, Step } from "./session.ts";

export const ANTHROPIC_MODEL = "claude-sonnet-4-5";

export interface AnthropicServer {
  url: string;
  /** Every request body Pi sent to `/v1/messages`, oldest first. */
  bodies: Loose[];
  /** Turns left unused in the script. */
  pendingSteps: () => number;
  close: () => Promise<void>;
}

const event = (type: string, data: Record<string, unknown>) => `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;

/**
 * Starts the server on 127.0.0.1. Each request takes the next step of
 * `script` (text, calls or text with calls; a step function is given the
 * request body); with the script used up it answers "done". The usage it
 * reports counts the body's characters ÷ 4 as input, none cached (the
 * benchmarks count the cache themselves).
 */
export async function startAnthropicServer(script: Step[]): Promise<AnthropicServer> {
  const steps = [...script];
  const bodies: Loose[] = [];
  let calls = 0;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      if (req.method !== "POST" || !req.url?.startsWith("/v1/messages")) {
        res.writeHead(404, { "content-type": "application/json" });
        res.end(JSON.stringify({ type: "error", error: { type: "not_found_error", message: `no ${req.method} ${req.url} here` } }));
        return;
      }
      let body: Loose;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString("utf8"));
      } catch (error) {
        res.writeHead(400, { "content-type": "application/json" });
        res.end(JSON.stringify({ type: "error", error: { type: "invalid_request_error", message: `body is not JSON: ${error}` } }));
        return;
      }
      bodies.push(body);
      const next = steps.shift();
      const step = typeof next === "function" ? next(body) : (next ?? "done");
      const said = typeof step === "object" && step !== null && "say" in step ? (step as Said) : undefined;
      const text = typeof step === "string" ? step : said?.say;
      const toolCalls = (said ? said.calls : typeof step === "string" ? [] : Array.isArray(step) ? step : [step]) as Call[];
      const blocks: string[] = [];
      let index = 0;
      if (text) {
        blocks.push(event("content_block_start", { index, content_block: { type: "text", text: "" } }));
        blocks.push(event("content_block_delta", { index, delta: { type: "text_delta", text } }));
        blocks.push(event("content_block_stop", { index }));
        index++;
      }
      for (const c of toolCalls) {
        const id = c.id ?? `toolu_${String(++calls).padStart(4, "0")}`;
        blocks.push(event("content_block_start", { index, content_block: { type: "tool_use", id, name: c.tool, input: {} } }));
        blocks.push(event("content_block_delta", { index, delta: { type: "input_json_delta", partial_json: JSON.stringify(c.args) } }));
        blocks.push(event("content_block_stop", { index }));
        index++;
      }
      const input = Math.ceil(Buffer.concat(chunks).length / 4);
      const output = Math.ceil((text?.length ?? 0) / 4) + toolCalls.reduce((n, c) => n + Math.ceil(JSON.stringify(c.args).length / 4), 0);
      res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
      res.end(
        [
          event("message_start", {
            message: {
              id: `msg_${bodies.length}`,
              type: "message",
              role: "assistant",
              content: [],
              model: body.model ?? ANTHROPIC_MODEL,
              stop_reason: null,
              stop_sequence: null,
              usage: { input_tokens: input, output_tokens: 1, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 },
            },
          }),
          ...blocks,
          event("message_delta", { delta: { stop_reason: toolCalls.length ? "tool_use" : "end_turn", stop_sequence: null }, usage: { output_tokens: output } }),
          event("message_stop", {}),
        ].join(""),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    bodies,
    pendingSteps: () => steps.length,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/**
 * What a session needs to talk to `server` as Pi's `anthropic` provider: the
 * agent dir's models.json pointing the provider at it (Pi's cache warming
 * off, so no request the script did not plan), and, once the session is up,
 * `select(pi)` to switch it to the catalog's model. `ANTHROPIC_API_KEY` must
 * be set (to anything) while the session runs; `select` sets it.
 */
export function anthropicSession(server: AnthropicServer): { options: SessionOptions; select: (pi: PiSession) => Promise<void> } {
  let registry: Loose;
  const options: SessionOptions = {
    beforeStart: (agentDir) => writeFileSync(join(agentDir, "models.json"), JSON.stringify({ providers: { anthropic: { baseUrl: server.url } } })),
    piSettings: { cacheWarming: "off" },
    extensions: [
      (pi: Loose) =>
        pi.on("session_start", (_event: unknown, ctx: Loose) => {
          registry = ctx.modelRegistry;
        }),
    ],
  };
  const select = async (pi: PiSession) => {
    process.env.ANTHROPIC_API_KEY = "loopback-key";
    const model = registry?.find?.("anthropic", ANTHROPIC_MODEL);
    if (!model) throw new Error(`anthropic-server: Pi's model registry has no anthropic/${ANTHROPIC_MODEL}`);
    await pi.session.setModel(model);
    await pi.session.setThinkingLevel?.("off");
  };
  return { options, select };
}
