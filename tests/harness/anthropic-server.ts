// An Anthropic main model on loopback: a local HTTP server speaking the
// Messages API's streamed replies, answering Pi's own `anthropic` provider
// (the official SDK, `claude-sonnet-4-5` from Pi's catalog, its `baseUrl` set
// in the agent dir's models.json) from a script, and recording every
// request body Pi sends. With it, the guard sees a real Anthropic model (its
// cache rules, its API) and a benchmark measures what Pi puts on the wire.
//
// Its `usage` follows Anthropic's prompt cache (`PromptCache` below), so a
// test or the benchmark reads cache figures that depend on where Pi (and the
// guard's pin) put the `cache_control` breakpoints, not a longest common
// prefix that would make breakpoints irrelevant.
import { createHash } from "node:crypto";
import { createServer, type ServerResponse } from "node:http";
import type { Loose } from "./pi.ts";
import { type Loopback, type LoopbackServer, listenLoopback, loopbackSession } from "./loopback.ts";
import type { Call, Said, Step } from "./session.ts";

export const ANTHROPIC_MODEL = "claude-sonnet-4-5";

// ---------------------------------------------------------------------------
// The prompt cache
//
// Facts from Anthropic's prompt-caching documentation (platform.claude.com
// /docs/en/build-with-claude/prompt-caching, as mirrored by the pages the
// `search` tool found; the page itself was not in the corpus):
// - the prompt is cached as a prefix in the order tools, system, messages;
// - `cache_control` marks a breakpoint; the prefix up to and including that
//   block is what gets cached; at most 4 breakpoints per request (more is a
//   400 "A maximum of 4 blocks with cache_control may be provided");
// - for each breakpoint the API checks for hits at earlier block boundaries,
//   up to 20 blocks back, and uses the longest matching prefix;
// - `cache_read_input_tokens` is what was read, `cache_creation_input_tokens`
//   what was written, `input_tokens` only what comes after the last breakpoint;
// - entries live 5 minutes from their last use ("refreshed for no additional
//   cost each time the cached content is used"), 1 hour with `ttl: "1h"`;
//   `ttl` is "5m" or "1h", and longer TTLs must come before shorter ones;
// - prompts shorter than a per-model minimum are not cached even when marked
//   (1,024 tokens for Sonnet 4.5, Sonnet 4, Opus 4.1, Opus 4, Sonnet 3.7);
// - a hit needs the prefix to match exactly, and entries are per model.
// Choices of this harness, not Anthropic facts: a block's tokens (below), the
// lookback counted as the breakpoint plus the 20 blocks before it, each
// breakpoint's own hit refreshed (not only the request's longest), and only
// content and model in a prefix's identity (Anthropic also invalidates on
// changes to `tool_choice`, thinking settings and images being toggled; Pi
// does not change those within a run, so they are not modelled).
// ---------------------------------------------------------------------------

/** Anthropic's documented 5-minute default and the 1-hour TTL. */
const TTL_MS = { "5m": 5 * 60_000, "1h": 60 * 60_000 } as const;
/** The documented minimum cacheable prompt for Sonnet-class models (claude-sonnet-4-5). */
export const SONNET_MINIMUM_TOKENS = 1024;
/** The documented lookback: a breakpoint finds entries up to 20 blocks before it. */
export const LOOKBACK_BLOCKS = 20;
/** The documented cap on `cache_control` blocks per request. */
export const MAX_BREAKPOINTS = 4;

/** Where the cache reads the time; `manualClock()` lets TTL tests move it. */
export interface Clock {
  now(): number;
}

/** A clock that stands still until `advance(ms)` moves it (starts at `start`). */
export function manualClock(start = 0): Clock & { advance(ms: number): void } {
  let t = start;
  return {
    now: () => t,
    advance(ms: number) {
      if (!Number.isFinite(ms) || ms < 0) throw new Error(`manualClock.advance: ms must be a finite number ≥ 0, got ${ms}`);
      t += ms;
    },
  };
}

export interface CacheOptions {
  /** Default `Date.now`. */
  clock?: Clock;
  /** Prefixes shorter than this are never written (default 1,024, Sonnet's documented minimum). */
  minimumTokens?: number;
  /** How many blocks before a breakpoint its lookup reaches (default 20). */
  lookbackBlocks?: number;
  /** How long the model takes to answer, in real milliseconds (default 0): a main model's latency for the timed runs. */
  delayMs?: number;
}

/** One block of the prompt as the cache sees it. */
export interface PromptBlock {
  /** Where it sits: `tools`, `system` or the message's role. */
  section: string;
  /** Its JSON without any `cache_control`: what identifies it and what it weighs. */
  json: string;
  /**
   * The harness's stand-in for a tokenizer: ceil(json.length / 4). Pi's own
   * estimate uses the same 4 characters a token.
   */
  tokens: number;
  /** Set when the block carries `cache_control`: its TTL in ms. */
  breakpointTtlMs?: number;
}

/**
 * Where a Messages body has `cache_control` breakpoints, in cache order: `tools[i]`, `system[i]`,
 * `messages[i][k]` (string content has none).
 */
export function breakpointsOf(body: Loose): string[] {
  const at: string[] = [];
  const scan = (blocks: unknown, name: string) => {
    if (Array.isArray(blocks)) blocks.forEach((b: Loose, i: number) => b?.cache_control && at.push(`${name}[${i}]`));
  };
  scan(body.tools, "tools");
  scan(body.system, "system");
  (Array.isArray(body.messages) ? body.messages : []).forEach((m: Loose, i: number) => scan(m?.content, `messages[${i}]`));
  return at;
}

/** The request's prompt as blocks, with breakpoints; throws a clear message on what Anthropic rejects. */
export function promptBlocks(body: Loose): PromptBlock[] {
  if (typeof body !== "object" || body === null) throw new Error("body must be a JSON object");
  if (!Array.isArray(body.messages)) throw new Error("messages: Field required (an array)");
  const blocks: PromptBlock[] = [];
  const add = (section: string, block: unknown, where: string) => {
    if (typeof block !== "object" || block === null) throw new Error(`${where}: each block must be an object`);
    // cache_control is not content: a prefix keeps its identity when the
    // breakpoint moves (Pi moves its rolling one every request).
    const json = JSON.stringify(block, (key, value) => (key === "cache_control" ? undefined : value));
    const control = (block as { cache_control?: { ttl?: unknown } }).cache_control;
    let breakpointTtlMs: number | undefined;
    if (control !== undefined) {
      const ttl = control?.ttl ?? "5m";
      if (ttl !== "5m" && ttl !== "1h") throw new Error(`${where}.cache_control.ttl: must be "5m" or "1h", got ${JSON.stringify(ttl)}`);
      breakpointTtlMs = TTL_MS[ttl];
    }
    blocks.push({ section, json, tokens: Math.ceil(json.length / 4), breakpointTtlMs });
  };
  (Array.isArray(body.tools) ? body.tools : []).forEach((t: unknown, i: number) => add("tools", t, `tools.${i}`));
  // String system and string message content are one text block each.
  const system = typeof body.system === "string" ? [{ type: "text", text: body.system }] : Array.isArray(body.system) ? body.system : [];
  system.forEach((b: unknown, i: number) => add("system", b, `system.${i}`));
  body.messages.forEach((m: Loose, i: number) => {
    const content = typeof m?.content === "string" ? [{ type: "text", text: m.content }] : m?.content;
    if (!Array.isArray(content)) throw new Error(`messages.${i}.content: must be a string or an array of blocks`);
    // The role and where a message starts are part of the prompt, not of a block's size.
    content.forEach((b: unknown, j: number) => add(`${j === 0 ? "+" : ""}${m.role}`, b, `messages.${i}.content.${j}`));
  });
  const marked = blocks.filter((b) => b.breakpointTtlMs !== undefined);
  if (marked.length > MAX_BREAKPOINTS) throw new Error(`A maximum of ${MAX_BREAKPOINTS} blocks with cache_control may be provided. Found ${marked.length}.`);
  marked.forEach((b, i) => {
    if (i > 0 && b.breakpointTtlMs! > marked[i - 1].breakpointTtlMs!)
      throw new Error("a cache_control with ttl 1h may not follow one with ttl 5m (longer TTLs must come first)");
  });
  return blocks;
}

/** What one request read, wrote and left uncached, in tokens. */
export interface CacheCount {
  read: number;
  written: number;
  /** The part of `written` at breakpoints with `ttl: "1h"` (priced 2× instead of 1.25×). */
  written1h: number;
  uncached: number;
}

interface Entry {
  time: number;
  ttlMs: number;
}

/**
 * Anthropic's prompt cache for one server: entries keyed by model and prefix.
 * A prefix's key is a running SHA-256 over its blocks (key(i) = H(key(i-1),
 * block i)), so a request costs one pass over its body however long it is and
 * however many breakpoints it has, and two prefixes share a key only when
 * every block (and the model) matches.
 */
export class PromptCache {
  readonly entries = new Map<string, Entry>();
  readonly clock: Clock;
  readonly minimumTokens: number;
  readonly lookbackBlocks: number;

  constructor(options: CacheOptions = {}) {
    this.clock = options.clock ?? { now: Date.now };
    this.minimumTokens = options.minimumTokens ?? SONNET_MINIMUM_TOKENS;
    this.lookbackBlocks = options.lookbackBlocks ?? LOOKBACK_BLOCKS;
  }

  /** Counts one request and updates the cache as Anthropic would (reads refresh, writes at breakpoints). */
  count(body: Loose): CacheCount {
    const blocks = promptBlocks(body);
    const now = this.clock.now();
    for (const [key, e] of this.entries) if (now - e.time >= e.ttlMs) this.entries.delete(key);

    const keys: string[] = [];
    const through: number[] = []; // tokens of the prefix ending at block i
    let key = createHash("sha256")
      .update(`model\0${String(body.model)}`)
      .digest("hex");
    let total = 0;
    for (const b of blocks) {
      key = createHash("sha256").update(key).update(`\0${b.section}\0`).update(b.json).digest("hex");
      keys.push(key);
      through.push((total += b.tokens));
    }
    const breakpoints = blocks.flatMap((b, i) => (b.breakpointTtlMs === undefined ? [] : [i]));

    // Each breakpoint looks back for its longest live entry; the request reads the longest of those.
    let readEnd = -1;
    for (const b of breakpoints) {
      for (let k = b; k >= Math.max(0, b - this.lookbackBlocks); k--) {
        const hit = this.entries.get(keys[k]);
        if (!hit) continue;
        hit.time = now;
        readEnd = Math.max(readEnd, k);
        break;
      }
    }
    const read = readEnd < 0 ? 0 : through[readEnd];

    // Every breakpoint past the read whose prefix is long enough becomes an
    // entry; what lies between the read and the last of them is written.
    let written = 0;
    let written1h = 0;
    let end = read;
    for (const b of breakpoints) {
      if (b <= readEnd || through[b] < this.minimumTokens) continue;
      const ttlMs = blocks[b].breakpointTtlMs!;
      this.entries.set(keys[b], { time: now, ttlMs });
      written += through[b] - end;
      if (ttlMs === TTL_MS["1h"]) written1h += through[b] - end;
      end = through[b];
    }
    return { read, written, written1h, uncached: total - read - written };
  }
}

// ---------------------------------------------------------------------------
// The server
// ---------------------------------------------------------------------------

/** What the server reported for one request (`message_start` and `message_delta`). */
export interface RequestUsage extends CacheCount {
  output: number;
  model: string;
  /** The cache clock's time of the request. */
  at: number;
  /** Set when the request was answered with a 400 (its figures are then 0). */
  rejected?: string;
}

/** The bodies are those sent to `/v1/messages`. */
export type AnthropicServer = LoopbackServer<RequestUsage, PromptCache>;

const event = (type: string, data: Record<string, unknown>) => `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;

/**
 * Starts the server on 127.0.0.1. Each request takes the next step of
 * `script` (text, calls or text with calls; a step function is given the
 * request body); with the script used up it answers "done". Its usage is
 * `PromptCache`'s count of the body (`options` set its clock, minimum and
 * lookback); a body Anthropic would reject (more than 4 breakpoints, a bad
 * `ttl`) gets Anthropic's 400 and takes no step.
 */
export async function startAnthropicServer(script: Step[], options: CacheOptions = {}): Promise<AnthropicServer> {
  const steps = [...script];
  const bodies: Loose[] = [];
  const usage: RequestUsage[] = [];
  const answered: number[] = [];
  const cache = new PromptCache(options);
  let calls = 0;
  const fail = (res: ServerResponse, status: number, type: string, message: string) => {
    res.writeHead(status, { "content-type": "application/json" });
    res.end(JSON.stringify({ type: "error", error: { type, message } }));
  };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      if (req.method !== "POST" || !req.url?.startsWith("/v1/messages")) return fail(res, 404, "not_found_error", `no ${req.method} ${req.url} here`);
      let body: Loose;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString("utf8"));
      } catch (error) {
        return fail(res, 400, "invalid_request_error", `body is not JSON: ${error}`);
      }
      bodies.push(body);
      const model = String(body?.model ?? ANTHROPIC_MODEL);
      let counted: CacheCount;
      try {
        counted = cache.count(body);
      } catch (error) {
        const message = error instanceof Error ? error.message : String(error);
        usage.push({ read: 0, written: 0, written1h: 0, uncached: 0, output: 0, model, at: cache.clock.now(), rejected: message });
        return fail(res, 400, "invalid_request_error", message);
      }
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
      const output = Math.ceil((text?.length ?? 0) / 4) + toolCalls.reduce((n, c) => n + Math.ceil(JSON.stringify(c.args).length / 4), 0);
      usage.push({ ...counted, output, model, at: cache.clock.now() });
      const send = () => {
        answered.push(Date.now());
        res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
        res.end(
          [
            event("message_start", {
              message: {
                id: `msg_${bodies.length}`,
                type: "message",
                role: "assistant",
                content: [],
                model,
                stop_reason: null,
                stop_sequence: null,
                usage: {
                  input_tokens: counted.uncached,
                  output_tokens: 1,
                  cache_read_input_tokens: counted.read,
                  cache_creation_input_tokens: counted.written,
                  cache_creation: { ephemeral_5m_input_tokens: counted.written - counted.written1h, ephemeral_1h_input_tokens: counted.written1h },
                },
              },
            }),
            ...blocks,
            event("message_delta", {
              delta: { stop_reason: toolCalls.length ? "tool_use" : "end_turn", stop_sequence: null },
              usage: { output_tokens: output },
            }),
            event("message_stop", {}),
          ].join(""),
        );
      };
      if (options.delayMs) setTimeout(send, options.delayMs);
      else send();
    });
  });
  return listenLoopback(server, { bodies, usage, cache, answered, pendingSteps: () => steps.length });
}

/**
 * What a session needs to talk to `server` as Pi's `anthropic` provider: the
 * agent dir's models.json pointing the provider at it (Pi's cache warming
 * off, so no request the script did not plan), and, once the session is up,
 * `select(pi)` to switch it to the catalog's model. `ANTHROPIC_API_KEY` must
 * be set (to anything) while the session runs; `select` sets it. `registry()`
 * is the session's model registry (for other catalog models and their prices).
 */
export function anthropicSession(server: AnthropicServer): Loopback {
  return loopbackSession({
    provider: "anthropic",
    baseUrl: server.url,
    keyVariable: "ANTHROPIC_API_KEY",
    key: "loopback-key",
    model: ANTHROPIC_MODEL,
    name: "anthropic-server",
  });
}
