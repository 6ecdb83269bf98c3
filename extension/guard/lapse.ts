// The main model's prompt cache over time, as Pi lets an extension see it,
// and the pass that puts waiting edits in once the cache has lapsed (issue 20,
// "timing"; docs/GUARD.md "Waiting for the cache to lapse").
//
// The core decides (guard/cache.rs `MainModel::lapsed`: the TTL by provider,
// Pi's cache warming) from the facts cache-facts.ts reads into every pass's
// `MainModel`.
//
// Why the `context` hook of a run's first request: an edit must be in that
// request to be free (it writes the whole context anyway), and only
// `turn_end` and `agent_before_settle` may append a `context_edit`.
// `before_agent_start` and `input` run before the prompt is on the branch
// (the run, the question and which exchanges are old are all read from it)
// and can append nothing. So the pass runs in `context` once the prompt is
// there, hands Pi the messages with its edits applied the way Pi projects a
// `context_edit` (Pi's `projectContextEntry`), and the run's first
// `turn_end` appends the same edits and the record: from the second request
// on Pi's own projection carries them, byte for byte what the first sent.
// The only in-memory state is those drafts, between the two hooks of one
// request; an aborted request drops them (its context was not kept).
import type { ExtensionAPI, ExtensionContext } from "@earendil-works/pi-coding-agent";
import { callCore } from "../core.ts";
import type { Entry } from "./cache-facts.ts";
import { classifyAndFinish, passInput } from "./pass.ts";
import type { Background } from "./background.ts";
import type { findClassifier } from "./model.ts";
import { sessionScans } from "./scans.ts";
import type { BreakEvenDecision, GuardSettings, PassOutcome } from "./types.ts";
import { guardCore } from "./wasm.ts";

/** Whether the last pass left something for a cold cache: results deferred in the branch's latest record, or this process's last run end. */
function waiting(branch: readonly unknown[], lastBreakEven: readonly BreakEvenDecision[]): boolean {
  if (lastBreakEven.some((b) => b.rule !== "checkpoint" && !b.paidOff)) return true;
  for (let i = branch.length - 1; i >= 0; i--) {
    const e = branch[i] as Entry;
    if (e.type !== "custom" || e.customType !== "context-guard") continue;
    return defers(e.data);
  }
  return false;
}

type Draft = PassOutcome["entries"][number];
const isEdit = (d: Draft) => (d as { type?: string }).type === "context_edit";
/** Whether a record's data leaves outputs waiting (`deferred` results). */
const defers = (data: unknown) => ((data as { results?: { reason?: unknown }[] } | undefined)?.results ?? []).some((r) => r?.reason === "deferred");

/** The branch's latest message entry, found from the leaf up: every request asks, and most stop here. */
function latestMessage(ctx: ExtensionContext): Entry | undefined {
  type Linked = Entry & { parentId?: string | null };
  let e = ctx.sessionManager.getLeafEntry() as Linked | undefined;
  while (e && e.type !== "message") e = e.parentId ? (ctx.sessionManager.getEntry(e.parentId) as Linked | undefined) : undefined;
  return e;
}
type Projected = { sourceEntry: { id: string }; messages: { role?: string }[] };

/** A message with a `context_edit`'s replacement, as Pi's `projectContextEntry` (session-manager.js) applies one. */
function replaced(message: { role?: string }, content: unknown): { role?: string } {
  if (message.role !== "user" && message.role !== "assistant" && message.role !== "toolResult" && message.role !== "custom") return message;
  const text = (message.role === "assistant" || message.role === "toolResult") && typeof content === "string";
  return { ...message, content: text ? [{ type: "text", text: content }] : content } as { role?: string };
}

/**
 * `messages` (the `context` event's, system messages left out) with `drafts` applied as Pi projects a
 * `context_edit`, or undefined when they do not line up with the session's projection `entries` (another
 * extension changed them): then nothing is applied and nothing appended.
 */
function applyDrafts(entries: readonly Projected[], messages: readonly { role?: string }[], drafts: readonly Draft[]): { role?: string }[] | undefined {
  const visible = entries.flatMap((e) => e.messages.filter((m) => m.role !== "system"));
  if (visible.length !== messages.length || visible.some((m, i) => m.role !== messages[i].role)) return undefined;
  const edits = new Map<string, { content?: unknown } | null>();
  for (const d of drafts) {
    const edit = d as { type?: string; targetId?: string; replacement?: { content?: unknown } | null };
    if (edit.type === "context_edit" && typeof edit.targetId === "string") edits.set(edit.targetId, edit.replacement ?? null);
  }
  const out: { role?: string }[] = [];
  let at = 0;
  for (const e of entries) {
    const own = messages.slice(at, at + e.messages.filter((m) => m.role !== "system").length);
    at += own.length;
    if (!edits.has(e.sourceEntry.id)) out.push(...own);
    else {
      const replacement = edits.get(e.sourceEntry.id);
      if (replacement) out.push(...own.map((m) => replaced(m, replacement.content)));
    }
  }
  return out;
}

export interface OpeningDeps {
  settingsOf: (ctx: ExtensionContext) => { settings: GuardSettings };
  lookup: (ctx: ExtensionContext, settings: GuardSettings) => ReturnType<typeof findClassifier>;
  busy: (ctx: ExtensionContext) => void;
  warnOnce: (ctx: ExtensionContext, message: string) => void;
  readPoints: (ctx: ExtensionContext) => string[];
  /** The passes whose judge works in the background: their answers land here when they are in (issue 27). */
  background: Background;
  lastBreakEven: () => readonly BreakEvenDecision[];
  noteBreakEven: (decisions: BreakEvenDecision[]) => void;
}

/**
 * The opening pass: before the first request of a prompt that comes after the main model's cache lapsed,
 * the run-end rules run again with the cold cache (no rewrite counted), so what they held back goes in
 * free. Registered before the checkpoint's `turn_end`, which then sees these edits among the proposals.
 */
export function registerOpening(pi: ExtensionAPI, deps: OpeningDeps): void {
  let pending: { promptId: string; entries: Draft[] } | undefined;
  const seen = new Set<string>();
  pi.on("session_start", () => {
    pending = undefined;
    seen.clear();
  });
  pi.on("agent_settled", () => {
    pending = undefined;
  });

  /**
   * The request's messages with `entries` applied, the drafts kept for the run's first turn_end to append.
   * When they do not line up with the session's projection (another extension changed them) nothing is
   * applied and `otherwise` is said once; a landing's drafts are still appended at that turn_end (Pi's own
   * projection carries them from the next request on), an opening pass's wait for another prompt. `before`:
   * drafts appended first whatever happens (records that landed with no edit).
   */
  const offer = (
    ctx: ExtensionContext,
    entries: Draft[],
    contextEntries: Projected[],
    messages: { role?: string }[],
    promptId: string,
    landing: boolean,
    before: Draft[] = [],
  ) => {
    const applied = applyDrafts(contextEntries, messages, entries);
    const kept = applied || landing ? [...before, ...entries] : before;
    pending = kept.length ? { promptId, entries: kept } : undefined;
    if (applied) return { messages: applied as never };
    const otherwise = landing ? "the judge's answers land at this run's first turn_end" : "the edits for a lapsed cache wait";
    deps.warnOnce(ctx, `the request's messages differ from the session's projection; ${otherwise}`);
    return undefined;
  };

  pi.on("context", async (event, ctx) => {
    try {
      const { settings } = deps.settingsOf(ctx);
      if (!settings.enabled) return undefined;
      const lastMessage = latestMessage(ctx);
      // Only the run's first request: the branch ends with its prompt. Once a prompt, whatever happens.
      if (lastMessage?.message?.role !== "user" || !lastMessage.id || seen.has(lastMessage.id)) return undefined;
      seen.add(lastMessage.id);
      const lookup = deps.lookup(ctx, settings);
      // A run end's plan not made yet (this prompt came right after it) starts its judge now.
      deps.background.flush();
      const messages = event.messages as { role?: string }[];
      const projection = () => (ctx.sessionManager.buildSessionProjection() as { entries: Projected[] }).entries;
      // Answers in from the judge in the background (the last run end's, most often) land in this request,
      // before anything else (issue 27); its edits and the opening pass's are not planned together.
      let landed: Draft[] = [];
      let contextEntries: Projected[] | undefined;
      if (deps.background.busy) {
        contextEntries = projection();
        const entries = contextEntries;
        landed = deps.background.land(ctx, () => passInput(ctx, entries, settings, lookup.ok, deps.readPoints(ctx)), settings, true).entries;
        if (landed.some(isEdit)) return offer(ctx, landed, entries, messages, lastMessage.id, true);
        // Only records (outputs that wait): appended at the first turn_end, with what the opening pass adds.
        if (landed.length) pending = { promptId: lastMessage.id, entries: landed };
      }
      const records = landed.filter((d) => !isEdit(d)).map((d) => (d as { data?: unknown }).data);
      if (!records.some(defers) && !waiting(ctx.sessionManager.getBranch(), deps.lastBreakEven())) return undefined;
      contextEntries ??= projection();
      const input = passInput(ctx, contextEntries, settings, lookup.ok, deps.readPoints(ctx));
      // The records that just landed are not in the projection yet: the opening pass reads them too.
      const at = contextEntries.length;
      const planned = callCore(() =>
        guardCore.planPass(
          {
            ...input,
            records: [...(input.records ?? []), ...records.map((data) => ({ at, data }))],
            judging: deps.background.held(),
            model: { ...input.model!, opening: true },
          },
          sessionScans(ctx),
        ),
      );
      if (!planned.ok) {
        deps.warnOnce(ctx, `the pass for a lapsed cache could not be planned, nothing was changed: ${planned.error}`);
        return undefined;
      }
      if (planned.value.skipped) return undefined;
      // The user waits for the classifier here (at most `timeoutMs`), as at a checkpoint.
      const outcome = await classifyAndFinish(ctx, planned.value, lookup, settings, deps.busy, deps.background.slots);
      if (!outcome.ok) {
        deps.warnOnce(ctx, `the pass for a lapsed cache could not finish, nothing was changed: ${outcome.error}`);
        return undefined;
      }
      const entries = outcome.value.entries;
      if (!entries.some(isEdit)) {
        if (outcome.value.breakEven?.length) deps.noteBreakEven(outcome.value.breakEven);
        return undefined;
      }
      const offered = offer(ctx, entries, contextEntries, messages, lastMessage.id, false, landed);
      if (offered) deps.noteBreakEven(outcome.value.breakEven ?? []);
      return offered;
    } catch (error) {
      deps.warnOnce(ctx, `the pass for a lapsed cache failed, nothing was changed: ${(error as Error).message}`);
      return undefined;
    }
  });

  pi.on("turn_end", (event, ctx) => {
    const p = pending;
    pending = undefined;
    if (!p) return undefined;
    try {
      // The drafts belong to the prompt still on the branch; a different branch (a `/tree` jump) drops them.
      if (!ctx.sessionManager.getEntry(p.promptId)) return undefined;
      return { entries: [...event.entries, ...p.entries] as typeof event.entries };
    } catch (error) {
      deps.warnOnce(ctx, `the edits for a lapsed cache were not appended: ${(error as Error).message}`);
      return undefined;
    }
  });
}
