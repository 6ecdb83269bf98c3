// Finding the classifier through Pi's model registry, and its credential.
import type { ExtensionContext } from "@earendil-works/pi-coding-agent";

export type ClassifierModel = NonNullable<ReturnType<ExtensionContext["modelRegistry"]["findOfType"]>>;

export type ModelLookup = { ok: true; model: ClassifierModel; key: string } | { ok: false; status: string };

/** The configured classifier, or the status text that says why there is none (seed 001's texts). */
export function findClassifier(ctx: ExtensionContext, provider: string, id: string): ModelLookup {
  const registry = ctx.modelRegistry;
  const model = registry.findOfType("classifier", provider, id);
  if (!model) return { ok: false, status: "Jev model not found" };
  if (!registry.hasConfiguredAuth(model as never)) return { ok: false, status: `no ${provider} key` };
  return { ok: true, model, key: `${provider}/${id}` };
}

/**
 * The classifier model's `contextWindow` in tokens, as Pi's model object states it; `undefined` when
 * the registry does not know the model or states no usable number (the core then leaves
 * `maxSegmentChars` as set). Read without the credential: the window does not depend on it.
 */
export function classifierWindow(ctx: ExtensionContext, provider: string, id: string): number | undefined {
  try {
    const model = ctx.modelRegistry.findOfType("classifier", provider, id) as { contextWindow?: unknown } | undefined;
    const window = model?.contextWindow;
    return typeof window === "number" && Number.isFinite(window) && window >= 1 ? window : undefined;
  } catch {
    return undefined; // a registry that cannot answer: as if the window were unknown
  }
}
