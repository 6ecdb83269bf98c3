// The judge off the critical path (issue 27; docs/GUARD.md "Nobody waits for
// the judge"). A checkpoint or a run end plans in the core, starts its judge
// requests here and returns at once; Pi goes on. The answers land at the
// first boundary after they are in where an extension may append an edit: a
// `turn_end`, `agent_before_settle`, or a prompt's first request (the
// `context` hook, lapse.ts). Before landing, the plan is checked against what
// changed meanwhile: the entry it was planned at must still be on the branch
// (a `/tree` jump drops it), the settings must be the ones it was planned
// with, and the core (guard/pass/land.rs) drops each item edited or gone
// since and weighs the rest again at the later landing. Esc, `/guard off`, a
// new session and Pi's exit abort what is out; nothing is applied then.
//
// The only state here is the passes still out and one line of what happened
// last, for `/guard`. Every rule is the core's.
import type { ExtensionContext } from "@earendil-works/pi-coding-agent";
import { callCore } from "../core.ts";
import { safeBranch } from "./cache-facts.ts";
import { classifierOf } from "./judge.ts";
import type { findClassifier } from "./model.ts";
import { type RunResult, runRequests, Slots } from "./requests.ts";
import type { GuardSettings, PassInput, PassOutcome } from "./types.ts";
import { guardCore, type Planned } from "./wasm.ts";

type Lookup = ReturnType<typeof findClassifier>;
type Draft = PassOutcome["entries"][number];

/** A pass whose judge requests are out, or whose answers wait to land. */
interface Job {
  phase: "run-end" | "mid-run";
  planned: Planned;
  /** The entries the pass would edit (`PassState::held`), and how many items it asked about. */
  held: string[];
  asked: number;
  /** The last entry of the context it was planned on: it must still be on the branch when the answers land. */
  anchor: string | undefined;
  settingsKey: string;
  plannedMs: number;
  abort: AbortController;
  /** Set when every request has ended. */
  run?: RunResult;
  /** Aborted by the user (Esc) or dropped: nothing lands. */
  dropped?: string;
  /** Settles when every request has ended. */
  done: Promise<void>;
  /** Times its answers, all waiting where they would land, were carried to a later landing. */
  carries: number;
  /** Boundaries a carried pass saw no other edit land at. */
  idle: number;
}

/** At most this many carries, or this many boundaries without another landing, before a pass's answers land as they are. */
const MAX_CARRIES = 3;
const MAX_IDLE = 8;

/** What a landing gives the boundary: the drafts to append, the ids they hold. */
export interface Landed {
  entries: Draft[];
  held: string[];
}

export class Background {
  private jobs: Job[] = [];
  /** One line on what happened last (landed, dropped and why), for `/guard`. */
  last: string | undefined;
  readonly slots = new Slots(1);
  /** Set when Pi shuts the session down: nothing starts after that. */
  closed = false;

  /** Runs when a pass's answers are in (the status bar shows it). */
  private changed: (ctx: ExtensionContext) => void;
  /** Runs with each pass that lands (`/guard` keeps a run end's break-even decisions). */
  private landed?: (phase: Job["phase"], outcome: PassOutcome) => void;
  constructor(changed: (ctx: ExtensionContext) => void, landed?: (phase: Job["phase"], outcome: PassOutcome) => void) {
    this.changed = changed;
    this.landed = landed;
  }

  /** Steps `later` put off, run by `flush`. */
  private pending: { step: () => void; warn: (message: string) => void }[] = [];

  /**
   * Runs `step` once the current event is over (a plan is made there, after Pi went on), or at the next
   * `flush`, whichever comes first: prompts sent back to back, with no I/O between, reach Pi's next event
   * before the event loop runs a timer. A failure is `warn`ed, and nothing changes.
   */
  later(step: () => void, warn: (message: string) => void): void {
    this.pending.push({ step, warn });
    setImmediate(() => this.flush());
  }

  /** Runs every step `later` put off, oldest first (each once). The guard's hooks call it first. */
  flush(): void {
    const steps = this.pending;
    this.pending = [];
    for (const { step, warn } of steps) {
      if (this.closed) return;
      try {
        step();
      } catch (error) {
        warn(`the pass failed, nothing was changed: ${(error as Error).message}`);
      }
    }
  }

  /** Starts a planned pass's requests in the background; `signal`, the run's, aborts them (Esc). */
  start(
    ctx: ExtensionContext,
    phase: Job["phase"],
    planned: Planned,
    lookup: Lookup,
    settings: GuardSettings,
    contextEntries: readonly unknown[],
    signal?: AbortSignal,
  ): void {
    if (this.closed) {
      planned.pass.plan.free();
      return;
    }
    const last = contextEntries.at(-1) as { sourceEntry?: { id?: string } } | undefined;
    const [asked, ...held] = planned.pass.plan.held.split("\n");
    const job: Job = {
      phase,
      planned,
      held,
      asked: Number(asked) || 0,
      anchor: last?.sourceEntry?.id,
      settingsKey: JSON.stringify(settings),
      plannedMs: Date.now(),
      abort: new AbortController(),
      done: Promise.resolve(),
      carries: 0,
      idle: 0,
    };
    const onAbort = () => this.drop(job, "the run was stopped (Esc)");
    signal?.addEventListener("abort", onAbort, { once: true });
    this.jobs.push(job);
    job.done = runRequests(planned.requests, classifierOf(ctx, lookup), {
      concurrency: settings.concurrency,
      timeoutMs: settings.timeoutMs,
      signal: job.abort.signal,
      slots: this.slots,
    })
      .then((run) => {
        job.run = run;
        if (!job.dropped && planned.requests.length > 0) this.judgeMs = average(this.judgeMs, run.ms);
      })
      .catch((error: unknown) => {
        job.dropped ??= `the judge's requests failed: ${(error as Error)?.message ?? error}`;
        job.run = { outcomes: [], timedOut: false, ms: 0 };
      })
      .finally(() => {
        signal?.removeEventListener("abort", onAbort);
        try {
          this.changed(ctx);
        } catch {
          // The status is cosmetic.
        }
      });
  }

  /** How long the judge takes for a pass, and a turn of the run, ms (moving averages; 0 until seen). */
  private judgeMs = 0;
  private turnMs = 0;
  private lastTurnEnd = 0;

  /** Notes a turn's end (the turns' length feeds `lag`); `first` at a run's first turn. */
  turnEnded(first: boolean, now = Date.now()): void {
    if (!first && this.lastTurnEnd > 0) this.turnMs = average(this.turnMs, now - this.lastTurnEnd);
    this.lastTurnEnd = now;
  }

  /**
   * Turns a checkpoint planned now lands after: its answers land at the first turn end after they are in,
   * so the judge's time over a turn's, at least 1 (the core plans that many turns ahead). `priorJudgeMs`
   * stands for the judge's time before one was seen (0: 1 turn).
   */
  lag(priorJudgeMs = 0): number {
    const judgeMs = this.judgeMs > 0 ? this.judgeMs : priorJudgeMs;
    if (judgeMs <= 0 || this.turnMs <= 0) return 1;
    return Math.max(1, Math.ceil(judgeMs / this.turnMs));
  }

  /**
   * Resolves once every pass out has its answers (or was dropped), or after `ms`: before Pi compacts, the
   * answers of a pass started early are worth the wait more than a new pass over the same outputs.
   */
  async whenIn(ms: number): Promise<void> {
    const out = this.jobs.filter((j) => !j.run && !j.dropped).map((j) => j.done);
    if (out.length === 0) return;
    let timer: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([Promise.all(out), new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)))]);
    clearTimeout(timer);
  }

  /** Items the judge is still asked about, across passes. */
  get judging(): number {
    return this.jobs.filter((j) => !j.run && !j.dropped).reduce((n, j) => n + j.asked, 0);
  }

  /** Outputs judged whose answers wait to land at the next boundary (`carried`: with the next edits). */
  private waiting(carried: boolean): number {
    return this.jobs.filter((j) => j.run && !j.dropped && j.carries > 0 === carried).reduce((n, j) => n + j.asked, 0);
  }

  /** Outputs judged whose answers wait to land. */
  get ready(): number {
    return this.waiting(false) + this.waiting(true);
  }

  /** The status bar's part after the savings: ` · judging 3 outputs…`, ` · 3 outputs judged, to land next`, or nothing. */
  status(): string {
    if (this.judging > 0) return ` · judging ${outputs(this.judging)}…`;
    return this.ready > 0 ? ` · ${outputs(this.ready)} judged, to land next` : "";
  }

  /** `/guard`'s line: what is judged now, what waits to land, what happened last; none when nothing did. */
  describe(): string | undefined {
    const now = [
      this.judging > 0 ? `judging ${outputs(this.judging)}` : "",
      this.waiting(false) > 0 ? `${outputs(this.waiting(false))} judged, to land at the next boundary` : "",
      this.waiting(true) > 0 ? `${outputs(this.waiting(true))} judged, to land with the next edits` : "",
    ];
    const parts = [...now.filter(Boolean), this.last ? `last: ${this.last}` : ""].filter(Boolean);
    return parts.length ? parts.join("; ") : undefined;
  }

  /** Whether a pass is out or waits to land. */
  get busy(): boolean {
    return this.jobs.some((j) => !j.dropped && j.carries === 0);
  }

  /**
   * The entries passes out or waiting hold: a new plan leaves them alone (`PassInput.judging`). Not `carried`:
   * before Pi compacts, answers carried to a later landing must not keep their outputs from being distilled
   * now (what that pass edits, the carried one then finds edited and leaves alone).
   */
  held(carried = true): string[] {
    return this.jobs.filter((j) => !j.dropped && (carried || j.carries === 0)).flatMap((j) => j.held);
  }

  /** Aborts every pass out and drops every answer not landed, saying why (in `/guard`'s last line). */
  dropAll(why: string): void {
    this.pending = [];
    for (const job of [...this.jobs]) this.drop(job, why);
  }

  /** Drops the passes planned on entries no longer on the branch (after `/tree`). */
  dropOffBranch(ctx: ExtensionContext): void {
    const onBranch = branchIds(ctx);
    for (const job of [...this.jobs]) if (job.anchor && !onBranch.has(job.anchor)) this.drop(job, "the branch changed (/tree)");
  }

  /**
   * The drafts of every pass whose answers are in, checked and weighed again against `input` (the context
   * now): edits on entries edited or gone since are dropped. `inRequest` when they go into a prompt's
   * first request. A pass planned on another branch or with other settings is dropped whole.
   */
  land(ctx: ExtensionContext, inputNow: () => PassInput, settings: GuardSettings, inRequest: boolean): Landed {
    const landed: Landed = { entries: [], held: [] };
    const ready = this.jobs.filter((j) => j.run && !j.dropped);
    if (ready.length === 0) return landed;
    const input = inputNow();
    const onBranch = branchIds(ctx);
    const notes: string[] = [];
    const usable = (job: Job) => {
      if (job.anchor && !onBranch.has(job.anchor)) this.drop(job, "the branch changed");
      else if (job.settingsKey !== JSON.stringify(settings)) this.drop(job, "the settings changed");
      return !job.dropped;
    };
    // Fresh answers first. Late answers that would have paid where they were planned and all wait where
    // they land (`PassOutcome.carry`) are carried to a boundary where another pass's edits land: the context
    // is written again from those anyway, so theirs cost less there.
    for (const job of ready.filter((j) => j.carries === 0)) {
      if (usable(job)) this.landOne(job, input, landed, inRequest, notes, true);
    }
    // Newest first: each then adds only the rewrite up to the edits of the one landed before it.
    const edited = editTargets(landed.entries).length > 0;
    for (const job of ready.filter((j) => j.carries > 0).reverse()) {
      if (!usable(job)) continue;
      if (edited) this.landOne(job, input, landed, inRequest, notes, job.carries < MAX_CARRIES);
      else if (++job.idle >= MAX_IDLE) this.landOne(job, input, landed, inRequest, notes, false);
    }
    if (notes.length) this.last = notes.join("; ");
    return landed;
  }

  /**
   * Lands one pass's answers into `landed`, or, when `carry` is allowed and the core says their edits all wait
   * here though they would have paid where planned (`PassOutcome.carry`), keeps them to land again later.
   */
  private landOne(job: Job, input: PassInput, landed: Landed, inRequest: boolean, notes: string[], carry: boolean): void {
    const ms = Date.now() - job.plannedMs;
    // What the passes landed before it edit here (the core's `land` weighs only the rewrite before those).
    const judging = editTargets(landed.entries);
    const dropped = callCore(() => guardCore.landPass(job.planned.pass, { ...input, judging }, job.anchor ?? "", ms, inRequest));
    if (!dropped.ok) {
      this.forget(job);
      notes.push(`the ${job.phase} judge's answers were not landed: ${dropped.error}`);
      return;
    }
    const outcome = callCore(() => guardCore.finishPass(job.planned.pass, job.run as RunResult, true));
    if (!outcome.ok) {
      this.forget(job);
      notes.push(`the ${job.phase} judge's answers were not landed: ${outcome.error}`);
      return;
    }
    const edits = editTargets(outcome.value.entries).length;
    if (carry && outcome.value.carry) {
      [job.carries, job.idle] = [job.carries + 1, 0];
      notes.push(
        `the ${job.phase} judge's answers about ${outputs(job.asked)} wait to land with the next edits: they would have paid where they were planned, and the context grew while the judge worked`,
      );
      return;
    }
    this.forget(job);
    landed.entries.push(...outcome.value.entries);
    this.landed?.(job.phase, outcome.value);
    landed.held.push(...job.held);
    const late = outcome.value.record?.late;
    const seconds = late ? `${(late.ms / 1000).toFixed(1)} s after it was planned` : "";
    const when = !late
      ? ""
      : late.requests === 0
        ? ` before the next request, ${seconds}`
        : ` ${late.requests} request${late.requests === 1 ? "" : "s"} and ${seconds}`;
    const gone = dropped.value.length ? `; ${dropped.value.length} left alone, edited or gone meanwhile` : "";
    const carried = late?.carried ? `, having waited through ${late.carried} landing${late.carried === 1 ? "" : "s"}` : "";
    notes.push(`the ${job.phase} judge's answers landed${when}${carried}: ${edits} edit${edits === 1 ? "" : "s"}${gone}`);
  }

  private drop(job: Job, why: string): void {
    if (job.dropped) return;
    job.dropped = why;
    job.abort.abort();
    this.forget(job);
    this.last = `the ${job.phase} judge's answers about ${job.asked} item${job.asked === 1 ? "" : "s"} were dropped: ${why}`;
  }

  private forget(job: Job): void {
    this.jobs = this.jobs.filter((j) => j !== job);
    try {
      job.planned.pass.plan.free();
    } catch {
      // Freed already.
    }
  }
}

/** A moving average that follows the last few values (the first one taken as it is). */
function average(mean: number, value: number): number {
  if (!Number.isFinite(value) || value < 0) return mean;
  return mean > 0 ? 0.7 * mean + 0.3 * value : value;
}

/** `3 outputs`, `1 output`. */
/** The entries the `context_edit` drafts among `drafts` edit. */
const editTargets = (drafts: readonly Draft[]) => drafts.flatMap((d) => (d.type === "context_edit" ? [d.targetId] : []));

const outputs = (n: number) => `${n} output${n === 1 ? "" : "s"}`;

/** The ids of the entries on the active branch. */
const branchIds = (ctx: ExtensionContext) => new Set(safeBranch(ctx).map((e) => (e as { id?: string }).id));
