// The only host boundary of /context: one read of Pi per open or refresh.
//
// It reads usage, the current system message (its sections and tool definitions;
// before the first prompt, the prompt and the active tools), the compaction settings,
// the projection and the branch, counts each projected message with Pi's own
// `estimateTokens`, and reduces the messages to two columns: the counts in a
// Float64Array and each message's kind (role and injected type) in a
// Uint32Array, with the few distinct kinds listed once. A message's text is
// read only when the core asks for it (`describe`), which it does for the five
// largest. Everything else — the composition, the threshold, drift, history,
// the largest messages, the gauges and the text — is computed by the core.
//
// Why columns: for a 5,000-message session, building one digest object with a
// text head per message cost ~4.6 ms here, and turning those into JSON and
// parsing them in the core ~7.5 ms more; the columns cost ~1.6 ms in all,
// most of it Pi's estimateTokens (tests/bench/report.bench.ts).
import type { ExtensionAPI, ExtensionContext } from "@earendil-works/pi-coding-agent";
import { getCurrentSystemMessage } from "@earendil-works/pi-ai";
import { calculateContextTokens, DEFAULT_COMPACTION_SETTINGS, estimateTokens, getLatestCompactionEntry } from "@earendil-works/pi-coding-agent";
import type { KeptOut } from "../kept.ts";
import type { ContextInputs, KeptInputs, Kind, Messages, MessageText, RequestInputs, SystemInputs } from "./types.ts";

/**
 * How much of a message's text travels to the core for its descriptor: the
 * descriptor is the first line clipped to 40 characters, so 100 leave room for
 * leading whitespace.
 */
const TEXT_HEAD = 100;

// Pi's message union grows with its versions; a digest reads fields defensively.
type Loose = Record<string, unknown>;

/**
 * The string with lone surrogates replaced by U+FFFD. The core reads its input
 * as JSON, which cannot carry half a character; a cut at TEXT_HEAD (or a
 * broken string from a tool) can leave one.
 */
const well = (s: string): string => s.replace(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, "\ufffd");
const str = (v: unknown): string | undefined => (typeof v === "string" ? v : undefined);
const head = (v: unknown): string | undefined => {
  const s = str(v);
  return s === undefined ? undefined : well(s.slice(0, TEXT_HEAD));
};

/** The start of the first text in a content value (a string or a block list). */
function firstText(content: unknown): string | undefined {
  if (typeof content === "string") return head(content);
  if (!Array.isArray(content)) return undefined;
  for (const block of content as Loose[]) {
    if (block?.type === "text" && typeof block.text === "string" && block.text.trim()) return head(block.text);
  }
  return undefined;
}

/** The whole text of a system message's content, as Pi's estimate counts it. */
function allText(content: unknown): string {
  if (typeof content === "string") return well(content);
  if (!Array.isArray(content)) return "";
  return well((content as Loose[]).map((b) => (b?.type === "text" && typeof b.text === "string" ? b.text : "")).join(""));
}

/** `JSON.stringify(v).length`, 0 for what does not stringify (a cycle, a BigInt). */
function jsonLength(v: unknown): number {
  try {
    return JSON.stringify(v)?.length ?? 0;
  } catch {
    return 0;
  }
}

function tokensOf(message: unknown): number {
  try {
    const n = estimateTokens(message as Parameters<typeof estimateTokens>[0]);
    return Number.isFinite(n) ? n : 0;
  } catch {
    // A message Pi's estimator cannot read counts 0 rather than failing the report.
    return 0;
  }
}

/** The short texts of one message that its descriptor is made from. */
export function describe(message: unknown): MessageText {
  const m = (message ?? {}) as Loose;
  switch (m.role) {
    case "assistant": {
      const blocks = Array.isArray(m.content) ? (m.content as Loose[]) : [];
      const call = blocks.find((b) => b?.type === "toolCall");
      return { toolName: call ? head(call.name) : undefined, text: firstText(blocks) };
    }
    case "toolResult":
      return { toolName: head(m.toolName) };
    case "bashExecution":
      return { command: head(m.command) };
    case "compactionSummary":
    case "branchSummary":
      return { text: head(m.summary) };
    default:
      return { text: firstText(m.content) };
  }
}

/**
 * The current system message (Pi's own replay of the projection's system messages) as the core
 * measures it: the content, the sections in order with their text, and each tool definition's
 * `JSON.stringify` length beside the whole array's, which is what Pi's `estimateTokens` counts.
 * Before the first prompt the projection holds none: then the prompt Pi would send and the active
 * tools as definitions.
 */
export function systemInputs(current: Loose | undefined, fallbackPrompt: string, fallbackTools: readonly Loose[]): SystemInputs {
  const tools = (current ? (Array.isArray(current.toolsAdded) ? current.toolsAdded : []) : fallbackTools) as Loose[];
  const sections = Object.entries(((current?.sections ?? {}) as Loose) ?? {})
    .filter(([, text]) => typeof text === "string")
    .map(([name, text]) => ({ name: well(name), text: well(text as string) }));
  return {
    content: current ? allText(current.content) : well(fallbackPrompt),
    sections,
    tools: tools.map((t) => ({ name: well(String(t?.name ?? "")), chars: jsonLength(t) })),
    toolsChars: tools.length > 0 ? jsonLength(tools) : 0,
  };
}

/** The projected messages as the core reads them: counts, kinds, system prompts, texts on demand. */
export function columns(list: readonly unknown[]): Messages {
  const tokens = new Float64Array(list.length);
  const kind = new Uint32Array(list.length);
  const kinds: Kind[] = [];
  // Kinds by role, injected types and tool results' tools by their raw value: a lookup per
  // message, a kind per new pair.
  const byRole = new Map<unknown, number>();
  const byType = new Map<unknown, number>();
  const byTool = new Map<unknown, number>();
  for (let i = 0; i < list.length; i++) {
    const m = (list[i] ?? {}) as Loose;
    tokens[i] = tokensOf(list[i]);
    const custom = m.role === "custom";
    const result = m.role === "toolResult";
    const index = custom ? byType : result ? byTool : byRole;
    const key = custom ? m.customType : result ? m.toolName : m.role;
    let k = index.get(key);
    if (k === undefined) {
      const kind: Kind = custom
        ? { role: "custom", customType: head(m.customType) }
        : result
          ? { role: "toolResult", toolName: head(m.toolName) }
          : { role: well(String(m.role ?? "")) };
      k = kinds.push(kind) - 1;
      index.set(key, k);
    }
    kind[i] = k;
  }
  return { tokens, kind, kinds, describe: (i) => describe(list[i]) };
}

/** A request's marks: a compaction, a `context_edit` (the guard's distills) since the request before. */
export const MARK_COMPACTION = 1;
export const MARK_EDIT = 2;

const finite = (n: unknown): number => (typeof n === "number" && Number.isFinite(n) ? n : 0);

/**
 * Context per request over the branch: each assistant message with usage Pi counts as valid (not
 * aborted, not an error, some tokens), as Pi's `calculateContextTokens` counts it, with the marks of
 * what came before it; the last such usage's cache; and the session's cost as Pi's footer sums it,
 * over every entry of the session (all branches): usage entries, assistant messages, tool results with
 * usage, compactions and branch summaries with usage.
 */
type UsageLike = { input?: unknown; cacheRead?: unknown; cacheWrite?: unknown; cost?: { total?: unknown } };
type EntryLike = { type?: string; usage?: UsageLike; message?: { role?: string; stopReason?: string; usage?: UsageLike } } | undefined;

export function requestInputs(branchEntries: readonly unknown[], sessionEntries: readonly unknown[]): RequestInputs {
  const branch = branchEntries as readonly EntryLike[];
  const entries = sessionEntries as readonly EntryLike[];
  const tokens: number[] = [];
  const marks: number[] = [];
  let pending = 0;
  let last: UsageLike | undefined;
  for (const e of branch) {
    if (e?.type === "compaction") pending |= MARK_COMPACTION;
    else if (e?.type === "context_edit") pending |= MARK_EDIT;
    else if (e?.type === "message" && e.message?.role === "assistant") {
      const m = e.message;
      if (m.stopReason === "aborted" || m.stopReason === "error" || !m.usage) continue;
      let t = 0;
      try {
        t = calculateContextTokens(m.usage as Parameters<typeof calculateContextTokens>[0]);
      } catch {
        continue;
      }
      if (!(t > 0)) continue;
      tokens.push(t);
      marks.push(pending);
      pending = 0;
      last = m.usage;
    }
  }
  let cost = 0;
  for (const e of entries) {
    const usage =
      e?.type === "usage" || ((e?.type === "compaction" || e?.type === "branch_summary") && e.usage)
        ? e.usage
        : e?.type === "message" && (e.message?.role === "assistant" || e.message?.role === "toolResult")
          ? e.message.usage
          : undefined;
    cost += finite(usage?.cost?.total);
  }
  return {
    tokens,
    marks,
    last: last ? { input: finite(last.input), cacheRead: finite(last.cacheRead), cacheWrite: finite(last.cacheWrite) } : undefined,
    cost: cost > 0 ? cost : undefined,
  };
}

/**
 * The guard's records and the model's recalls on the branch, with their positions: each
 * `context-guard` record's results (kind, entry, tool, outcome, characters saved) and each `recall`
 * call's entry. The core counts what is kept out by kind and which outputs were recalled after.
 */
export function keptInputs(branchEntries: readonly unknown[]): KeptInputs {
  const results: KeptInputs["results"] = [];
  const recalls: KeptInputs["recalls"] = [];
  branchEntries.forEach((raw, at) => {
    const e = (raw ?? {}) as Loose;
    if (e.type === "custom" && e.customType === "context-guard") {
      const list = ((e.data as Loose | undefined)?.results ?? []) as Loose[];
      if (!Array.isArray(list)) return;
      for (const r of list) {
        if (typeof r?.entryId !== "string") continue;
        const saved = finite(r.beforeChars) - finite(r.afterChars);
        results.push({ at, kind: String(r.kind ?? ""), entryId: well(r.entryId), tool: head(r.tool) ?? "", outcome: String(r.outcome ?? ""), saved });
      }
    } else if (e.type === "message" && (e.message as Loose | undefined)?.role === "assistant") {
      const blocks = (e.message as Loose).content;
      if (!Array.isArray(blocks)) return;
      for (const b of blocks as Loose[]) {
        const entryId = (b?.arguments as Loose | undefined)?.entryId;
        if (b?.type === "toolCall" && b.name === "recall" && typeof entryId === "string") recalls.push({ at, entryId: well(entryId) });
      }
    }
  });
  return { results, recalls };
}

/** The active tools as the request would declare them, for a session with no system message yet. */
function activeTools(pi: ExtensionAPI): Loose[] {
  const active = new Set(pi.getActiveTools());
  return pi
    .getAllTools()
    .filter((t) => active.has(t.name))
    .map((t) => ({ name: t.name, description: t.description ?? "", parameters: t.parameters ?? {} }));
}

/**
 * Reads Pi once and returns everything the core needs for the report; the
 * guard's figures come from `keptOut` (absent: the report has no guard line).
 */
export function collect(pi: ExtensionAPI, ctx: ExtensionContext, keptOut?: KeptOut): ContextInputs {
  const manager = ctx.sessionManager;
  const projection = manager.buildSessionProjection();
  const branch = manager.getBranch();
  const usage = ctx.getContextUsage();
  const model = ctx.model;
  const settings = (pi.getSettings?.() as Loose | undefined)?.compaction;

  const messages = columns(projection.messages);

  // The newest compaction kept the messages whose entries sit before it on the branch.
  const latest = getLatestCompactionEntry(branch);
  const kept: number[] = [];
  if (latest) {
    const position = new Map(branch.map((e, i) => [e.id, i]));
    const cut = position.get(latest.id) ?? -1;
    let index = 0;
    for (const entry of projection.entries as { sourceEntry: { id: string }; messages: unknown[] }[]) {
      const at = position.get(entry.sourceEntry.id) ?? Number.POSITIVE_INFINITY;
      for (let i = 0; i < entry.messages.length; i++, index++) if (at < cut) kept.push(index);
    }
  }

  return {
    usage: usage ? { tokens: usage.tokens, contextWindow: usage.contextWindow, percent: usage.percent } : undefined,
    model: model ? { provider: model.provider, id: model.id, contextWindow: model.contextWindow } : undefined,
    system: systemInputs(
      getCurrentSystemMessage(projection.messages as Parameters<typeof getCurrentSystemMessage>[0]) as Loose | undefined,
      ctx.getSystemPrompt() ?? "",
      activeTools(pi),
    ),
    compaction: {
      settings: settings === null ? undefined : settings,
      defaults: { enabled: DEFAULT_COMPACTION_SETTINGS.enabled, reserveTokens: DEFAULT_COMPACTION_SETTINGS.reserveTokens },
    },
    messages,
    history: {
      count: branch.filter((e) => e.type === "compaction").length,
      latest: latest ? { tokensBefore: latest.tokensBefore, summary: well(latest.summary ?? "") } : undefined,
      kept,
    },
    guard: keptOut?.(ctx),
    requests: requestInputs(branch, manager.getEntries()),
    keptDetail: keptOut ? keptInputs(branch) : undefined,
  };
}
