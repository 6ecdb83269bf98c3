// A chat model as the judge (issue 13): the adapter from a pass's classifier
// requests to Pi's `modelRegistry.complete`. The prompt is the core's
// (guard/judge.rs), and so is reading the reply: this file returns the reply's
// text as it came, with Pi's usage, and the core reads it as a classifier's
// answers (`replied` outcomes, classify.rs `Answers::from_judge`).
//
// `complete` is in Pi 1.6.0 and 1.3.0 alike (ModelRegistry: `complete(model,
// context, options)` → AssistantMessage with `usage.input/cacheRead/cacheWrite`
// and `usage.cost.total`). Its requests go straight to the provider: Pi's
// `before_provider_request` and `message_end` never see them, so the cache pin
// (guard/pin.ts) neither marks nor logs a judge request, even on the main
// model's provider. `cacheRetention: "none"`: each prompt is asked once, so a
// cache write (1.25× input on Anthropic) would never be read.
import type { ExtensionContext } from "@earendil-works/pi-coding-agent";
import { callCore } from "../core.ts";
import type { ChatModel, findClassifier } from "./model.ts";
import type { Classify, ClassifierResult } from "./requests.ts";
import type { GuardClassifierContext } from "./types.ts";
import { guardCore } from "./wasm.ts";

/** The judge's answer is short JSON (~15 tokens a question); a cap keeps a rambling reply from running on. */
const MAX_REPLY_TOKENS = 8_192;

type Usage = { input?: number; cacheRead?: number; cacheWrite?: number; output?: number; cost?: { total?: number } };

/** The request runner's `Classify` (guard/requests.ts) for a chat model judging through `complete`. */
export function judgeClassify(ctx: ExtensionContext, model: ChatModel): Classify {
  // The system prompt is the same for every request of the pass: written once.
  const system = callCore(() => guardCore.judgeSystemPrompt());
  return async (request, options): Promise<ClassifierResult> => {
    const prompt = callCore(() => guardCore.judgePrompt(request as GuardClassifierContext));
    if (!prompt.ok) return { stopReason: "error", errorMessage: `the judge's prompt could not be written: ${prompt.error}` };
    if (!system.ok) return { stopReason: "error", errorMessage: system.error };
    const maxTokens = Math.min(MAX_REPLY_TOKENS, Number((model as { maxTokens?: unknown }).maxTokens) || MAX_REPLY_TOKENS);
    const message = await ctx.modelRegistry.complete(
      model,
      { systemPrompt: system.value, messages: [{ role: "user", content: prompt.value, timestamp: Date.now() }] },
      { signal: options.signal, timeoutMs: options.timeoutMs, maxRetries: options.maxRetries, maxTokens, cacheRetention: "none" } as never,
    );
    const usage = (message?.usage ?? {}) as Usage;
    // Every input token the provider counted, cached or not: what the judge read for this request.
    const input = (Number(usage.input) || 0) + (Number(usage.cacheRead) || 0) + (Number(usage.cacheWrite) || 0);
    const reply = (message?.content ?? []).map((block) => (block?.type === "text" && typeof block.text === "string" ? block.text : "")).join("");
    return {
      reply,
      stopReason: message?.stopReason,
      errorMessage: message?.errorMessage,
      usage: { input, output: usage.output, cost: { total: usage.cost?.total } },
    };
  };
}

/** The classifier, or a chat model named as `model` judging through `complete` with the core's prompt (guard/judge.ts). */
export function classifierOf(ctx: ExtensionContext, lookup: ReturnType<typeof findClassifier>): Classify {
  if (lookup.ok && lookup.judge) return judgeClassify(ctx, lookup.model);
  return (context, options) => ctx.modelRegistry.classify((lookup.ok ? lookup.model : undefined) as never, context as never, options) as ReturnType<Classify>;
}
