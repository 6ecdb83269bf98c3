// The Anthropic cache pin inside Pi (docs/GUARD.md "The cache pin (Anthropic)"):
// in `before_provider_request` the core plans where to add `cache_control`
// breakpoints (the question, and after edits a read point and a write anchor);
// this file applies them to a copy of Pi's payload and tells the core's log
// what each response read and wrote (`message_end` usage). The log lives in
// the wasm module, one per session (crates/economics/src/pin).
//
// Only `anthropic-messages` models, and only when the guard is on with
// `pinAnthropicCache`; otherwise the handler returns nothing and Pi sends its
// own payload, byte for byte. A failure does the same and warns once: the
// pin is an optimisation, never a reason for a request to fail.
//
// Pi 1.6's message threads (on by default only for the real Anthropic host)
// shorten a later request to a `continue` step after this hook has seen the
// full body: the pin then marks the full body Pi builds, and what the thread
// sends keeps those marks only where its step still holds the blocks.
import type { ExtensionAPI, ExtensionContext } from "@earendil-works/pi-coding-agent";
import { CacheLog } from "../../pkg/context_guard.js";
import "../core.ts"; // instantiates the wasm module before any call
import { modelKey } from "./model.ts";
import type { GuardSettings } from "./types.ts";

/** The core's `pin::Plan`. */
interface PinPlan {
  marks: { message: number; block: number; cache_control: unknown; why: "question" | "read" | "write" }[];
  dropSystem: boolean;
  note: string;
}

type Payload = { system?: unknown; messages?: unknown } & Record<string, unknown>;
type Block = Record<string, unknown>;

const ANTHROPIC_API = "anthropic-messages";

/** `payload` with the plan's breakpoints, as a copy: Pi's own objects stay as Pi built them. */
export function applyPin(payload: Payload, plan: PinPlan): Payload {
  const messages = [...(payload.messages as { content?: unknown }[])];
  for (const mark of plan.marks) {
    const message = messages[mark.message];
    const content: Block[] = typeof message.content === "string" ? [{ type: "text", text: message.content }] : [...(message.content as Block[])];
    content[mark.block] = { ...content[mark.block], cache_control: mark.cache_control };
    messages[mark.message] = { ...message, content };
  }
  const body: Payload = { ...payload, messages };
  if (plan.dropSystem && Array.isArray(payload.system)) {
    const [first, ...rest] = payload.system as Block[];
    const { cache_control: _dropped, ...kept } = first;
    body.system = [kept, ...rest];
  }
  return body;
}

export interface Pin {
  /** The read points (tool_use ids) the next request to the active model could read, for the break-even rules. */
  readPoints(ctx: ExtensionContext): string[];
  /** `/guard`'s line: the pin's state for the active model and what it did on the last request. */
  describe(ctx: ExtensionContext, settings: GuardSettings): string;
}

/**
 * Registers the pin's handlers. `settings` gives the current guard settings;
 * `warn` reports a failure (once per message).
 */
export function registerPin(pi: ExtensionAPI, settings: (ctx: ExtensionContext) => GuardSettings, warn: (ctx: ExtensionContext, message: string) => void): Pin {
  let log = new CacheLog();
  let note: string | undefined;

  pi.on("session_start", () => {
    log.free();
    log = new CacheLog();
    note = undefined;
  });

  pi.on("before_provider_request", (event, ctx) => {
    try {
      const model = ctx.model as { api?: unknown } | undefined;
      const key = modelKey(model);
      if (model?.api !== ANTHROPIC_API || !key) return undefined;
      const s = settings(ctx);
      if (!s.enabled || !s.pinAnthropicCache) return undefined;
      const payload = event.payload as Payload;
      // The hook also sees other requests of the session (a classifier's, say): only the main model's is pinned.
      if (!payload || typeof payload !== "object" || !Array.isArray(payload.messages) || payload.model !== (model as { id?: unknown }).id) return undefined;
      const plan = JSON.parse(log.plan(JSON.stringify(payload), key, Date.now())) as PinPlan;
      note = plan.note;
      if (plan.marks.length === 0 && !plan.dropSystem) return undefined;
      return applyPin(payload, plan);
    } catch (error) {
      warn(ctx, `cache pin skipped: ${(error as Error).message}`);
      return undefined;
    }
  });

  pi.on("message_end", (event, ctx) => {
    try {
      const message = event.message as { role?: unknown; provider?: unknown; model?: unknown; usage?: { cacheRead?: unknown; cacheWrite?: unknown } };
      if (message?.role !== "assistant" || !message.usage) return;
      const key = modelKey({ provider: message.provider, id: message.model });
      if (!key) return;
      log.observe(key, Number(message.usage.cacheRead) || 0, Number(message.usage.cacheWrite) || 0);
    } catch (error) {
      warn(ctx, `cache pin: cannot read the response's usage: ${(error as Error).message}`);
    }
  });

  return {
    readPoints(ctx) {
      const key = modelKey(ctx.model);
      if (!key || (ctx.model as { api?: unknown } | undefined)?.api !== ANTHROPIC_API) return [];
      try {
        return JSON.parse(log.readPoints(key, Date.now())) as string[];
      } catch {
        return [];
      }
    },
    describe(ctx, s) {
      if (!s.pinAnthropicCache) return "off (pinAnthropicCache false)";
      const model = ctx.model as { api?: unknown } | undefined;
      if (model?.api !== ANTHROPIC_API) return `on, idle: ${modelKey(ctx.model) ?? "the main model"} is not an Anthropic Messages model`;
      return `on; last request: ${note ?? "none yet"}`;
    },
  };
}
