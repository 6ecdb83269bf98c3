// Benchmark: the guard's economy (product.md "Economy", issue 10's cost
// model), measured on scripted runs inside real Pi: a long autonomous run
// ("fix all failing tests", 33 requests) and a short one (5 requests), from
// tests/harness/long-run.ts, each with the guard off, with run-end passes only
// (`midRun: false`) and with the default settings. Real session, tools,
// folder and extension loading; the classifier is the oracle's stand-in (it
// keeps exactly the chunks that hold a needed line). The main model replays
// the script as Pi's own `anthropic` provider (`claude-sonnet-4-5` from Pi's
// catalog) talking to the loopback server of tests/harness/anthropic-server.ts,
// so every configuration makes the same calls, the guard applies its
// Anthropic rules (the cache pin, the Anthropic break-even), and the cache is
// counted by a server that follows Anthropic's documented prompt cache
// (breakpoints, 20-block lookback, TTL, minimum length): what Pi's and the
// pin's `cache_control` marks earn is what gets counted.
//
// Per configuration:
// - requests: provider requests of the run;
// - peak context: the largest request, in Pi's estimate: its exported
//   `estimateTokens` summed over the request's messages as Pi hands them to
//   the provider (the `context_with_system` event; in Pi 1.6 the first is the
//   system message, whose estimate holds the system prompt and the tool
//   definitions), and the body on the wire ÷ 4;
// - cache read, cache written (of it with `ttl: "1h"`), uncached input and
//   output tokens: the sums of the server's usage (`server.usage`, what it
//   reported to Pi, checked against what Pi recorded on each reply);
// - main-model cost: each request's usage priced by Pi's own `calculateCost`
//   with the session's model (`model.cost` from Pi's catalog, per million
//   tokens: input for uncached, cacheRead, cacheWrite; the catalog has no 1h
//   write price, and Pi's calculateCost prices 1h writes at 2× input, which
//   is used as is);
// - after run: Pi's estimate of the window the next prompt would start from;
// - needed lines missing: oracle lines neither in the run's last request nor
//   recalled (must be 0), and, as a second figure, neither in the window
//   after the run (Pi's projection, after the run-end pass).
// Per request of each run, what the server counted (read and written), and
// the breakpoints of the body: where a configuration's cost comes from.
//
// Pi 1.6's idle cache warming would replay requests the script did not plan:
// it is off in every configuration (anthropicSession's settings), checked
// from Pi's own settings, and the server must have seen exactly the requests
// Pi's context hook saw. A body the server rejects (Anthropic's 400: over 4
// breakpoints, a bad ttl) fails the bench.
//
// Earlier versions also replayed the runs on Pi's faux provider with a cache
// counted by longest common prefix; that count ignores where breakpoints sit,
// so it cannot price the pin, and the faux configurations are gone (the
// prefix-cache rule of other providers has its worked numbers in
// crates/core/src/guard/cache.rs's tests).
//
// Ratios are against guard off. The goals: the long run's peak at default
// settings ≤ 0.5× guard off, its cost below guard off, the short run's cost
// never above (default and run end only), no needed line missing. The peak
// goal is printed as missed and not counted (the §7 break-even lets no
// checkpoint fire before turn 16, which bounds how far a run of 30-odd
// requests can lower its peak); a fourth configuration,
// `midRunBreakEven: false`, is printed for comparison only and shows that
// bound.
import { type AnthropicServer, anthropicSession, breakpointsOf, type RequestUsage, startAnthropicServer } from "../harness/anthropic-server.ts";
import { checkOracle, checkRunWorked, longRunScript, type OracleCheck, project, shortRunScript, startLongRun } from "../harness/long-run.ts";
import { agent, ai, type Loose, piVersion } from "../harness/pi.ts";
import type { ProviderRequest } from "../harness/session.ts";
import { goal } from "./verdict.ts";

if (typeof ai.calculateCost !== "function") throw new Error(`economy: Pi ${piVersion}'s pi-ai has no calculateCost to price the requests with`);

const CONFIGURATIONS: { name: string; settings: Record<string, unknown> }[] = [
  { name: "guard off", settings: { enabled: false } },
  { name: "run end only (midRun: false)", settings: { midRun: false } },
  { name: "default", settings: {} },
  // For reading the figures only (no goal): what the break-even rule holds back.
  { name: "midRunBreakEven: false", settings: { midRunBreakEven: false } },
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
  requests: number;
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
  compactions: number;
  lastRequest: OracleCheck;
  afterRun: OracleCheck;
  /** What `/guard` said after the run. */
  guardText: string;
  seconds: number;
}

const estimate = (m: Loose) => agent.estimateTokens(m) as number;

/** Pi's estimate of a request: its messages, and a system prompt given apart from them (older Pi). */
function requestTokens(r: ProviderRequest): number {
  const system = typeof r.systemPrompt === "string" ? Math.ceil(r.systemPrompt.length / 4) : 0;
  return system + r.messages.reduce((n, m) => n + estimate(m), 0);
}


/** The priced model: the session's, as Pi's registry built it from its catalog (and models.json's base URL). */
let pricedModel: Loose;

/** One request's usage priced by Pi's own rule (`calculateCost`, with the catalog's tiers if any). */
function priced(u: RequestUsage): Cost {
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
function checkNoRejection(server: AnthropicServer, what: string): void {
  const rejected = server.usage.flatMap((u, i) => (u.rejected === undefined ? [] : [`request ${i + 1}: ${u.rejected}`]));
  if (rejected.length > 0) throw new Error(`economy (${what}): the loopback server answered 400 (Anthropic would reject the body):\n  ${rejected.join("\n  ")}`);
}

/**
 * Checks that Pi recorded on each reply exactly the usage the server
 * reported, so the figures below are the ones Pi itself would bill.
 */
function checkPiSawUsage(branch: Loose[], server: AnthropicServer, what: string): void {
  const replies = branch.filter((e: Loose) => e.type === "message" && e.message.role === "assistant").map((e: Loose) => e.message.usage);
  if (replies.length !== server.usage.length) throw new Error(`economy (${what}): ${replies.length} replies in the session, the server answered ${server.usage.length} requests`);
  server.usage.forEach((u, i) => {
    const p = replies[i];
    const same = p && p.input === u.uncached && p.cacheRead === u.read && p.cacheWrite === u.written && p.output === u.output;
    if (!same) throw new Error(`economy (${what}): request ${i + 1}: the server reported ${JSON.stringify(u)}, Pi recorded ${JSON.stringify(p)}`);
  });
}

async function measure(short: boolean, name: string, settings: Record<string, unknown>): Promise<Figures> {
  const started = performance.now();
  const what = `${short ? "short" : "long"} run, ${name}`;
  // What Pi hands the provider, request by request.
  const requests: ProviderRequest[] = [];
  const recorder = (pi: Loose) =>
    pi.on("context_with_system", (event: Loose) => {
      requests.push({ systemPrompt: undefined, messages: structuredClone(event.messages), tools: [] });
    });
  const p = project(short ? 1 : undefined);
  const server = await startAnthropicServer(short ? shortRunScript(p) : longRunScript(p));
  const loopback = anthropicSession(server);
  const { pi, lines, prompt } = await startLongRun({
    short,
    guardSettings: settings,
    ...loopback.options,
    extensions: [...(loopback.options.extensions ?? []), recorder],
  });
  try {
    await loopback.select(pi);
    // A Pi without the setting (1.3) has no cache warming.
    const settingsManager = pi.session.settingsManager;
    if (typeof settingsManager?.getCacheWarmingMode === "function" && settingsManager.getCacheWarmingMode() !== "off") {
      throw new Error(`economy (${what}): Pi's cache warming is ${JSON.stringify(settingsManager.getCacheWarmingMode())}, must be "off" (anthropicSession's settings)`);
    }
    const model = pi.session.model;
    if (model?.provider !== "anthropic" || model?.api !== "anthropic-messages" || !model?.cost) {
      throw new Error(`economy (${what}): the session's model is ${model?.provider}/${model?.id} (${model?.api}), not Pi's anthropic model with a price`);
    }
    if (pricedModel && JSON.stringify(pricedModel.cost) !== JSON.stringify(model.cost)) throw new Error(`economy (${what}): the model's price changed between configurations`);
    pricedModel ??= model;

    try {
      await pi.prompt(prompt);
    } finally {
      // A 400 explains whatever else went wrong with the run: it is the error to report.
      checkNoRejection(server, what);
    }
    const unused = server.pendingSteps();
    if (unused !== 0) throw new Error(`economy (${what}): ${unused} scripted turns unused (a compaction or an error took one?)`);
    if (server.bodies.length !== requests.length) throw new Error(`economy (${what}): the server got ${server.bodies.length} requests, Pi's context hook saw ${requests.length}`);
    const branch = pi.branch();
    checkRunWorked(branch, p);
    checkPiSawUsage(branch, server, what);
    const context = requests.map(requestTokens);
    const window = pi.projection().messages;
    const usage = [...server.usage];
    const sum = (f: (u: RequestUsage) => number) => usage.reduce((n, u) => n + f(u), 0);
    const costs = usage.map(priced);
    const cost: Cost = { input: 0, cacheRead: 0, cacheWrite: 0, output: 0, total: 0 };
    for (const c of costs) for (const key of Object.keys(cost) as (keyof Cost)[]) cost[key] += c[key];
    const records = branch.filter((e: Loose) => e.type === "custom" && e.customType === "context-guard").map((e: Loose) => e.data);
    const checkpointsAt: Figures["checkpointsAt"] = [];
    let turns = 0;
    for (const e of branch) {
      if (e.type === "message" && e.message.role === "assistant") turns++;
      if (e.type === "custom" && e.customType === "context-guard" && e.data?.phase === "mid-run") checkpointsAt.push({ request: turns, saved: e.data.savedChars });
    }
    const figures: Figures = {
      what: short ? `short run: one bug, ${p.cases} cases` : `long run: "fix all failing tests", ${p.bugs.length} bugs, ${p.cases} cases`,
      requests: requests.length,
      context,
      peak: Math.max(...context),
      wirePeak: Math.max(...server.bodies.map((b) => Math.ceil(JSON.stringify(b).length / 4))),
      after: window.reduce((n: number, m: Loose) => n + estimate(m), 0),
      usage,
      breakpoints: server.bodies.map((b) => breakpointsOf(b).length),
      read: sum((u) => u.read),
      written: sum((u) => u.written),
      written1h: sum((u) => u.written1h),
      uncached: sum((u) => u.uncached),
      output: sum((u) => u.output),
      cost,
      checkpoints: records.filter((d: Loose) => d.phase === "mid-run").length,
      checkpointsAt,
      runEndPasses: records.filter((d: Loose) => d.phase === "run-end").length,
      compactions: branch.filter((e: Loose) => e.type === "compaction").length,
      lastRequest: checkOracle(requests.at(-1)?.messages ?? [], requests, lines),
      afterRun: checkOracle(window, requests, lines),
      guardText: "",
      seconds: 0,
    };
    await pi.prompt("/guard");
    figures.guardText = pi.notifications.at(-1)?.message ?? "";
    // Nothing may reach the server after the run (a warm-up request, say).
    checkNoRejection(server, what);
    if (server.bodies.length !== figures.requests) throw new Error(`economy (${what}): the server got ${server.bodies.length - figures.requests} requests after the run (cache warming?)`);
    figures.seconds = (performance.now() - started) / 1000;
    return figures;
  } finally {
    await pi.dispose();
    await server.close();
    delete process.env.ANTHROPIC_API_KEY;
  }
}

const started = performance.now();
const long: Figures[] = [];
const short: Figures[] = [];
for (const c of CONFIGURATIONS) long.push(await measure(false, c.name, c.settings));
for (const c of CONFIGURATIONS) short.push(await measure(true, c.name, c.settings));

const k = (tokens: number) => `${(tokens / 1000).toFixed(1)}k`;
const usd = (x: number) => `$${x.toFixed(3)}`;
const ratio = (a: number, b: number) => `${(a / b).toFixed(2)}×`;
const price = pricedModel.cost;

console.log(
  `economy: scripted runs in real Pi ${piVersion}, main model ${pricedModel.provider}/${pricedModel.id} through Pi's anthropic provider on loopback (it replays the script; a stand-in classifier keeps the oracle's chunks); ${((performance.now() - started) / 1000).toFixed(1)} s`,
);
console.log(
  `prices: Pi's catalog, model.cost: input $${price.input}, cache write $${price.cacheWrite}, cache read $${price.cacheRead}, output $${price.output} per million tokens${price.tiers?.length ? `, with ${price.tiers.length} tier(s)` : ""}; 1h cache writes at 2× input ($${2 * price.input}, Pi's calculateCost: the catalog has no 1h price)`,
);
console.log("cache: as the loopback server counted it (Anthropic's documented prompt cache: prefixes at cache_control breakpoints, 20-block lookback, 5 min TTL, 1,024-token minimum; a block's tokens = its JSON ÷ 4)");

function table(figures: Figures[]): void {
  const off = figures[0];
  console.log(`
  ${off.what}:`);
  console.log(
    "    configuration                  requests   peak  ×off   wire  read / written (1h) / uncached / output tokens      cost   ×off   checkpoints  run-end  compactions  after run  missing (last request, after run)",
  );
  figures.forEach((f, i) => {
    const cells = [
      CONFIGURATIONS[i].name.padEnd(30),
      String(f.requests).padStart(8),
      k(f.peak).padStart(7),
      ratio(f.peak, off.peak).padStart(6),
      k(f.wirePeak).padStart(6),
      `${k(f.read)} / ${k(f.written)} (${k(f.written1h)}) / ${k(f.uncached)} / ${k(f.output)}`.padStart(46),
      usd(f.cost.total).padStart(9),
      ratio(f.cost.total, off.cost.total).padStart(6),
      String(f.checkpoints).padStart(13),
      String(f.runEndPasses).padStart(8),
      String(f.compactions).padStart(12),
      k(f.after).padStart(10),
      `${f.lastRequest.missing.length}, ${f.afterRun.missing.length}${f.lastRequest.recalled.length ? ` (${f.lastRequest.recalled.length} recalled)` : ""}`.padStart(10),
    ];
    console.log(`    ${cells.join(" ")}`);
  });
  console.log("    cost by part (cache read + cache write + uncached input + output), the peak's request, after which requests checkpoints fired, wall time:");
  figures.forEach((f, i) => {
    const c = f.cost;
    const at = f.checkpointsAt.map((x) => `${x.request} (${(x.saved / 1000).toFixed(1)}k chars kept out)`).join(", ");
    console.log(
      `      ${CONFIGURATIONS[i].name.padEnd(30)} ${usd(c.cacheRead)} + ${usd(c.cacheWrite)} + ${usd(c.input)} + ${usd(c.output)}; peak at request ${f.context.indexOf(f.peak) + 1}; checkpoints after requests: ${at || "none"}; ${f.seconds.toFixed(0)} s`,
    );
  });
  console.log("    per request (request: tokens read + written, as the server counted them; [n] the body's breakpoints where not 3, Pi's own):");
  figures.forEach((f, i) => {
    const cells = f.usage.map((u, r) => `${r + 1}: ${k(u.read)}+${k(u.written)}${f.breakpoints[r] === 3 ? "" : `[${f.breakpoints[r]}]`}`);
    console.log(`      ${CONFIGURATIONS[i].name.padEnd(30)} ${cells.join("  ")}`);
  });
}
table(long);
table(short);

// Whether mid-run checkpoints exist: what /guard says about them.
const checkpointLine = /mid-run checkpoints: ([^\n;]*)/.exec(long[2].guardText)?.[1] ?? "(no such line in /guard)";
const built = !/not in this version/.test(checkpointLine);
const pending = built ? undefined : `mid-run checkpoints are not built: /guard says "mid-run checkpoints: ${checkpointLine}"`;
// The peak goal, once checkpoints exist, is bounded by the spec's own break-even
// (guard.md §7, seed 001): no checkpoint before turn 16, so on a run of 30-odd
// requests the peak comes before the first one. Printed as missed, every time,
// and not counted, until a rule that earns an earlier checkpoint (the cache
// issue's read point) is built; the midRunBreakEven: false row shows the bound.
const peakBound = pending ?? "the break-even of guard.md §7 lets no checkpoint fire before turn 16; see the midRunBreakEven: false row";
// The long-run cost goal is bounded by the same rule: §7 weighs a checkpoint
// over "turns so far" as if as many turns were still to come. In this run the
// second checkpoint (after request 31) passes it with the rewrite after the
// pin's read point, and only 2 requests follow: its one rewrite is never paid
// back (docs/GUARD.md "Prompt cache"). Printed as missed, every time it is,
// and not counted, until the rule's horizon is decided (issue 10's note).
const costBound =
  "guard.md §7 weighs a checkpoint over the turns so far as if as many were to come; the checkpoint after request 31 passes it and only 2 requests follow (see the per-request lines)";
console.log(`
mid-run checkpoints, as /guard says after the default long run: "${checkpointLine}"${built ? "" : `; "default" measured the same as "run end only"`}`);

const [longOff, , longDefault] = long;
const [shortOff, shortRunEnd, shortDefault] = short;
console.log(
  `cost ratios, default ÷ guard off: long run ${ratio(longDefault.cost.total, longOff.cost.total)} (${usd(longDefault.cost.total)} vs ${usd(longOff.cost.total)}), short run ${ratio(shortDefault.cost.total, shortOff.cost.total)} (${usd(shortDefault.cost.total)} vs ${usd(shortOff.cost.total)})`,
);
console.log("verdicts:");
const verdicts: [string, string, boolean, string | undefined][] = [
  ["long run, peak context at default settings ≤ 0.5× guard off", `${k(longDefault.peak)} vs ${k(longOff.peak)}, ${ratio(longDefault.peak, longOff.peak)}`, longDefault.peak <= 0.5 * longOff.peak, peakBound],
  [
    "long run, main-model cost at default settings below guard off",
    `${usd(longDefault.cost.total)} vs ${usd(longOff.cost.total)}, ${ratio(longDefault.cost.total, longOff.cost.total)}`,
    longDefault.cost.total < longOff.cost.total,
    pending ?? costBound,
  ],
  [
    "short run, main-model cost never above guard off",
    `default ${usd(shortDefault.cost.total)} (${ratio(shortDefault.cost.total, shortOff.cost.total)}), run end only ${usd(shortRunEnd.cost.total)}, guard off ${usd(shortOff.cost.total)}`,
    shortDefault.cost.total <= shortOff.cost.total && shortRunEnd.cost.total <= shortOff.cost.total,
    pending,
  ],
];
for (const [what, detail, met, uncounted] of verdicts) console.log(`  ${what}: ${detail}: ${goal(what, met, uncounted)}`);
const all = [...long, ...short];
const missing = all.reduce((n, f) => n + f.lastRequest.missing.length + f.afterRun.missing.length, 0);
const needed = "needed lines of the oracle missing from the window and not recalled, every run and configuration";
console.log(`  ${needed}: ${missing}: ${goal(needed, missing === 0)}`);
for (const f of all) {
  for (const line of [...f.lastRequest.missing, ...f.afterRun.missing].slice(0, 3)) console.log(`  missing: ${line}`);
}
