// The guard's net effect on the main model's bill so far (issue 20 part 5):
// the branch read as the events the core's guard/bill.rs computes it from.
// One reader for every place that shows the figure: `/guard` and `/context`
// (through `keptOut`) read the session's branch with it, the audit feeds it the
// branch's lines as it reads a file. Nothing is decided here: each reply's
// recorded usage, each message's characters, each `context-guard` record, each
// `recall` result's characters and each compaction go to the core as Pi wrote them.
import type { ExtensionContext } from "@earendil-works/pi-coding-agent";
import { callCore, type Loose } from "../core.ts";
import type { GuardBill } from "../kept.ts";
import type { BillEvent, BillInput } from "./types.ts";
import { guardCore } from "./wasm.ts";

const num = (v: unknown): number => (typeof v === "number" && Number.isFinite(v) ? v : 0);

/** Characters of a message's text blocks (a string content counts whole): what a recall brought back (the audit's tool output too). */
export function textChars(content: unknown): number {
  if (typeof content === "string") return content.length;
  if (!Array.isArray(content)) return 0;
  let n = 0;
  for (const b of content) if (b?.type === "text" && typeof b.text === "string") n += b.text.length;
  return n;
}

/** Characters a message adds to the context: its text blocks, and an assistant's thinking and tool-call arguments. */
function messageChars(m: Loose): number {
  let n = textChars(m.content);
  if (m.role === "assistant" && Array.isArray(m.content)) {
    for (const b of m.content) {
      if (b?.type === "thinking" && typeof b.thinking === "string") n += b.thinking.length;
      else if (b?.type === "toolCall") n += JSON.stringify(b.arguments ?? {}).length;
    }
  }
  return n;
}

/** The branch's events, fed one entry at a time in branch order (a file's lines or Pi's `getBranch()`). */
export class BillEvents {
  readonly events: BillEvent[] = [];
  /** Tool call ids of `recall` calls waiting for their results. */
  private recalls = new Set<string>();

  add(entry: Loose | null | undefined): void {
    switch (entry?.type) {
      case "message":
        return this.message(entry.message ?? {});
      case "compaction":
        this.events.push({ type: "compaction" });
        return;
      case "custom":
        if (entry.customType === "context-guard") this.events.push({ type: "record", data: entry.data ?? {} });
        return;
    }
  }

  private message(m: Loose): void {
    this.events.push({ type: "message", chars: messageChars(m) });
    if (m.role === "assistant") {
      const u = (m.usage ?? {}) as Loose;
      const cost = (u.cost ?? {}) as Loose;
      this.events.push({
        type: "request",
        usage: {
          input: num(u.input),
          cacheRead: num(u.cacheRead),
          cacheWrite: num(u.cacheWrite),
          cost: { input: num(cost.input), cacheRead: num(cost.cacheRead), cacheWrite: num(cost.cacheWrite) },
        },
      });
      if (Array.isArray(m.content)) {
        for (const b of m.content) if (b?.type === "toolCall" && b.name === "recall" && typeof b.id === "string") this.recalls.add(b.id);
      }
    } else if (m.role === "toolResult" && this.recalls.delete(m.toolCallId)) {
      this.events.push({ type: "recall", chars: textChars(m.content) });
    }
  }
}

/** The catalog's prices of a model (`model.cost`, dollars per million tokens), when it has any. */
export function catalogPrices(model: unknown): BillInput["catalog"] {
  const cost = (model as { cost?: Loose } | undefined)?.cost;
  if (!cost) return undefined;
  return { input: num(cost.input), cacheRead: num(cost.cacheRead), cacheWrite: num(cost.cacheWrite) };
}

/** The bill of a branch, or the core's error as a value. */
export function billOf(events: BillEvent[], catalog: BillInput["catalog"]): { ok: true; value: GuardBill } | { ok: false; error: string } {
  return callCore(() => guardCore.bill({ events, catalog }));
}

/** The bill of the session's branch, the main model's catalog prices as the fallback; `undefined` when it cannot be computed. */
export function sessionBill(ctx: ExtensionContext): GuardBill | undefined {
  try {
    const events = new BillEvents();
    for (const entry of ctx.sessionManager.getBranch()) events.add(entry as unknown as Loose);
    const bill = billOf(events.events, catalogPrices(ctx.model));
    return bill.ok ? bill.value : undefined;
  } catch {
    return undefined; // a host that cannot give its branch: no line, never a failure
  }
}
