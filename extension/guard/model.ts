// Finding the classifier (or a chat model as the judge) through Pi's model registry, and its credential.
import type { ExtensionContext } from "@earendil-works/pi-coding-agent";

export type ClassifierModel = NonNullable<ReturnType<ExtensionContext["modelRegistry"]["findOfType"]>>;
/** A chat model of Pi's registry, which `modelRegistry.complete` takes. */
export type ChatModel = NonNullable<ReturnType<ExtensionContext["modelRegistry"]["find"]>>;

export type ModelLookup =
  | { ok: true; model: ClassifierModel; key: string; judge?: undefined }
  /** `model` names a chat model: it judges through `complete` with the core's prompt (guard/judge.ts). */
  | { ok: true; model: ChatModel; key: string; judge: true }
  | { ok: false; status: string };

/**
 * The configured model, or the status text that says why there is none (seed 001's texts). A classifier
 * model comes first; otherwise a chat model of that name is the judge (issue 13). Either way, no request
 * is sent without a credential for its provider, and the status names that provider.
 */
export function findClassifier(ctx: ExtensionContext, provider: string, id: string): ModelLookup {
  const registry = ctx.modelRegistry;
  const model = registry.findOfType("classifier", provider, id);
  const chat = model ? undefined : registry.find(provider, id);
  if (!model && !chat) return { ok: false, status: "Jev model not found" };
  if (!registry.hasConfiguredAuth((model ?? chat) as never)) return { ok: false, status: `no ${provider} key` };
  const key = `${provider}/${id}`;
  return model ? { ok: true, model, key } : { ok: true, model: chat as ChatModel, key, judge: true };
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
