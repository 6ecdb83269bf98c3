// An OpenAI main model on loopback, the twin of anthropic-server.ts: a local
// HTTP server speaking the Responses API's streamed replies, answering Pi's
// own `openai` provider (`gpt-4.1` from Pi's catalog) from a script, and
// recording every request body Pi sends. `startOpenAiServer` and
// `openAiSession` have the shapes of `startAnthropicServer` and
// `anthropicSession`, so a benchmark runs the same scripted run on either
// provider by swapping the pair.
//
// Why the Responses API: Pi's `openai` provider is built with
// `api: openAIResponsesApi()` (pi-ai dist/providers/openai.js) and every chat
// model of its catalog (dist/providers/data/openai.json) has
// `api: "openai-responses"`, in 1.3.0 and 1.6.0. Pi's client is the official
// `openai` SDK (`client.responses.create({ ..., stream: true })`), which POSTs
// to `<baseUrl>/responses`; the stream is parsed by pi-ai's
// `processResponsesStream` (dist/api/openai-responses-shared.js), which reads
// `response.output_item.added`, `response.output_text.delta`,
// `response.function_call_arguments.delta`/`.done`, `response.output_item.done`
// and `response.completed` (whose `response.usage` gives Pi its usage).
//
// For: tests and benchmarks that need a real OpenAI model's API and prompt
// cache in a Pi session. Not for: Chat Completions (no model of Pi's `openai`
// provider uses it), reasoning items, or OpenAI's explicit cache mode with a
// write price (`prompt_cache_options`, GPT-5.6 and later in Pi's catalog).
import { createHash } from "node:crypto";
import { createServer, type ServerResponse } from "node:http";
import { type Clock, manualClock } from "./anthropic-server.ts";
import type { Loose } from "./pi.ts";
import { type Loopback, type LoopbackServer, listenLoopback, loopbackSession } from "./loopback.ts";
import type { Call, Said, Step } from "./session.ts";

export { type Clock, manualClock };

/**
 * Pi's catalog model the server stands in for. Chosen because it is served by
 * Pi's `openai` provider in 1.3.0 and 1.6.0 with the same price (input $2,
 * cacheRead $0.50, cacheWrite $0 per million), has no reasoning (so no
 * reasoning items or `developer` role to model), no grammar tools, and no
 * explicit cache mode: it is priced and cached as OpenAI's automatic prompt
 * cache documents (no write premium).
 */
export const OPENAI_MODEL = "gpt-4.1";

// ---------------------------------------------------------------------------
// The prompt cache
//
// Facts from OpenAI's prompt-caching guide (developers.openai.com/api/docs
// /guides/prompt-caching, and its cookbook "Prompt Caching 201", which says it
// applies to models before GPT-5.6; Azure's mirror of the guide for the
// retention wording), as found by the `search` tool:
// - caching is automatic for prompts of 1,024 tokens or more; shorter prompts
//   report `cached_tokens: 0`;
// - a hit needs an exact prefix match, and hits come in increments of 128
//   tokens: 1,024, 1,152, 1,280 …;
// - the whole request prefix is cacheable (messages, images, tools), and tools
//   must be identical between requests for a hit past them;
// - there is no fee for writing: uncached and newly cached tokens cost the
//   input price (`cacheWrite` is 0 in Pi's catalog for this model);
// - the in-memory retention clears entries after 5 to 10 minutes of
//   inactivity and always within one hour; `prompt_cache_retention: "24h"`
//   keeps them up to 24 hours;
// - `usage.input_tokens` counts the whole prompt and
//   `usage.input_tokens_details.cached_tokens` the part read from the cache
//   (Pi records `input` = input_tokens − cached_tokens, `cacheRead` =
//   cached_tokens).
// Choices of this harness, not OpenAI facts:
// - tokens are characters ÷ 4 (as anthropic-server.ts and Pi's own estimate)
//   over `promptText`, the request's canonical serialization in the order
//   instructions and leading system messages, tools, then the other input
//   items (the guide says tools are part of the prefix, not where they sit;
//   instructions before tools is how the harmony format OpenAI published for
//   its open-weight models lays out a developer message); token k is
//   characters 4k … 4k+3, so two prefixes match only if their serializations
//   are identical up to there;
// - the idle TTL is 5 minutes, the low end of OpenAI's 5–10 minutes: a hit the
//   harness counts is one OpenAI gives at its least, and it is Anthropic's
//   default TTL, so the two providers meet the same idle gaps on equal terms;
// - an entry lives at most 1 hour from when it was first written (24 hours
//   with `prompt_cache_retention: "24h"`, whose idle TTL is then 24 hours);
// - a request reads at most its prompt minus one token (the model has to
//   compute the last prompt token to answer), and stores every 128-token step
//   of its prefix up to that length; a read refreshes what it read;
// - entries are keyed by model and `prompt_cache_key` (OpenAI routes by the
//   key together with the prefix, so another key lands elsewhere: a miss).
// ---------------------------------------------------------------------------

/** OpenAI's documented minimum: shorter prompts are never cached. */
export const MINIMUM_TOKENS = 1024;
/** OpenAI's documented step: a cached prefix is 1,024 + k·128 tokens. */
export const INCREMENT_TOKENS = 128;
/** The harness's idle TTL for in-memory retention: the low end of OpenAI's "5 to 10 minutes". */
export const IDLE_TTL_MS = 5 * 60_000;
/** In-memory entries are "always" removed within one hour. */
const IN_MEMORY_MAX_AGE_MS = 60 * 60_000;
/** `prompt_cache_retention: "24h"`: "up to a maximum of 24 hours". */
const EXTENDED_MS = 24 * 60 * 60_000;

export interface OpenAiCacheOptions {
  /** Default `Date.now`. */
  clock?: Clock;
  /** Idle TTL of in-memory entries (default 5 minutes). */
  idleMs?: number;
  /** How long the model takes to answer, in real milliseconds (default 0): a main model's latency for the timed runs. */
  delayMs?: number;
}

/** A body OpenAI would answer with a 400 (or 401/404): its message, the parameter and code it names. */
export class ApiError extends Error {
  readonly param: string | null;
  readonly code: string | null;
  readonly status: number;
  constructor(message: string, param: string | null = null, code: string | null = null, status = 400) {
    super(message);
    this.param = param;
    this.code = code;
    this.status = status;
  }
}

// The Responses API's request parameters (create a response), plus Pi's
// `prompt_cache_options` (sent only to models with an explicit cache mode).
// Anything else is OpenAI's "Unknown parameter" 400.
const PARAMETERS = new Set([
  "background",
  "context_management",
  "conversation",
  "include",
  "input",
  "instructions",
  "max_output_tokens",
  "max_tool_calls",
  "metadata",
  "model",
  "parallel_tool_calls",
  "previous_response_id",
  "prompt",
  "prompt_cache_key",
  "prompt_cache_options",
  "prompt_cache_retention",
  "reasoning",
  "safety_identifier",
  "service_tier",
  "store",
  "stream",
  "stream_options",
  "temperature",
  "text",
  "tool_choice",
  "tools",
  "top_logprobs",
  "top_p",
  "truncation",
  "user",
]);
// Input item types Pi's Responses client sends (openai-responses-shared.js), all accepted by OpenAI.
const ITEM_TYPES = [
  "message",
  "function_call",
  "function_call_output",
  "custom_tool_call",
  "custom_tool_call_output",
  "reasoning",
  "additional_tools",
  "tool_search_call",
  "tool_search_output",
  "configuration_update",
];
const ROLES = ["user", "assistant", "system", "developer"];
const INPUT_PARTS = ["input_text", "input_image", "input_file"];
const OUTPUT_PARTS = ["output_text", "refusal"];
/** Pi clamps its key to 64 characters (pi-ai's OPENAI_PROMPT_CACHE_KEY_MAX_LENGTH): longer is a 400. */
const PROMPT_CACHE_KEY_MAX = 64;
/** "OpenAI Responses rejects max_output_tokens below 16" (pi-ai's openai-responses.js, Pi issue 6265). */
const MIN_OUTPUT_TOKENS = 16;

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
const supported = (values: string[]) => `Supported values are: ${values.map((v) => `'${v}'`).join(", ")}.`;

/** The input as a list of items (a string input is one user message). */
function inputItems(body: Loose): Loose[] {
  return typeof body.input === "string" ? [{ role: "user", content: body.input }] : (body.input ?? []);
}

/** Throws the `ApiError` OpenAI would answer a create-response body with; returns when the body is one it accepts. */
export function checkBody(body: unknown): void {
  if (!isObject(body)) throw new ApiError("The request body must be a JSON object.");
  for (const key of Object.keys(body)) if (!PARAMETERS.has(key)) throw new ApiError(`Unknown parameter: '${key}'.`, key, "unknown_parameter");
  if (typeof body.model !== "string" || body.model === "") throw new ApiError("Missing required parameter: 'model'.", "model", "missing_required_parameter");
  // Nothing is stored here (Pi sends `store: false`), so a reference to an earlier response finds none.
  if (body.previous_response_id != null)
    throw new ApiError(`Previous response with id '${body.previous_response_id}' not found.`, "previous_response_id", "previous_response_not_found");
  if (body.stream !== true) throw new ApiError("This loopback server answers only streamed requests (`stream: true`), as Pi sends them.", "stream");
  if (body.prompt_cache_key != null) {
    if (typeof body.prompt_cache_key !== "string")
      throw new ApiError("Invalid type for 'prompt_cache_key': expected a string.", "prompt_cache_key", "invalid_type");
    if (body.prompt_cache_key.length > PROMPT_CACHE_KEY_MAX) {
      throw new ApiError(
        `Invalid 'prompt_cache_key': string too long. Expected a string with maximum length ${PROMPT_CACHE_KEY_MAX}, but got a string with length ${body.prompt_cache_key.length} instead.`,
        "prompt_cache_key",
        "string_above_max_length",
      );
    }
  }
  if (body.prompt_cache_retention != null && body.prompt_cache_retention !== "in_memory" && body.prompt_cache_retention !== "24h") {
    throw new ApiError(`Invalid value: '${body.prompt_cache_retention}'. ${supported(["in_memory", "24h"])}`, "prompt_cache_retention", "invalid_value");
  }
  if (body.max_output_tokens != null) {
    const n = body.max_output_tokens;
    if (!Number.isInteger(n)) throw new ApiError("Invalid type for 'max_output_tokens': expected an integer.", "max_output_tokens", "invalid_type");
    if ((n as number) < MIN_OUTPUT_TOKENS) {
      throw new ApiError(
        `Invalid 'max_output_tokens': integer below minimum value. Expected a value >= ${MIN_OUTPUT_TOKENS}, but got ${n} instead.`,
        "max_output_tokens",
        "integer_below_min_value",
      );
    }
  }
  if (body.instructions != null && typeof body.instructions !== "string")
    throw new ApiError("Invalid type for 'instructions': expected a string.", "instructions", "invalid_type");
  if (body.tools != null) {
    if (!Array.isArray(body.tools)) throw new ApiError("Invalid type for 'tools': expected an array of objects.", "tools", "invalid_type");
    body.tools.forEach((t: unknown, i: number) => {
      const at = `tools[${i}]`;
      if (!isObject(t)) throw new ApiError(`Invalid type for '${at}': expected an object.`, at, "invalid_type");
      if (typeof t.type !== "string") throw new ApiError(`Missing required parameter: '${at}.type'.`, `${at}.type`, "missing_required_parameter");
      if (t.type !== "function") return;
      if (typeof t.name !== "string") throw new ApiError(`Missing required parameter: '${at}.name'.`, `${at}.name`, "missing_required_parameter");
      if (!/^[a-zA-Z0-9_-]{1,64}$/.test(t.name)) {
        throw new ApiError(
          `Invalid '${at}.name': string does not match pattern. Expected a string that matches the pattern '^[a-zA-Z0-9_-]+$'.`,
          `${at}.name`,
          "invalid_value",
        );
      }
      if (t.parameters != null && !isObject(t.parameters))
        throw new ApiError(`Invalid type for '${at}.parameters': expected an object.`, `${at}.parameters`, "invalid_type");
    });
  }
  if (body.input != null && typeof body.input !== "string" && !Array.isArray(body.input)) {
    throw new ApiError("Invalid type for 'input': expected one of a string or an array of input items.", "input", "invalid_type");
  }
  // Every tool call needs its output later in the input, and every output a call before it.
  const calls = new Map<string, string>();
  const answered = new Set<string>();
  inputItems(body).forEach((item: unknown, i: number) => {
    const at = `input[${i}]`;
    if (!isObject(item)) throw new ApiError(`Invalid type for '${at}': expected an object.`, at, "invalid_type");
    const type = item.type ?? (item.role !== undefined ? "message" : undefined);
    if (typeof type !== "string" || !ITEM_TYPES.includes(type))
      throw new ApiError(`Invalid value: '${String(type)}'. ${supported(ITEM_TYPES)}`, `${at}.type`, "invalid_value");
    if (type === "message") {
      if (!ROLES.includes(item.role as string)) throw new ApiError(`Invalid value: '${String(item.role)}'. ${supported(ROLES)}`, `${at}.role`, "invalid_value");
      if (typeof item.content === "string") return;
      if (!Array.isArray(item.content))
        throw new ApiError(`Invalid type for '${at}.content': expected one of a string or an array of content parts.`, `${at}.content`, "invalid_type");
      const parts = item.role === "assistant" ? OUTPUT_PARTS : INPUT_PARTS;
      item.content.forEach((part: unknown, j: number) => {
        const where = `${at}.content[${j}]`;
        const partType = isObject(part) ? part.type : undefined;
        if (typeof partType !== "string" || !parts.includes(partType))
          throw new ApiError(`Invalid value: '${String(partType)}'. ${supported(parts)}`, `${where}.type`, "invalid_value");
        if ((partType.endsWith("_text") || partType === "refusal") && typeof (part as Loose)[partType === "refusal" ? "refusal" : "text"] !== "string") {
          throw new ApiError(`Missing required parameter: '${where}.text'.`, `${where}.text`, "missing_required_parameter");
        }
      });
    } else if (type === "function_call" || type === "custom_tool_call") {
      for (const key of type === "function_call" ? ["call_id", "name", "arguments"] : ["call_id", "name", "input"]) {
        if (typeof item[key] !== "string") throw new ApiError(`Missing required parameter: '${at}.${key}'.`, `${at}.${key}`, "missing_required_parameter");
      }
      const prefix = type === "function_call" ? "fc" : "ctc";
      if (item.id != null && !String(item.id).startsWith(prefix)) {
        throw new ApiError(`Invalid '${at}.id': '${item.id}'. Expected an ID that begins with '${prefix}'.`, `${at}.id`, "invalid_value");
      }
      calls.set(item.call_id as string, at);
    } else if (type === "function_call_output" || type === "custom_tool_call_output") {
      if (typeof item.call_id !== "string") throw new ApiError(`Missing required parameter: '${at}.call_id'.`, `${at}.call_id`, "missing_required_parameter");
      if (typeof item.output !== "string" && !Array.isArray(item.output))
        throw new ApiError(`Invalid type for '${at}.output': expected one of a string or an array.`, `${at}.output`, "invalid_type");
      if (!calls.has(item.call_id)) throw new ApiError(`No tool call found for function call output with call_id ${item.call_id}.`, "input");
      answered.add(item.call_id);
    }
  });
  for (const id of calls.keys()) if (!answered.has(id)) throw new ApiError(`No tool output found for function call ${id}.`, "input");
}

/**
 * The request's prompt as the cache compares it: one line of JSON per piece,
 * in the order `instructions`, the input's leading system/developer messages,
 * the tools (one line), then the other input items. Call on a body that
 * `checkBody` accepts.
 */
export function promptText(body: Loose): string {
  const items = inputItems(body);
  let lead = 0;
  while (lead < items.length && (items[lead].type ?? "message") === "message" && (items[lead].role === "system" || items[lead].role === "developer")) lead++;
  const lines: string[] = [];
  if (typeof body.instructions === "string") lines.push(JSON.stringify({ instructions: body.instructions }));
  for (const item of items.slice(0, lead)) lines.push(JSON.stringify(item));
  if (Array.isArray(body.tools) && body.tools.length > 0) lines.push(JSON.stringify({ tools: body.tools }));
  for (const item of items.slice(lead)) lines.push(JSON.stringify(item));
  return lines.join("\n");
}

/** The harness's tokenizer: characters ÷ 4, rounded up. */
export const tokensOf = (text: string) => Math.ceil(text.length / 4);

/** What one request read, and how its prompt splits. */
export interface CacheCount {
  /** Tokens read from the cache (`cached_tokens`): 0 or 1,024 + k·128. */
  read: number;
  /** Always 0: OpenAI has no write premium, newly cached tokens are in `uncached` (the Anthropic server's shape). */
  written: number;
  /** Always 0 (the Anthropic server's shape). */
  written1h: number;
  /** Tokens billed at the input price: the prompt minus `read`. */
  uncached: number;
  /** The longest prefix this request left in the cache (0 under 1,024 tokens). */
  stored: number;
}

interface Entry {
  created: number;
  used: number;
  idleMs: number;
  maxAgeMs: number;
}

/**
 * OpenAI's automatic prompt cache for one server. An entry is a prefix of
 * 1,024 + k·128 tokens; its key is a running SHA-256 (key(L + 128) =
 * H(key(L), the next 512 characters)), so a request costs one pass over its
 * prompt however many steps it has, and two prefixes share a key only when
 * their text (and model and `prompt_cache_key`) is the same.
 */
export class PromptCache {
  readonly entries = new Map<string, Entry>();
  readonly clock: Clock;
  readonly idleMs: number;

  constructor(options: OpenAiCacheOptions = {}) {
    this.clock = options.clock ?? { now: Date.now };
    this.idleMs = options.idleMs ?? IDLE_TTL_MS;
  }

  /** Counts one request (a body `checkBody` accepts) and updates the cache as OpenAI would. */
  count(body: Loose): CacheCount {
    const text = promptText(body);
    const total = tokensOf(text);
    const now = this.clock.now();
    for (const [key, e] of this.entries) if (now - e.used >= e.idleMs || now - e.created >= e.maxAgeMs) this.entries.delete(key);

    const extended = body.prompt_cache_retention === "24h";
    const idleMs = extended ? EXTENDED_MS : this.idleMs;
    const maxAgeMs = extended ? EXTENDED_MS : IN_MEMORY_MAX_AGE_MS;
    // Whole tokens only, and never the last one: it has to be computed.
    const longest = total < MINIMUM_TOKENS ? 0 : Math.min(Math.floor(text.length / 4), total - 1);
    let key = createHash("sha256")
      .update(`model\0${body.model}\0key\0${body.prompt_cache_key ?? ""}\0`)
      .digest("hex");
    let read = 0;
    let stored = 0;
    let reading = true;
    let from = 0;
    for (let length = MINIMUM_TOKENS; length <= longest; length += INCREMENT_TOKENS) {
      key = createHash("sha256")
        .update(key)
        .update(text.slice(from * 4, length * 4), "utf16le")
        .digest("hex");
      from = length;
      const entry = this.entries.get(key);
      // The longest prefix whose every step is live: a lapsed step ends the hit.
      if (reading && entry) read = length;
      else reading = false;
      if (entry) Object.assign(entry, { used: now, idleMs: Math.max(entry.idleMs, idleMs), maxAgeMs: Math.max(entry.maxAgeMs, maxAgeMs) });
      else this.entries.set(key, { created: now, used: now, idleMs, maxAgeMs });
      stored = length;
    }
    return { read, written: 0, written1h: 0, uncached: total - read, stored };
  }
}

// ---------------------------------------------------------------------------
// The server
// ---------------------------------------------------------------------------

/** What the server reported for one request (`response.completed`'s usage). */
export interface RequestUsage extends CacheCount {
  output: number;
  model: string;
  /** The cache clock's time of the request. */
  at: number;
  /** Set when the request was answered with an error status (its figures are then 0). */
  rejected?: string;
}

/** Pi's base URL for it is `${url}/v1`; the bodies are those sent to `/v1/responses`. */
export type OpenAiServer = LoopbackServer<RequestUsage, PromptCache>;

/** How many characters one streamed delta carries (the API streams a token or a few at a time). */
const DELTA_CHARS = 48;
const pieces = (s: string) => Array.from({ length: Math.max(1, Math.ceil(s.length / DELTA_CHARS)) }, (_, i) => s.slice(i * DELTA_CHARS, (i + 1) * DELTA_CHARS));

/**
 * Starts the server on 127.0.0.1. Each request takes the next step of
 * `script` (text, calls or text with calls; a step function is given the
 * request body); with the script used up it answers "done". Its usage is
 * `PromptCache`'s count of the body (`options` set its clock and idle TTL). A
 * body OpenAI would reject (`checkBody`) gets OpenAI's error reply and takes no
 * step; so does a request without a bearer key (401).
 */
export async function startOpenAiServer(script: Step[], options: OpenAiCacheOptions = {}): Promise<OpenAiServer> {
  const steps = [...script];
  const bodies: Loose[] = [];
  const usage: RequestUsage[] = [];
  const answered: number[] = [];
  const cache = new PromptCache(options);
  let calls = 0;
  const fail = (res: ServerResponse, error: ApiError) => {
    res.writeHead(error.status, { "content-type": "application/json" });
    res.end(JSON.stringify({ error: { message: error.message, type: "invalid_request_error", param: error.param, code: error.code } }));
  };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      if (req.method !== "POST" || req.url?.split("?")[0] !== "/v1/responses")
        return fail(res, new ApiError(`Invalid URL (${req.method} ${req.url})`, null, null, 404));
      let body: Loose;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString("utf8"));
      } catch {
        return fail(
          res,
          new ApiError(
            "We could not parse the JSON body of your request. (HINT: This likely means you aren't using your HTTP library correctly. The OpenAI API expects a JSON payload, but what was sent was not valid JSON.)",
          ),
        );
      }
      bodies.push(body);
      const model = String(body?.model ?? OPENAI_MODEL);
      let counted: CacheCount;
      try {
        if (!/^Bearer \S+/.test(req.headers.authorization ?? "")) {
          throw new ApiError(
            "You didn't provide an API key. You need to provide your API key in an Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY).",
            null,
            null,
            401,
          );
        }
        checkBody(body);
        counted = cache.count(body);
      } catch (error) {
        const apiError = error instanceof ApiError ? error : new ApiError(error instanceof Error ? error.message : String(error));
        usage.push({ read: 0, written: 0, written1h: 0, uncached: 0, stored: 0, output: 0, model, at: cache.clock.now(), rejected: apiError.message });
        return fail(res, apiError);
      }
      const next = steps.shift();
      const step = typeof next === "function" ? next(body) : (next ?? "done");
      const said = typeof step === "object" && step !== null && "say" in step ? (step as Said) : undefined;
      const text = typeof step === "string" ? step : said?.say;
      const toolCalls = (said ? said.calls : typeof step === "string" ? [] : Array.isArray(step) ? step : [step]) as Call[];
      const output = tokensOf(text ?? "") + toolCalls.reduce((n, c) => n + tokensOf(JSON.stringify(c.args)), 0);
      const total = counted.read + counted.uncached;
      usage.push({ ...counted, output, model, at: cache.clock.now() });

      const id = `resp_${String(bodies.length).padStart(6, "0")}`;
      let sequence = 0;
      const events: string[] = [];
      const emit = (type: string, data: Record<string, unknown>) => {
        events.push(`event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: sequence++, ...data })}\n\n`);
      };
      const response = (status: string, items: Loose[], used: Loose) => ({
        id,
        object: "response",
        created_at: Math.floor(Date.now() / 1000),
        status,
        error: null,
        incomplete_details: null,
        instructions: body.instructions ?? null,
        max_output_tokens: body.max_output_tokens ?? null,
        model,
        output: items,
        parallel_tool_calls: true,
        previous_response_id: null,
        prompt_cache_key: body.prompt_cache_key ?? null,
        prompt_cache_retention: body.prompt_cache_retention ?? null,
        store: body.store ?? true,
        temperature: body.temperature ?? 1,
        tool_choice: body.tool_choice ?? "auto",
        tools: body.tools ?? [],
        top_p: body.top_p ?? 1,
        truncation: "disabled",
        usage: used,
        metadata: {},
      });
      emit("response.created", { response: response("in_progress", [], null) });
      emit("response.in_progress", { response: response("in_progress", [], null) });
      const done: Loose[] = [];
      if (text) {
        const output_index = done.length;
        const item_id = `msg_${id.slice(5)}_${output_index}`;
        const part = { type: "output_text", annotations: [], logprobs: [], text: "" };
        emit("response.output_item.added", { output_index, item: { id: item_id, type: "message", status: "in_progress", content: [], role: "assistant" } });
        emit("response.content_part.added", { item_id, output_index, content_index: 0, part });
        for (const delta of pieces(text)) emit("response.output_text.delta", { item_id, output_index, content_index: 0, delta, logprobs: [] });
        emit("response.output_text.done", { item_id, output_index, content_index: 0, text, logprobs: [] });
        emit("response.content_part.done", { item_id, output_index, content_index: 0, part: { ...part, text } });
        const item = { id: item_id, type: "message", status: "completed", content: [{ ...part, text }], role: "assistant" };
        emit("response.output_item.done", { output_index, item });
        done.push(item);
      }
      for (const c of toolCalls) {
        const output_index = done.length;
        const n = String(++calls).padStart(4, "0");
        const item_id = `fc_${n}`;
        const call = { id: item_id, type: "function_call", status: "in_progress", arguments: "", call_id: c.id ?? `call_${n}`, name: c.tool };
        const args = JSON.stringify(c.args);
        emit("response.output_item.added", { output_index, item: call });
        for (const delta of pieces(args)) emit("response.function_call_arguments.delta", { item_id, output_index, delta });
        emit("response.function_call_arguments.done", { item_id, output_index, arguments: args });
        const item = { ...call, status: "completed", arguments: args };
        emit("response.output_item.done", { output_index, item });
        done.push(item);
      }
      emit("response.completed", {
        response: response("completed", done, {
          input_tokens: total,
          input_tokens_details: { cached_tokens: counted.read },
          output_tokens: output,
          output_tokens_details: { reasoning_tokens: 0 },
          total_tokens: total + output,
        }),
      });
      const send = () => {
        answered.push(Date.now());
        res.writeHead(200, { "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache", "x-request-id": `req_${id.slice(5)}` });
        res.end(events.join(""));
      };
      if (options.delayMs) setTimeout(send, options.delayMs);
      else send();
    });
  });
  return listenLoopback(server, { bodies, usage, cache, answered, pendingSteps: () => steps.length });
}

/**
 * What a session needs to talk to `server` as Pi's `openai` provider: the
 * agent dir's models.json pointing the provider at `${server.url}/v1` (the
 * SDK appends `/responses`; Pi's cache warming off, as for Anthropic), and,
 * once the session is up, `select(pi)` to switch it to the catalog's model.
 * `OPENAI_API_KEY` must be set (to anything starting `sk-`, or Pi takes it for
 * a ChatGPT sign-in token on OpenAI's own host) while the session runs;
 * `select` sets it. `registry()` is the session's model registry.
 */
export function openAiSession(server: OpenAiServer): Loopback {
  return loopbackSession({
    provider: "openai",
    baseUrl: `${server.url}/v1`,
    keyVariable: "OPENAI_API_KEY",
    key: "sk-loopback-key",
    model: OPENAI_MODEL,
    api: "openai-responses",
    name: "openai-server",
  });
}
