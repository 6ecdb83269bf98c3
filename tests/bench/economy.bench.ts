// Benchmark: the guard's economy, the suite of issue 20 (docs/GUARD.md
// "Measured"), measured on scripted runs inside real Pi. The runs are the
// "fix all failing tests" loop of tests/harness/long-run.ts at about 5, 9,
// 18, 33, 48 and 64 provider requests (1, 2, 5 and 10 bugs; the two longest
// add looks at the tests and the code before the fixes); a search-and-read
// audit (tests/harness/search-run.ts: a grep, then 30 reads of handlers of
// 9–12 KB each, 32 requests), whose outputs are many and alike; and a session
// of 6 prompts, one bug each (long-run.ts's `pausedSession`, 25 requests),
// with pauses of 2, 10, 2, 2 and 10 minutes between them on the shifted clock
// of tests/harness/clock.ts, which the server, Pi and the guard share, so the
// servers' 5-minute cache lapses across the 10-minute pauses and not across
// the others. Each runs on two
// providers: Pi's own `anthropic` provider (`claude-sonnet-4-5`) against the
// loopback server of tests/harness/anthropic-server.ts (Anthropic's
// documented prompt cache: breakpoints, 20-block lookback, TTL, minimum) and
// Pi's own `openai` provider (`gpt-4.1`, the Responses API) against
// tests/harness/openai-server.ts (OpenAI's automatic prefix cache: 1,024
// tokens, 128-token steps, no write premium). Real session, tools, folder and
// extension loading; the classifier is the oracle's stand-in (it keeps
// exactly the chunks that hold a needed line; a classifier, not a chat model,
// so the judge's own cost is 0 here). In the session it also answers the
// old-exchange questions truthfully: an earlier exchange is needed exactly
// when it names the current prompt's bug, and each prompt fixes another bug,
// so the earlier ones are unrelated; what the session's last request and its
// window after the run must hold is what the last prompt's bug needs (its
// failing assertion lines and the line its edit replaces). The session's rows
// add the old exchanges omitted and the guard records weighed on a lapsed
// cache (`lapsedMs`: an omission that waited for the cache to lapse).
//
// Per run, provider and configuration: requests, peak context (Pi's
// `estimateTokens` over each request's messages as Pi hands them to the
// provider), the cache as the server counted it, the main model's cost
// (Pi's own `calculateCost` with the catalog's `model.cost`), checkpoints,
// and the oracle's needed lines missing (neither in the last request nor
// recalled; and after the run, in the window).
//
// Configurations: guard off, run end only (`midRun: false`), default, and
// `midRunBreakEven: false` (checkpoints for room alone). `--compare` adds
// the alternatives the defaults were chosen from (the estimator of later
// requests, the room trigger off, the age gate), printed for the choice in
// docs/GUARD.md ("When an edit pays off"), not gated.
//
// Issue 26's shapes follow: the audit of 5 handlers (search-run.ts), then
// 1, 2 (one with a small grep) or 4 short questions answered from what it
// read, with no pause, 1-minute pauses or 10-minute pauses (the cache
// lapses); and the 6-prompt session with no pauses. They are measured and
// printed beside the suite, and their goals are not counted until run-end
// distilling weighs the cache (issue 26 part 1).
//
// Targets at default settings, per provider (issue 20 part 4): (a) a run of
// at most 8 requests costs exactly what guard off costs; (b) no run costs
// more than 1.01× guard off (1.05× until 2026-12-02); (c) the suite together at most 0.85× guard off;
// (d) every run of 30 requests or more peaks at most at 0.5× guard off;
// (e) no needed line missing; and (d)'s second half, each run of 30 requests
// or more (one prompt; a session's pauses and run-end passes are outside the
// bound's model) within 1.15× of the hindsight bound's cheapest schedule: the
// guard-off requests replayed through one prefix-cache model over every
// schedule of checkpoints the age gate allows (tests/bench/hindsight.ts, a
// simulation, so the default's own schedule is replayed through the same
// model for the comparison, and the model's guard off is printed beside the
// server's count).
//
// Pi 1.6's idle cache warming would replay requests the script did not plan:
// it is off in every configuration, checked from Pi's own settings, and each
// server must have seen exactly the requests Pi's context hook saw. A body a
// server rejects fails the bench.
import { type AnthropicServer, anthropicSession, breakpointsOf, type RequestUsage, startAnthropicServer } from "../harness/anthropic-server.ts";
import { type Behaviour, slowJudge } from "../harness/classifier.ts";
import { type ShiftedClock, shiftedClock } from "../harness/clock.ts";
import {
  checkOracle,
  checkRunWorked,
  failingClassifier,
  keepingClassifier,
  LONG_RUN_PI_SETTINGS,
  LONG_RUN_PROMPT,
  lastPromptLines,
  longRunScript,
  type OracleCheck,
  oracleClassifier,
  oracleLines,
  pausedSession,
  pause,
  project,
  putNodeOnPath,
  SESSION_PAUSE_MINUTES,
  SHORT_RUN_PROMPT,
  shortRunScript,
} from "../harness/long-run.ts";
import { openAiSession, startOpenAiServer } from "../harness/openai-server.ts";
import { agent, ai, type Loose, piVersion } from "../harness/pi.ts";
import { checkSearchWorked, followUps, SEARCH_PROMPT, searchOracle, searchProject, searchScript } from "../harness/search-run.ts";
import { type PiSession, type ProviderRequest, type Step, startSession } from "../harness/session.ts";
import { cheapest, lowestPeak, type Recorded, replay, type Schedule } from "./hindsight.ts";
import { goal } from "./verdict.ts";

if (typeof ai.calculateCost !== "function") throw new Error(`economy: Pi ${piVersion}'s pi-ai has no calculateCost to price the requests with`);

const COMPARE = process.argv.includes("--compare");

interface Shape {
  name: string;
  /**
   * "fix" (default): long-run.ts's run; "search": search-run.ts's audit; "session": long-run.ts's
   * `pausedSession`; "follow-ups": the audit of `reads` handlers, then `followUps` short questions.
   */
  kind?: "fix" | "search" | "session" | "follow-ups";
  short?: boolean;
  bugs: number;
  extra?: number;
  reads?: number;
  followUps?: number;
  /** Minutes between the prompts of a session or of the follow-ups (a session's own pauses when not given). */
  pauseMinutes?: number;
  /** Issue 26's shapes: measured and printed; their goals are not counted until the rule they need exists. */
  issue26?: boolean;
  /** A judge that keeps this share of what the work does not need (long-run.ts `keepingClassifier`). */
  judgeKeeps?: number;
  /** A judge of which one request in this many fails (long-run.ts `failingClassifier`). */
  judgeFails?: number;
}

const ALL_SHAPES: Shape[] = [
  { name: "1 bug", short: true, bugs: 1 },
  { name: "2 bugs", bugs: 2 },
  { name: "5 bugs", bugs: 5 },
  { name: "10 bugs", bugs: 10 },
  { name: "10 bugs, 15 looks", bugs: 10, extra: 15 },
  { name: "10 bugs, 31 looks", bugs: 10, extra: 31 },
  { name: "search and read, 30 handlers", kind: "search", bugs: 0 },
  { name: `6 prompts, pauses of ${SESSION_PAUSE_MINUTES.join(", ")} min`, kind: "session", bugs: SESSION_PAUSE_MINUTES.length + 1 },
  // Issue 26: work that reads a lot and then talks about it, and a quick session.
  { name: "5 reads, then 1 follow-up", kind: "follow-ups", bugs: 0, reads: 5, followUps: 1, pauseMinutes: 0, issue26: true },
  { name: "5 reads, then 2 follow-ups (one greps)", kind: "follow-ups", bugs: 0, reads: 5, followUps: 2, pauseMinutes: 0, issue26: true },
  { name: "5 reads, then 4 follow-ups, 1-min pauses", kind: "follow-ups", bugs: 0, reads: 5, followUps: 4, pauseMinutes: 1, issue26: true },
  { name: "5 reads, then 2 follow-ups, 10-min pauses", kind: "follow-ups", bugs: 0, reads: 5, followUps: 2, pauseMinutes: 10, issue26: true },
  { name: "6 prompts, no pauses", kind: "session", bugs: SESSION_PAUSE_MINUTES.length + 1, pauseMinutes: 0, issue26: true },
  {
    name: "5 reads, then 1 follow-up, a judge keeping 65%",
    kind: "follow-ups",
    bugs: 0,
    reads: 5,
    followUps: 1,
    pauseMinutes: 0,
    issue26: true,
    judgeKeeps: 0.65,
  },
  {
    name: "5 reads, then 2 follow-ups, a judge keeping 90%",
    kind: "follow-ups",
    bugs: 0,
    reads: 5,
    followUps: 2,
    pauseMinutes: 0,
    issue26: true,
    judgeKeeps: 0.9,
  },
  { name: "search and read, 30 handlers, a judge keeping 65%", kind: "search", bugs: 0, issue26: true, judgeKeeps: 0.65 },
  {
    name: "5 reads, then 2 follow-ups, a judge keeping 30%",
    kind: "follow-ups",
    bugs: 0,
    reads: 5,
    followUps: 2,
    pauseMinutes: 0,
    issue26: true,
    judgeKeeps: 0.3,
  },
  { name: "search and read, 30 handlers, a judge keeping 30%", kind: "search", bugs: 0, issue26: true, judgeKeeps: 0.3 },
  { name: "search and read, 30 handlers, a judge keeping 90%", kind: "search", bugs: 0, issue26: true, judgeKeeps: 0.9 },
  {
    name: "5 reads, then 2 follow-ups, 1 in 10 judge requests failing",
    kind: "follow-ups",
    bugs: 0,
    reads: 5,
    followUps: 2,
    pauseMinutes: 0,
    issue26: true,
    judgeFails: 10,
  },
  { name: "search and read, 30 handlers, 1 in 10 judge requests failing", kind: "search", bugs: 0, issue26: true, judgeFails: 10 },
];

/** What a shape runs: the project's files, the server's script, the prompts (each after a pause), the oracle and the check that the work was done. */
interface Work {
  what: string;
  files: Record<string, string>;
  script: Step[];
  prompts: { pauseMs: number; text: string }[];
  /** The oracle's needed lines for the check after the run (in the last request, and in the window after it). */
  lines: string[];
  /** The stand-in classifier; `oracleClassifier(lines)` when not given. */
  classifier?: Behaviour;
  check: (branch: Loose[]) => void;
}

/** The shape's judge: the oracle's (undefined: the default), one that keeps more, or one that fails now and then. */
function judgeOf(shape: Shape, lines: string[]): Behaviour | undefined {
  const judge = shape.judgeKeeps === undefined ? undefined : keepingClassifier(lines, shape.judgeKeeps);
  return shape.judgeFails === undefined ? judge : failingClassifier(judge ?? oracleClassifier(lines), shape.judgeFails);
}

function workOf(shape: Shape): Work {
  if (shape.kind === "follow-ups") {
    const p = searchProject(shape.reads);
    const asked = followUps(p, shape.followUps ?? 1);
    return {
      what: shape.name,
      files: p.files,
      script: [...searchScript(p), ...asked.flatMap((a) => a.steps)],
      prompts: [{ pauseMs: 0, text: SEARCH_PROMPT }, ...asked.map((a) => ({ pauseMs: (shape.pauseMinutes ?? 0) * 60_000, text: a.text }))],
      lines: searchOracle(p),
      classifier: judgeOf(shape, searchOracle(p)),
      check: (b) => checkSearchWorked(b, p),
    };
  }
  if (shape.kind === "search") {
    const p = searchProject();
    const classifier = judgeOf(shape, searchOracle(p));
    return {
      what: `${shape.name}`,
      files: p.files,
      script: searchScript(p),
      prompts: [{ pauseMs: 0, text: SEARCH_PROMPT }],
      lines: searchOracle(p),
      classifier,
      check: (b) => checkSearchWorked(b, p),
    };
  }
  const p = project(shape.short ? 1 : shape.bugs);
  const check = (b: Loose[]) => checkRunWorked(b, p);
  if (shape.kind === "session") {
    const prompts =
      shape.pauseMinutes === undefined
        ? pausedSession(p)
        : pausedSession(
            p,
            SESSION_PAUSE_MINUTES.map(() => shape.pauseMinutes ?? 0),
          );
    // The classifier keeps output lines any prompt needs and old exchanges that concern the current prompt's bug;
    // after the last prompt, what must be in the window is what its bug needs.
    return {
      what: `${shape.name}, ${p.cases} cases`,
      files: p.files,
      script: prompts.flatMap((x) => x.steps),
      prompts,
      lines: lastPromptLines(p),
      classifier: oracleClassifier(oracleLines(p), p.bugs),
      check,
    };
  }
  const script = shape.short ? shortRunScript(p) : longRunScript(p, shape.extra ?? 0);
  return {
    what: `${shape.name}, ${p.cases} cases`,
    files: p.files,
    script,
    prompts: [{ pauseMs: 0, text: shape.short ? SHORT_RUN_PROMPT : LONG_RUN_PROMPT }],
    lines: oracleLines(p),
    check,
  };
}

// CG_ECONOMY_PROVIDERS=anthropic and CG_ECONOMY_SHAPES=4,5 (1-based: 7 the search run, 8 the session, 9-21 issue 26's) run part of the suite, for trying a setting;
// the targets are then those of the part.
const only = (env: string | undefined) =>
  env
    ?.split(",")
    .map((x) => x.trim())
    .filter(Boolean);
const SHAPES = ALL_SHAPES.filter((_, i) => only(process.env.CG_ECONOMY_SHAPES)?.includes(String(i + 1)) ?? true);

type Provider = "anthropic" | "openai";
const PROVIDERS = (["anthropic", "openai"] as Provider[]).filter((p) => only(process.env.CG_ECONOMY_PROVIDERS)?.includes(p) ?? true);

/**
 * A configuration: the guard's settings (the product's defaults where it names none: the judge works in the
 * background, issue 27) and, for the timed ones, the main model's and the judge's latency in real ms.
 */
interface Configuration {
  name: string;
  settings: Record<string, unknown>;
  timing?: { mainMs: number; judgeMs: number };
}

// Issue 27: a main model answering in 0.7 s and a judge in 0.9 s, at a tenth of the time (the judge's answers
// land as many turns late; the suite runs in a minute more, not ten).
const SLOW_JUDGE = "judge at 0.9 s (time ×0.1)";
// The judge waited for at every checkpoint and run end, as before issue 27.
const WAIT_FOR_JUDGE = "waitForJudge (as before issue 27)";
const CONFIGURATIONS: Configuration[] = [
  { name: "guard off", settings: { enabled: false } },
  { name: "run end only (midRun: false)", settings: { midRun: false } },
  { name: "default", settings: {} },
  { name: "midRunBreakEven: false", settings: { midRunBreakEven: false } },
  { name: SLOW_JUDGE, settings: {}, timing: { mainMs: 70, judgeMs: 90 } },
  { name: WAIT_FOR_JUDGE, settings: { waitForJudge: true } },
  // CG_ECONOMY_TRY='[{"name": "…", "settings": {…}}]' tries other settings in place of --compare's list.
  ...(process.env.CG_ECONOMY_TRY
    ? (JSON.parse(process.env.CG_ECONOMY_TRY) as { name: string; settings: Record<string, unknown> }[])
    : COMPARE
      ? [
          { name: "runEndBreakEven: false (run end as before issue 26)", settings: { runEndBreakEven: false } },
          { name: "laterRequests: turns", settings: { laterRequests: "turns" } },
          { name: "laterRequests: session", settings: { laterRequests: "session" } },
          { name: "room trigger off", settings: { midRunRoomTokens: 0 } },
          { name: "room 30k, min 8k", settings: { midRunRoomTokens: 30_000, midRunRoomMinTokens: 8_000 } },
          { name: "age gate 4 (the original's)", settings: { midRunMinAgeTurns: 4 } },
          { name: "age gate 2", settings: { midRunMinAgeTurns: 2 } },
          { name: "batch 4k chars", settings: { midRunBatchChars: 4_000 } },
          { name: "batch 20k chars", settings: { midRunBatchChars: 20_000 } },
          { name: "batch 30k chars", settings: { midRunBatchChars: 30_000 } },
          { name: "batch 60k chars", settings: { midRunBatchChars: 60_000 } },
          { name: "midRunMinTurns: 1", settings: { midRunMinTurns: 1 } },
          { name: "batch 20k, midRunMinTurns: 1", settings: { midRunBatchChars: 20_000, midRunMinTurns: 1 } },
        ]
      : []),
];

interface Cost {
  input: number;
  cacheRead: number;
  cacheWrite: number;
  output: number;
  total: number;
}

interface Figures {
  what: string;
  /** Prompts of the run (more than 1: a session with pauses). */
  prompts: number;
  requests: number;
  /** Per request, Pi's estimate of each message (for the hindsight bound's replay). */
  messageTokens: number[][];
  /** Per tool output of the branch, in order: its judged size ÷ its size (1 when no pass changed it). */
  judgedShare: number[];
  /** Per request, the indexes of its messages that are tool results. */
  toolMessage: number[][];
  /** Pi's estimate of each request, in tokens. */
  context: number[];
  peak: number;
  /** The largest body on the wire, characters ÷ 4. */
  wirePeak: number;
  /** Pi's estimate of the window after the run (its projection, after any run-end pass). */
  after: number;
  /** Per request, what the server reported. */
  usage: RequestUsage[];
  /** Per request, the `cache_control` breakpoints of the body the server got. */
  breakpoints: number[];
  read: number;
  written: number;
  written1h: number;
  uncached: number;
  output: number;
  cost: Cost;
  checkpoints: number;
  /** Each checkpoint: the request whose turn it ended, and the characters it kept out. */
  checkpointsAt: { request: number; saved: number }[];
  runEndPasses: number;
  /** Guard records whose break-even decisions were weighed on a lapsed cache (`lapsedMs`): edits that went in free after a pause. */
  lapsedEdits: number;
  /** Old exchanges omitted (results of kind "exchange", removed), every pass. */
  exchangesOmitted: number;
  compactions: number;
  lastRequest: OracleCheck;
  afterRun: OracleCheck;
  /** What `/guard` said after the run. */
  /** The judge's cost, from the guard's records. */
  judgeUsd: number;
  guardText: string;
  seconds: number;
}

const estimate = (m: Loose) => agent.estimateTokens(m) as number;

/** Pi's estimate of a request: its messages, and a system prompt given apart from them (older Pi). */
function requestTokens(r: ProviderRequest): number {
  const system = typeof r.systemPrompt === "string" ? Math.ceil(r.systemPrompt.length / 4) : 0;
  return system + r.messages.reduce((n, m) => n + estimate(m), 0);
}

/** The priced model per provider: the session's, as Pi's registry built it from its catalog (and models.json's base URL). */
const pricedModels = new Map<Provider, Loose>();

/** One request's usage priced by Pi's own rule (`calculateCost`, with the catalog's tiers if any). */
function priced(pricedModel: Loose, u: RequestUsage): Cost {
  const usage = {
    input: u.uncached,
    output: u.output,
    cacheRead: u.read,
    cacheWrite: u.written,
    cacheWrite1h: u.written1h,
    totalTokens: u.uncached + u.output + u.read + u.written,
    cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
  };
  return ai.calculateCost(pricedModel, usage) as Cost;
}

/** Throws when the server answered a request with a 400: the run's figures would be those of a broken run. */
type Server = Pick<AnthropicServer, "bodies" | "usage" | "pendingSteps" | "close">;

function checkNoRejection(server: Server, what: string): void {
  const rejected = server.usage.flatMap((u, i) => (u.rejected === undefined ? [] : [`request ${i + 1}: ${u.rejected}`]));
  if (rejected.length > 0)
    throw new Error(`economy (${what}): the loopback server answered 400 (the provider would reject the body):\n  ${rejected.join("\n  ")}`);
}

/**
 * Checks that Pi recorded on each reply exactly the usage the server
 * reported, so the figures below are the ones Pi itself would bill.
 */
function checkPiSawUsage(branch: Loose[], server: Server, what: string): void {
  const replies = branch.filter((e: Loose) => e.type === "message" && e.message.role === "assistant").map((e: Loose) => e.message.usage);
  if (replies.length !== server.usage.length)
    throw new Error(`economy (${what}): ${replies.length} replies in the session, the server answered ${server.usage.length} requests`);
  server.usage.forEach((u, i) => {
    const p = replies[i];
    const same = p && p.input === u.uncached && p.cacheRead === u.read && p.cacheWrite === u.written && p.output === u.output;
    if (!same) throw new Error(`economy (${what}): request ${i + 1}: the server reported ${JSON.stringify(u)}, Pi recorded ${JSON.stringify(p)}`);
  });
}

async function measure(provider: Provider, shape: Shape, { name, settings, timing }: Configuration): Promise<Figures> {
  const started = performance.now();
  const what = `${provider}, ${shape.name}, ${name}`;
  // What Pi hands the provider, request by request.
  const requests: ProviderRequest[] = [];
  const recorder = (pi: Loose) =>
    pi.on("context_with_system", (event: Loose) => {
      requests.push({ systemPrompt: undefined, messages: structuredClone(event.messages), tools: [] });
    });
  const work = workOf(shape);
  const lines = work.lines;
  // Pauses need one clock for the server, Pi and the guard: Date.now shifted (clock.ts), restored below.
  const clock: ShiftedClock | undefined = work.prompts.some((x) => x.pauseMs > 0) ? shiftedClock() : undefined;
  let server: Server | undefined;
  let pi: PiSession | undefined;
  try {
    const delayMs = timing?.mainMs;
    server = provider === "anthropic" ? await startAnthropicServer(work.script, { clock, delayMs }) : await startOpenAiServer(work.script, { clock, delayMs });
    const loopback = provider === "anthropic" ? anthropicSession(server as AnthropicServer) : openAiSession(server as never);
    putNodeOnPath();
    pi = await startSession({
      ...loopback.options,
      files: work.files,
      classifier: timing ? slowJudge(timing.judgeMs, work.classifier ?? oracleClassifier(lines)) : (work.classifier ?? oracleClassifier(lines)),
      // The harness waits for the judge unless told (its tests of what a pass decides); the suite runs the product's default.
      guardSettings: { waitForJudge: false, ...settings },
      piSettings: { ...LONG_RUN_PI_SETTINGS, ...loopback.options.piSettings },
      extensions: [...(loopback.options.extensions ?? []), recorder],
    });
    await loopback.select(pi);
    // A Pi without the setting (1.3) has no cache warming.
    const settingsManager = pi.session.settingsManager;
    if (typeof settingsManager?.getCacheWarmingMode === "function" && settingsManager.getCacheWarmingMode() !== "off") {
      throw new Error(
        `economy (${what}): Pi's cache warming is ${JSON.stringify(settingsManager.getCacheWarmingMode())}, must be "off" (anthropicSession's settings)`,
      );
    }
    const model = pi.session.model;
    const api = provider === "anthropic" ? "anthropic-messages" : "openai-responses";
    if (model?.provider !== provider || model?.api !== api || !model?.cost) {
      throw new Error(`economy (${what}): the session's model is ${model?.provider}/${model?.id} (${model?.api}), not Pi's ${provider} model with a price`);
    }
    const pricedModel = pricedModels.get(provider) ?? model;
    if (JSON.stringify(pricedModel.cost) !== JSON.stringify(model.cost)) throw new Error(`economy (${what}): the model's price changed between configurations`);
    pricedModels.set(provider, pricedModel);

    try {
      for (const x of work.prompts) {
        await pause(pi, clock, x.pauseMs);
        await pi.prompt(x.text);
      }
    } finally {
      // A 400 explains whatever else went wrong with the run: it is the error to report.
      checkNoRejection(server, what);
    }
    const unused = server.pendingSteps();
    if (unused !== 0) throw new Error(`economy (${what}): ${unused} scripted turns unused (a compaction or an error took one?)`);
    if (server.bodies.length !== requests.length)
      throw new Error(`economy (${what}): the server got ${server.bodies.length} requests, Pi's context hook saw ${requests.length}`);
    const branch = pi.branch();
    work.check(branch);
    checkPiSawUsage(branch, server, what);
    const context = requests.map(requestTokens);
    const window = pi.projection().messages;
    const usage = [...server.usage];
    const sum = (f: (u: RequestUsage) => number) => usage.reduce((n, u) => n + f(u), 0);
    const costs = usage.map((u) => priced(pricedModel, u));
    const cost: Cost = { input: 0, cacheRead: 0, cacheWrite: 0, output: 0, total: 0 };
    for (const c of costs) for (const key of Object.keys(cost) as (keyof Cost)[]) cost[key] += c[key];
    const records = branch.filter((e: Loose) => e.type === "custom" && e.customType === "context-guard").map((e: Loose) => e.data);
    if (process.env.CG_ECONOMY_TRACE) {
      // Each request's cost and each record's results and decisions, for reading one run by hand.
      console.log(
        `  trace ${what}: requests ${costs.map((c, i) => `${i + 1}:$${c.total.toFixed(4)} (w${usage[i].written} r${usage[i].read} u${usage[i].uncached})`).join(" ")}`,
      );
      for (const r of records) {
        const results = (r.results ?? []).map(
          (x: Loose) =>
            `${x.kind} ${x.entryId.slice(0, 6)} ${x.outcome}/${x.reason} ${x.beforeChars}→${x.afterChars}${x.judgedChars ? ` (j${x.judgedChars})` : ""}`,
        );
        const decisions = (r.breakEven ?? []).map(
          (d: Loose) =>
            `${d.rule} saved ${d.savedChars} rw ${d.rewriteChars} later ${d.later} gain ${d.gainMicros} cost ${d.costMicros} ${d.paidOff ? "paid" : "waits"}${d.lapsedMs ? " lapsed" : ""}`,
        );
        console.log(`    ${r.phase}: ${results.join("; ")} | ${decisions.join("; ")}`);
      }
    }
    // What the judge made of each output: the smallest size any pass left it at.
    const outputIds = branch.filter((e: Loose) => e.type === "message" && e.message.role === "toolResult").map((e: Loose) => e.id);
    const share = new Map<string, number>();
    for (const r of records) {
      for (const x of r.results ?? []) {
        if (x.beforeChars > 0) share.set(x.entryId, Math.min(share.get(x.entryId) ?? 1, x.afterChars / x.beforeChars));
      }
    }
    const checkpointsAt: Figures["checkpointsAt"] = [];
    let turns = 0;
    for (const e of branch) {
      if (e.type === "message" && e.message.role === "assistant") turns++;
      if (e.type === "custom" && e.customType === "context-guard" && e.data?.phase === "mid-run")
        checkpointsAt.push({ request: turns, saved: e.data.savedChars });
    }
    const figures: Figures = {
      what: work.what,
      prompts: work.prompts.length,
      requests: requests.length,
      messageTokens: requests.map((r) => r.messages.map((m) => estimate(m))),
      judgedShare: outputIds.map((id: string) => share.get(id) ?? 1),
      toolMessage: requests.map((r) => r.messages.flatMap((m: Loose, at: number) => (m.role === "toolResult" ? [at] : []))),
      context,
      peak: Math.max(...context),
      wirePeak: Math.max(...server.bodies.map((b) => Math.ceil(JSON.stringify(b).length / 4))),
      after: window.reduce((n: number, m: Loose) => n + estimate(m), 0),
      usage,
      breakpoints: provider === "anthropic" ? server.bodies.map((b) => breakpointsOf(b).length) : server.bodies.map(() => 0),
      read: sum((u) => u.read),
      written: sum((u) => u.written),
      written1h: sum((u) => u.written1h),
      uncached: sum((u) => u.uncached),
      output: sum((u) => u.output),
      cost,
      checkpoints: records.filter((d: Loose) => d.phase === "mid-run").length,
      checkpointsAt,
      runEndPasses: records.filter((d: Loose) => d.phase === "run-end").length,
      lapsedEdits: records.filter((d: Loose) => (d.breakEven ?? []).some((b: Loose) => (b.lapsedMs ?? 0) > 0)).length,
      exchangesOmitted: records.reduce(
        (n: number, d: Loose) => n + (d.results ?? []).filter((x: Loose) => x.kind === "exchange" && x.outcome === "removed").length,
        0,
      ),
      compactions: branch.filter((e: Loose) => e.type === "compaction").length,
      lastRequest: checkOracle(requests.at(-1)?.messages ?? [], requests, lines),
      afterRun: checkOracle(window, requests, lines),
      guardText: "",
      judgeUsd: records.reduce((n: number, d: Loose) => n + (Number.isFinite(d.costUsd) ? d.costUsd : 0), 0),
      seconds: 0,
    };
    await pi.prompt("/guard details");
    figures.guardText = pi.notifications.at(-1)?.message ?? "";
    // Nothing may reach the server after the run (a warm-up request, say).
    checkNoRejection(server, what);
    if (server.bodies.length !== figures.requests)
      throw new Error(`economy (${what}): the server got ${server.bodies.length - figures.requests} requests after the run (cache warming?)`);
    figures.seconds = (performance.now() - started) / 1000;
    return figures;
  } finally {
    await pi?.dispose();
    await server?.close();
    clock?.restore();
    delete process.env.ANTHROPIC_API_KEY;
    delete process.env.OPENAI_API_KEY;
  }
}

const started = performance.now();
/** figures[provider][shape][configuration] */
const figures = new Map<Provider, Figures[][]>();
for (const provider of PROVIDERS) {
  const byShape: Figures[][] = [];
  for (const shape of SHAPES) {
    const row: Figures[] = [];
    for (const c of CONFIGURATIONS) row.push(await measure(provider, shape, c));
    byShape.push(row);
  }
  figures.set(provider, byShape);
}

const k = (tokens: number) => `${(tokens / 1000).toFixed(1)}k`;
const usd = (x: number) => `$${x.toFixed(3)}`;
const ratio = (a: number, b: number) => `${(a / b).toFixed(2)}×`;

console.log(
  `economy: the suite, ${SHAPES.length} runs × ${PROVIDERS.length} providers × ${CONFIGURATIONS.length} configurations in real Pi ${piVersion} (the main model replays the script on loopback; a stand-in classifier keeps the oracle's chunks); ${((performance.now() - started) / 1000).toFixed(1)} s`,
);
for (const provider of PROVIDERS) {
  const m = pricedModels.get(provider);
  const price = m.cost;
  console.log(
    `${provider}: ${m.provider}/${m.id}, Pi's catalog model.cost: input $${price.input}, cache write $${price.cacheWrite}, cache read $${price.cacheRead}, output $${price.output} per million tokens${price.tiers?.length ? `, with ${price.tiers.length} tier(s)` : ""}`,
  );
}

function table(provider: Provider, row: Figures[]): void {
  const off = row[0];
  console.log(`
  ${provider}, ${off.what}:`);
  const session = off.prompts > 1;
  console.log(
    `    configuration                  requests   peak  ×off     cost   ×off   checkpoints (after requests)             missing (last request, after run)${session ? "   exchanges omitted, on a lapsed cache" : ""}`,
  );
  row.forEach((f, i) => {
    const at = f.checkpointsAt.map((x) => x.request).join(", ");
    const cells = [
      CONFIGURATIONS[i].name.padEnd(30),
      String(f.requests).padStart(8),
      k(f.peak).padStart(7),
      ratio(f.peak, off.peak).padStart(6),
      usd(f.cost.total).padStart(9),
      ratio(f.cost.total, off.cost.total).padStart(6),
      `${f.checkpoints}${at ? ` (${at})` : ""}`.padEnd(40),
      `${f.lastRequest.missing.length}, ${f.afterRun.missing.length}${f.lastRequest.recalled.length ? ` (${f.lastRequest.recalled.length} recalled)` : ""}`.padEnd(
        session ? 35 : 0,
      ),
      ...(session ? [`${f.exchangesOmitted}, ${f.lapsedEdits}`] : []),
    ];
    console.log(`    ${cells.join(" ")}`);
  });
}
for (const provider of PROVIDERS) for (const row of figures.get(provider) ?? []) table(provider, row);

/** A provider's rows of issue 20's suite, or of issue 26's shapes. */
const rowsOf = (provider: Provider, issue26: boolean) => (figures.get(provider) ?? []).filter((_, i) => (SHAPES[i].issue26 ?? false) === issue26);

// The suite together, per provider and configuration.
for (const [what, issue26] of [
  ["the suite together", false],
  ["issue 26's shapes together", true],
] as const) {
  if (!SHAPES.some((x) => (x.issue26 ?? false) === issue26)) continue;
  console.log(`\n  ${what} (cost ÷ guard off, the sum over the runs):`);
  for (const provider of PROVIDERS) {
    const rows = rowsOf(provider, issue26);
    const total = (i: number) => rows.reduce((n, row) => n + row[i].cost.total, 0);
    console.log(`    ${provider}: ${CONFIGURATIONS.map((c, i) => `${c.name} ${usd(total(i))} (${ratio(total(i), total(0))})`).join("; ")}`);
  }
}

// The hindsight bound (tests/bench/hindsight.ts): each run's guard-off requests replayed through one
// prefix-cache model, with each output at the size the default run's judge left it, over every schedule
// of checkpoints that the default age gate allows. A simulation: the default's own schedule is replayed
// through the same model, and the model's guard off beside what the server counted says how far off it is.
const AGE = 1;
const bounds = new Map<
  Provider,
  {
    requests: number;
    issue26: boolean;
    off: Schedule;
    own: Schedule;
    best: Schedule;
    /** The cheapest schedule when every edit lands a turn later (age gate + 1): a judge slower than a turn, faster than two. */
    bestLate: Schedule;
    low: Schedule | undefined;
    measuredOff: number;
    each: Schedule[];
  }[]
>();
for (const provider of PROVIDERS) {
  const m = pricedModels.get(provider);
  const prices = { read: m.cost.cacheRead, write: provider === "anthropic" ? m.cost.cacheWrite : m.cost.input };
  const list = [];
  for (const [shapeIndex, row] of (figures.get(provider) ?? []).entries()) {
    const [off, , dflt] = row;
    // A session is left out: the bound's model knows no TTL (the pauses are what it is about) and no run-end passes between prompts.
    if (off.requests < 30 || off.prompts > 1) continue;
    const outputs: Recorded["outputs"] = [];
    const last = off.messageTokens.at(-1) ?? [];
    let k = 0;
    off.messageTokens.forEach((messages, i) => {
      // A tool result is a message whose index first appears in request i and holds an output (in order).
      const before = i === 0 ? 0 : off.messageTokens[i - 1].length;
      for (let at = before; at < messages.length; at++) {
        if (!off.toolMessage[i]?.includes(at)) continue;
        outputs.push({ message: at, request: i, tokens: last[at], judged: Math.round(last[at] * (dflt.judgedShare[k] ?? 1)) });
        k++;
      }
    });
    const recorded: Recorded = { messages: off.messageTokens, fixed: 0, outputs };
    const replayed = replay(recorded, prices, [], AGE);
    const own = replay(
      recorded,
      prices,
      dflt.checkpointsAt.map((c) => c.request - 1),
      AGE,
    );
    const best = cheapest(recorded, prices, AGE) ?? replayed;
    const bestLate = cheapest(recorded, prices, AGE + 1) ?? replayed;
    const low = lowestPeak(recorded, prices, AGE, 1.05 * replayed.cost);
    const each = row.map((f) =>
      replay(
        recorded,
        prices,
        f.checkpointsAt.map((c) => c.request - 1),
        AGE,
      ),
    );
    list.push({
      requests: off.requests,
      issue26: SHAPES[shapeIndex].issue26 ?? false,
      off: replayed,
      own,
      best,
      bestLate,
      low,
      measuredOff: off.cost.cacheRead + off.cost.cacheWrite + off.cost.input,
      each,
    });
  }
  bounds.set(provider, list);
}
console.log(
  "\n  the hindsight bound (a simulation: the guard-off requests replayed through one prefix-cache model, every checkpoint schedule the age gate allows, outputs at the sizes the default run's judge left them; input side only):",
);
for (const [provider, list] of bounds) {
  for (const b of list) {
    const cps = (s: Schedule) => s.checkpoints.map((c) => c + 1).join(", ") || "none";
    console.log(
      `    ${provider}, ${b.requests} requests: each configuration's schedule replayed ÷ the cheapest: ${b.each.map((e, i) => `${CONFIGURATIONS[i].name} ${ratio(e.cost, b.best.cost)}`).join("; ")}`,
    );
    console.log(
      `    ${provider}, ${b.requests} requests: guard off replayed ${usd(b.off.cost)} (the server's count ${usd(b.measuredOff)}); the default's schedule ${usd(b.own.cost)} (${ratio(b.own.cost, b.off.cost)}, peak ${ratio(b.own.peak, b.off.peak)}); the cheapest ${usd(b.best.cost)} (${ratio(b.best.cost, b.off.cost)}, peak ${ratio(b.best.peak, b.off.peak)}, after requests ${cps(b.best)}); the lowest peak within 1.05× ${b.low ? `${ratio(b.low.peak, b.off.peak)} (${ratio(b.low.cost, b.off.cost)}, after requests ${cps(b.low)})` : "none"}`,
    );
  }
}

console.log("verdicts (default settings):");
const DEFAULT = CONFIGURATIONS.findIndex((c) => c.name === "default");
// Issue 26's shapes are measured beside the suite and counted since every run-end edit goes through the
// money rule (issue 26 part 1). Their (a) is "never more than guard off": a short run that reads and then
// asks may save (the edit of its last outputs pays at once), where the suite's short runs have nothing to
// edit; their (d) peak is the usual judge's (a judge that keeps 65% of what it reads cannot halve the peak).
const issue26Shapes = SHAPES.filter((x) => x.issue26 ?? false);
// Issue 27: the default lets the judge work in the background; a checkpoint is planned as many turns ahead as
// its answers take, so its edits land where a waited-for one's would. The goals of the money rule and the pin
// are counted both ways: on the default, and where the judge is waited for (`waitForJudge`, as they were set).
const WAITING = CONFIGURATIONS.findIndex((c) => c.name === WAIT_FOR_JUDGE);
for (const [at, which, uncounted] of [
  [WAITING, " (waitForJudge)", undefined],
  [DEFAULT, " (default: the judge in the background)", undefined],
] as const) {
  for (const provider of PROVIDERS) {
    const rows = rowsOf(provider, false);
    for (const [label, list] of [
      ["", rows],
      [" (issue 26's shapes)", rowsOf(provider, true)],
    ] as const) {
      if (list.length === 0) continue;
      const short = list.filter((row) => row[0].requests <= 8);
      const exact = label === "";
      const a = `${provider}${which}: (a) runs of at most 8 requests cost ${exact ? "exactly what" : "at most what"} guard off costs${label}`;
      if (short.length > 0 || exact) {
        const met = (row: Figures[]) => (exact ? Math.abs(row[at].cost.total - row[0].cost.total) < 1e-9 : row[at].cost.total <= row[0].cost.total + 1e-9);
        console.log(
          `  ${a}: ${short.map((row) => `${row[0].requests} requests ${usd(row[at].cost.total)} vs ${usd(row[0].cost.total)}`).join("; ")}: ${goal(a, short.length > 0 && short.every(met), uncounted)}`,
        );
      }
      // Goal (b): at most 1.01× (raised from 1.05× on 2026-12-02).
      const worst = list.reduce((w, row) => Math.max(w, row[at].cost.total / row[0].cost.total), 0);
      const b = `${provider}${which}: (b) no run costs more than 1.01× guard off${label}`;
      console.log(`  ${b}: the highest ${worst.toFixed(3)}×: ${goal(b, worst <= 1.01, uncounted)}`);
    }
    const long26 = rowsOf(provider, true).filter((row, i) => row[0].requests >= 30 && issue26Shapes[i].judgeKeeps === undefined);
    if (long26.length > 0) {
      const d26 = `${provider}${which}: (d) every run of 30 requests or more peaks at most at 0.5× guard off (issue 26's shapes, judges keeping no more than the work needs)`;
      console.log(
        `  ${d26}: ${long26.map((row) => `${row[0].requests} requests ${ratio(row[at].peak, row[0].peak)}`).join("; ")}: ${goal(
          d26,
          long26.every((row) => row[at].peak <= 0.5 * row[0].peak),
          uncounted,
        )}`,
      );
    }
    const suiteDefault = rows.reduce((n, row) => n + row[at].cost.total, 0);
    const suiteOff = rows.reduce((n, row) => n + row[0].cost.total, 0);
    const c = `${provider}${which}: (c) the suite together costs at most 0.85× guard off`;
    console.log(`  ${c}: ${usd(suiteDefault)} vs ${usd(suiteOff)}, ${ratio(suiteDefault, suiteOff)}: ${goal(c, suiteDefault <= 0.85 * suiteOff, uncounted)}`);
    const long = rows.filter((row) => row[0].requests >= 30);
    const d = `${provider}${which}: (d) every run of 30 requests or more peaks at most at 0.5× guard off`;
    console.log(
      `  ${d}: ${long.map((row) => `${row[0].requests} requests ${ratio(row[at].peak, row[0].peak)}`).join("; ")}: ${goal(
        d,
        long.every((row) => row[at].peak <= 0.5 * row[0].peak),
        uncounted,
      )}`,
    );
    const bound = `${provider}${which}: (d) each such run costs at most 1.15× the hindsight bound's cheapest schedule (both replayed through the bound's model)`;
    const list = (bounds.get(provider) ?? []).filter((b) => !b.issue26);
    // Counted since the defaults meet it (2026-12-02, docs/GUARD.md "How the defaults were chosen"): the
    // money rule charges what is written again, the Anthropic pin anchors each checkpoint's rewrite where the
    // next one reads from, and the batch is 10,000 characters from turn 8 of a run.
    console.log(
      `  ${bound}: ${list.map((b) => `${b.requests} requests ${ratio(b.each[at].cost, b.best.cost)}`).join("; ")}: ${goal(
        bound,
        list.every((b) => b.each[at].cost <= 1.15 * b.best.cost),
        uncounted,
      )}`,
    );
    const later = (bounds.get(provider) ?? []).filter((b) => b.issue26);
    if (later.length > 0) {
      const b26 = `${bound} (issue 26's shapes)`;
      console.log(
        `  ${b26}: ${later.map((b) => `${b.requests} requests ${ratio(b.each[at].cost, b.best.cost)}`).join("; ")}: ${goal(
          b26,
          later.every((b) => b.each[at].cost <= 1.15 * b.best.cost),
          uncounted,
        )}`,
      );
    }
  }
}
// Issue 27: a judge that takes as long as a person's (0.9 s beside a 0.7 s main model) costs the suite at most
// 0.02 of guard off's cost more than an instant one, and no run goes above 1.01× guard off.
const SLOW = CONFIGURATIONS.findIndex((c) => c.name === SLOW_JUDGE);
// Not met, and why (measured side by side, docs/GUARD.md "Nobody waits for the judge"): a judge slower than a
// turn lands each edit at least a turn later than a waited-for or instant one, and the floor line below shows
// that the cheapest schedules doing so already cost more than the goal's 0.02 over the cheapest without.
const SLOWER = "a judge slower than a turn lands each edit a turn late or more: see (g)'s floor (issue 27, blocked on it)";
for (const provider of PROVIDERS) {
  const rows = figures.get(provider) ?? [];
  const sum = (i: number, list = rowsOf(provider, false)) => list.reduce((n, row) => n + row[i].cost.total, 0);
  const [off, instant, slow] = [sum(0), sum(DEFAULT), sum(SLOW)];
  const g = `${provider}: (g) with the judge at 0.9 s the suite costs at most 0.02 × guard off more than with an instant judge`;
  console.log(`  ${g}: ${ratio(slow, off)} vs ${ratio(instant, off)}: ${goal(g, (slow - instant) / off <= 0.02, SLOWER)}`);
  // The floor under any rule: a judge slower than a turn (and faster than two) lands each edit at least a turn
  // later than a waited-for or instant one, so the cheapest schedule it allows is the hindsight bound's with the
  // age gate one turn higher. Its extra cost over the bound's own, each run scaled to the server's count of guard
  // off and summed over the runs the bound covers, as a share of the suite's guard off.
  const suiteBounds = (bounds.get(provider) ?? []).filter((b) => !b.issue26);
  const extra = suiteBounds.reduce((n, b) => n + ((b.bestLate.cost - b.best.cost) * b.measuredOff) / b.off.cost, 0);
  console.log(
    `  ${provider}: (g)'s floor: the cheapest schedules with every edit a turn later cost ${(extra / off).toFixed(3)} × guard off more than the cheapest (the hindsight bound, runs of 30 requests or more): ${suiteBounds
      .map((b) => `${b.requests} requests ${ratio(b.bestLate.cost, b.off.cost)} vs ${ratio(b.best.cost, b.off.cost)}`)
      .join("; ")}`,
  );
  const worst = rows.reduce((w, row) => Math.max(w, row[SLOW].cost.total / row[0].cost.total), 0);
  const h = `${provider}: (g) with the judge at 0.9 s no run costs more than 1.01× guard off (issue 26's shapes too)`;
  console.log(`  ${h}: the highest ${worst.toFixed(3)}×: ${goal(h, worst <= 1.01, SLOWER)}`);
}
// Issue 26 part 4: what `/guard` says the guard saved (or lost) against the true difference, guard off's
// cost less the default's and its judge's, both the servers' counts.
const BILL = /net effect on the main model's bill so far: (saved|lost) ~\$(\d+\.\d+)/;
for (const provider of PROVIDERS) {
  const list = figures.get(provider) ?? [];
  const worst = { error: 0, what: "" };
  console.log(`  ${provider}: /guard's bill line against the true difference (guard off − default − judge), as a share of guard off's cost:`);
  for (const row of list) {
    const [off, on] = [row[0], row[DEFAULT]];
    const said = BILL.exec(on.guardText);
    const claimed = said ? (said[1] === "lost" ? -1 : 1) * Number(said[2]) : 0;
    const truth = off.cost.total - on.cost.total - on.judgeUsd;
    const error = Math.abs(claimed - truth) / off.cost.total;
    if (error > worst.error) Object.assign(worst, { error, what: on.what });
    console.log(
      `    ${on.what}: says ${said ? `${said[1]} $${said[2]}` : "nothing"}, true ${truth < 0 ? "lost" : "saved"} $${Math.abs(truth).toFixed(4)}: off by ${(error * 100).toFixed(1)}%`,
    );
  }
  const f = `${provider}: (f) /guard's bill line within 2% of guard off's cost of the true difference`;
  console.log(`  ${f}: the worst ${(worst.error * 100).toFixed(1)}% (${worst.what}): ${goal(f, worst.error <= 0.02)}`);
}

const all = [...figures.values()].flat(2);
const missing = all.reduce((n, f) => n + f.lastRequest.missing.length + f.afterRun.missing.length, 0);
const needed = "(e) needed lines of the oracle missing from the window and not recalled, every run, provider and configuration";
console.log(`  ${needed}: ${missing}: ${goal(needed, missing === 0)}`);
for (const f of all) {
  for (const line of [...f.lastRequest.missing, ...f.afterRun.missing].slice(0, 3)) console.log(`  missing: ${line}`);
}
