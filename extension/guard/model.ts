// Finding the classifier (or a chat model as the judge) through Pi's model registry, and its credential.
import type { ExtensionContext } from "@earendil-works/pi-coding-agent";
import type { GuardSettings, JudgePrice } from "./types.ts";

export type ClassifierModel = NonNullable<ReturnType<ExtensionContext["modelRegistry"]["findOfType"]>>;
/** A chat model of Pi's registry, which `modelRegistry.complete` takes. */
export type ChatModel = NonNullable<ReturnType<ExtensionContext["modelRegistry"]["find"]>>;

export type ModelLookup =
  | { ok: true; model: ClassifierModel; key: string; judge?: undefined }
  /** `model` names a chat model: it judges through `complete` with the core's prompt (guard/judge.ts). */
  | { ok: true; model: ChatModel; key: string; judge: true }
  | { ok: false; status: string };

/** `provider/id` of a model Pi holds (the key settings and `/guard model` use), or undefined when it has neither. */
export function modelKey(model: unknown): string | undefined {
  const m = model as { provider?: unknown; id?: unknown } | undefined;
  return typeof m?.provider === "string" && typeof m.id === "string" ? `${m.provider}/${m.id}` : undefined;
}

/**
 * The configured model, or the status text that says why there is none (docs/GUARD.md "The status bar"). A classifier
 * model comes first; otherwise a chat model of that name is the judge (issue 13). Either way, no request
 * is sent without a credential for its provider, and the status names that provider.
 */
export function findClassifier(ctx: ExtensionContext, settings: Pick<GuardSettings, "modelProvider" | "modelId">): ModelLookup {
  const { modelProvider: provider, modelId: id } = settings;
  const registry = ctx.modelRegistry;
  const model = registry.findOfType("classifier", provider, id);
  const chat = model ? undefined : registry.find(provider, id);
  if (!model && !chat) return { ok: false, status: "Jev model not found" };
  if (!registry.hasConfiguredAuth((model ?? chat) as never)) return { ok: false, status: `no ${provider} key` };
  const key = modelKey({ provider, id }) ?? "";
  return model ? { ok: true, model, key } : { ok: true, model: chat as ChatModel, key, judge: true };
}

/** A catalog price, dollars per million tokens; 0 when the model states none. */
function perMillion(model: unknown, key: "input" | "cacheRead"): number {
  const value = (model as { cost?: Record<string, unknown> } | undefined)?.cost?.[key];
  return typeof value === "number" && Number.isFinite(value) && value >= 0 ? value : 0;
}

/**
 * For the judge's break-even (issue 13): the judge's input price and what a later main-model request pays
 * for a token an edit removes (its cache-read price, else its input price). `undefined` for a classifier.
 */
export function judgePrice(ctx: ExtensionContext, lookup: ModelLookup): JudgePrice | undefined {
  if (!lookup.ok || !lookup.judge) return undefined;
  return { inputPerMillion: perMillion(lookup.model, "input"), mainPerMillion: perMillion(ctx.model, "cacheRead") || perMillion(ctx.model, "input") };
}

/**
 * The classifier's (or the judge's) `contextWindow` in tokens, as Pi's model object states it;
 * `undefined` when the registry does not know the model or states no usable number (the core then
 * leaves `maxSegmentChars` as set). Read without the credential: the window does not depend on it.
 */
export function classifierWindow(ctx: ExtensionContext, provider: string, id: string): number | undefined {
  try {
    const registry = ctx.modelRegistry;
    const model = (registry.findOfType("classifier", provider, id) ?? registry.find(provider, id)) as { contextWindow?: unknown } | undefined;
    const window = model?.contextWindow;
    return typeof window === "number" && Number.isFinite(window) && window >= 1 ? window : undefined;
  } catch {
    return undefined; // a registry that cannot answer: as if the window were unknown
  }
}

type Listed = { provider: string; id: string; cost?: { input?: number; output?: number } };

/** At most this many chat models in `/guard model`'s list (a credential for a router can reach hundreds). */
const LISTED_CHAT_MODELS = 20;

/** `$1.00/$5.00 per M tokens in/out`, or nothing when the catalog has no price. */
function price(m: Listed): string {
  const input = Number(m.cost?.input);
  const output = Number(m.cost?.output);
  return Number.isFinite(input) && Number.isFinite(output) ? `  $${input.toFixed(2)}/$${output.toFixed(2)} per M tokens in/out` : "";
}

/**
 * `/guard model`'s text: the models Pi can reach with a credential, classifiers first, then chat models
 * (the judge) cheapest input first; with no classifier reachable, the cheapest chat model of the session's
 * own provider as a suggestion. Nothing is switched: `/guard model <provider/id>` saves a choice.
 */
export async function listModels(ctx: ExtensionContext, current: string): Promise<string> {
  const registry = ctx.modelRegistry;
  const key = (m: Listed) => modelKey(m) ?? "";
  const mark = (m: Listed) => (key(m) === current ? "  (current)" : "");
  let classifiers: Listed[] = [];
  try {
    classifiers = [...((await registry.getAvailableOfType("classifier")) as unknown as Listed[])];
  } catch {
    classifiers = []; // a registry that cannot list them: as if none had a credential
  }
  const chat = chatByPrice(ctx);
  const lines = [`context-guard: model ${current}`];
  lines.push(classifiers.length ? "classifiers with a credential:" : "classifiers with a credential: none");
  for (const m of classifiers) lines.push(`  ${key(m)}${mark(m)}`);
  lines.push(chat.length ? "chat models with a credential (the judge), cheapest input first:" : "chat models with a credential: none");
  for (const m of chat.slice(0, LISTED_CHAT_MODELS)) lines.push(`  ${key(m)}${price(m)}${mark(m)}`);
  if (chat.length > LISTED_CHAT_MODELS) lines.push(`  … and ${chat.length - LISTED_CHAT_MODELS} more`);
  const cheapest = cheapestOfSession(ctx, chat);
  if (!classifiers.length && cheapest)
    lines.push(`No classifier has a credential; the cheapest model of the session's provider would judge: /guard model ${cheapest}`);
  lines.push("/guard model <provider/id> saves the choice.");
  return lines.join("\n");
}

/** The chat models Pi can reach with a credential, cheapest input first (no price: last). */
function chatByPrice(ctx: ExtensionContext): Listed[] {
  const key = (m: Listed) => modelKey(m) ?? "";
  const input = (m: Listed) => (Number.isFinite(Number(m.cost?.input)) ? Number(m.cost?.input) : Infinity);
  return ([...ctx.modelRegistry.getAvailable()] as Listed[]).sort((a, b) => input(a) - input(b) || key(a).localeCompare(key(b)));
}

/** `provider/id` of the cheapest chat model of the session's own provider with a credential, if any. */
function cheapestOfSession(ctx: ExtensionContext, chat: Listed[] = chatByPrice(ctx)): string | undefined {
  const session = (ctx.model as { provider?: unknown } | undefined)?.provider;
  const m = chat.find((c) => c.provider === session);
  return modelKey(m);
}

/**
 * The status's problem with a suggestion when the configured classifier cannot be used: the cheapest chat
 * model of the provider the session already uses, which `/guard model` would save (never switched to).
 */
export function withSuggestion(ctx: ExtensionContext, problem: string): string {
  try {
    const cheapest = cheapestOfSession(ctx);
    return cheapest ? `${problem}; try /guard model ${cheapest}` : problem;
  } catch {
    return problem; // a registry that cannot list: the problem alone
  }
}
