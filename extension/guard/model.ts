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
