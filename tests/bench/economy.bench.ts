// Benchmark: the guard's economy (product.md "Economy"), measured on scripted
// runs inside real Pi: a long autonomous run ("fix all failing tests", 33
// requests) and a short one (5 requests), from tests/harness/long-run.ts, each
// with the guard off, with run-end passes only (`midRun: false`) and with the
// default settings. Real session, tools, folder and extension loading; the
// classifier is the oracle's stand-in (it keeps exactly the chunks that hold
// a needed line). The main model replays the script, so every configuration
// makes the same calls, in two ways: Pi's `anthropic` provider talking to a
// loopback server (tests/harness/anthropic-server.ts: the model the costs are
// priced as, so the guard applies its Anthropic cache rules), and Pi's faux
// provider in-process (the guard's rules for other providers: a prefix cache
// rewritten from the first edit).
//
// Per configuration:
// - requests: provider requests of the run;
// - peak context: the largest request, in Pi's estimate: its exported
//   `estimateTokens` summed over the request's messages as Pi hands them to
//   the provider (the `context_with_system` event; in Pi 1.6 the first is the
//   system message, whose estimate holds the system prompt and the tool
//   definitions); for Anthropic also the request body on the wire ÷ 4;
// - main-model cost at list prices, with a prompt cache counted by prefix
//   matching: the longest run of leading messages a request shares with any
//   earlier request is read from the cache, the rest of it written (Pi puts a
//   cache breakpoint on the last message, so an Anthropic request writes all
//   it does not read); its reply is output;
// - after run: Pi's estimate of the window the next prompt would start from;
// - needed lines missing: oracle lines neither in the run's last request nor
//   recalled (must be 0), and, as a second figure, neither in the window
//   after the run (Pi's projection, after the run-end pass).
// Ratios are against guard off. The goals: the long run's peak at default
// settings ≤ 0.5× guard off, its cost below guard off, the short run's cost
// never above, no needed line missing. The ratio goals rest on mid-run
// checkpoints (a run-end pass comes after the run's last request, so it cannot
// change them); while `/guard` says checkpoints are not in this version, they
// are printed with their verdict but not counted by --check. The missing-lines
// goal always counts. A fourth configuration, `midRunBreakEven: false`, is
// printed for comparison only: the break-even (§7: pending × turns so far ≥
// 16 × rewrite, and the pending characters are part of the rewrite) lets no
// checkpoint fire before turn 16, which bounds how far a run of 30-odd
// requests can lower its peak.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { anthropicSession, startAnthropicServer } from "../harness/anthropic-server.ts";
import { checkOracle, checkRunWorked, longRunScript, type OracleCheck, project, shortRunScript, startLongRun } from "../harness/long-run.ts";
import { agent, type Loose, piModules, piVersion } from "../harness/pi.ts";
import type { ProviderRequest } from "../harness/session.ts";
import { goal } from "./verdict.ts";

// List prices: Pi's own catalog entry of the model the economy is priced as.
const PRICED = { provider: "anthropic", id: "claude-sonnet-4-5" };
const catalogFile = join(piModules, "@earendil-works", "pi-ai", "dist", "providers", "data", "anthropic.json");
const catalog = JSON.parse(readFileSync(catalogFile, "utf8"));
const priced = catalog["anthropic-messages"]?.[`chat:${PRICED.id}`] ?? catalog[`chat:${PRICED.id}`];
if (!priced?.cost) throw new Error(`economy: no price for ${PRICED.provider}/${PRICED.id} in ${catalogFile}`);
const price: { input: number; output: number; cacheRead: number; cacheWrite: number } = priced.cost;

const CONFIGURATIONS: { name: string; settings: Record<string, unknown> }[] = [
  { name: "guard off", settings: { enabled: false } },
  { name: "run end only (midRun: false)", settings: { midRun: false } },
  { name: "default", settings: {} },
  // For reading the figures only (no goal): what the break-even rule holds back.
  { name: "midRunBreakEven: false", settings: { midRunBreakEven: false } },
];

interface Figures {
  requests: number;
  /** Pi's estimate of each request, in tokens. */
  context: number[];
  peak: number;
  /** Pi's estimate of the window after the run (its projection, after any run-end pass). */
  after: number;
  read: number;
  written: number;
  output: number;
  cost: number;
  checkpoints: number;
  /** Each checkpoint: the request whose turn it ended, and the characters it kept out. */
  checkpointsAt: { request: number; saved: number }[];
  runEndPasses: number;
  compactions: number;
  lastRequest: OracleCheck;
  afterRun: OracleCheck;
  /** What `/guard` said after the run. */
  guardText: string;
}

const estimate = (m: Loose) => agent.estimateTokens(m) as number;

/** Pi's estimate of a request: its messages, and a system prompt given apart from them (older Pi). */
function requestTokens(r: ProviderRequest): number {
  const system = typeof r.systemPrompt === "string" ? Math.ceil(r.systemPrompt.length / 4) : 0;
  return system + r.messages.reduce((n, m) => n + estimate(m), 0);
}

/**
 * Cache reads and writes by prefix matching: for each request, the longest
 * run of leading messages equal to those of any earlier request is read; the
 * rest is written. Messages compare as JSON, so an edited one differs.
 */
function cacheUse(requests: ProviderRequest[]): { read: number; written: number } {
  const seen: string[][] = [];
  let read = 0;
  let written = 0;
  for (const r of requests) {
    const parts = [...(typeof r.systemPrompt === "string" ? [r.systemPrompt] : []), ...r.messages.map((m) => JSON.stringify(m))];
    const tokens = [...(typeof r.systemPrompt === "string" ? [Math.ceil(r.systemPrompt.length / 4)] : []), ...r.messages.map(estimate)];
    let common = 0;
    for (const earlier of seen) {
      let k = 0;
      while (k < parts.length && k < earlier.length && parts[k] === earlier[k]) k++;
      common = Math.max(common, k);
    }
    const hit = tokens.slice(0, common).reduce((a, b) => a + b, 0);
    read += hit;
    written += tokens.reduce((a, b) => a + b, 0) - hit;
    seen.push(parts);
  }
  return { read, written };
}

interface Main {
  name: string;
  anthropic: boolean;
}
const MAINS: Main[] = [
  { name: `anthropic/${PRICED.id} on loopback (Pi's anthropic provider)`, anthropic: true },
  { name: "faux (Pi's faux provider, in-process)", anthropic: false },
];

type Measured = Figures & { what: string; wirePeak: number | undefined };

async function measure(main: Main, short: boolean, settings: Record<string, unknown>): Promise<Measured> {
  // What Pi hands the provider, request by request, whatever the provider.
  const requests: ProviderRequest[] = [];
  const recorder = (pi: Loose) =>
    pi.on("context_with_system", (event: Loose) => {
      requests.push({ systemPrompt: undefined, messages: structuredClone(event.messages), tools: [] });
    });
  const p = project(short ? 1 : undefined);
  const server = main.anthropic ? await startAnthropicServer(short ? shortRunScript(p) : longRunScript(p)) : undefined;
  const loopback = server ? anthropicSession(server) : undefined;
  const { pi, lines, prompt } = await startLongRun({
    short,
    guardSettings: settings,
    ...loopback?.options,
    extensions: [...(loopback?.options.extensions ?? []), recorder],
  });
  try {
    await loopback?.select(pi);
    await pi.prompt(prompt);
    const unused = server ? server.pendingSteps() : pi.pendingSteps();
    if (unused !== 0) throw new Error(`economy: ${unused} scripted turns unused (a compaction or an error took one?)`);
    const sent = server ? server.bodies.length : pi.requests.length;
    if (sent !== requests.length) throw new Error(`economy: the provider got ${sent} requests, the recorder saw ${requests.length}`);
    const branch = pi.branch();
    checkRunWorked(branch, p);
    const context = requests.map(requestTokens);
    const window = pi.projection().messages;
    const { read, written } = cacheUse(requests);
    const output = branch.filter((e: Loose) => e.type === "message" && e.message.role === "assistant").reduce((n: number, e: Loose) => n + estimate(e.message), 0);
    const records = branch.filter((e: Loose) => e.type === "custom" && e.customType === "context-guard").map((e: Loose) => e.data);
    const checkpointsAt: Figures["checkpointsAt"] = [];
    let turns = 0;
    for (const e of branch) {
      if (e.type === "message" && e.message.role === "assistant") turns++;
      if (e.type === "custom" && e.customType === "context-guard" && e.data?.phase === "mid-run") checkpointsAt.push({ request: turns, saved: e.data.savedChars });
    }
    const figures: Measured = {
      what: short ? `short run: one bug, ${p.cases} cases` : `long run: "fix all failing tests", ${p.bugs.length} bugs, ${p.cases} cases`,
      requests: requests.length,
      context,
      peak: Math.max(...context),
      wirePeak: server ? Math.max(...server.bodies.map((b) => Math.ceil(JSON.stringify(b).length / 4))) : undefined,
      after: window.reduce((n: number, m: Loose) => n + estimate(m), 0),
      read,
      written,
      output,
      cost: (read * price.cacheRead + written * price.cacheWrite + output * price.output) / 1e6,
      checkpoints: records.filter((d: Loose) => d.phase === "mid-run").length,
      checkpointsAt,
      runEndPasses: records.filter((d: Loose) => d.phase === "run-end").length,
      compactions: branch.filter((e: Loose) => e.type === "compaction").length,
      lastRequest: checkOracle(requests.at(-1)?.messages ?? [], requests, lines),
      afterRun: checkOracle(window, requests, lines),
      guardText: "",
    };
    await pi.prompt("/guard");
    figures.guardText = pi.notifications.at(-1)?.message ?? "";
    return figures;
  } finally {
    await pi.dispose();
    await server?.close();
    delete process.env.ANTHROPIC_API_KEY;
  }
}

const started = performance.now();
const results: { main: Main; long: Measured[]; short: Measured[] }[] = [];
for (const main of MAINS) {
  const long: Measured[] = [];
  const short: Measured[] = [];
  for (const c of CONFIGURATIONS) long.push(await measure(main, false, c.settings));
  for (const c of CONFIGURATIONS) short.push(await measure(main, true, c.settings));
  results.push({ main, long, short });
}

const k = (tokens: number) => `${(tokens / 1000).toFixed(1)}k`;
const usd = (x: number) => `$${x.toFixed(3)}`;
const ratio = (a: number, b: number) => `${(a / b).toFixed(2)}×`;

console.log(`economy: scripted runs in real Pi ${piVersion} (the main model replays the script; a stand-in classifier keeps the oracle's chunks); ${((performance.now() - started) / 1000).toFixed(1)} s`);
console.log(
  `prices: ${PRICED.provider}/${PRICED.id}, Pi's catalog (${catalogFile.slice(catalogFile.indexOf("@earendil-works"))}): input $${price.input}, cache write $${price.cacheWrite}, cache read $${price.cacheRead}, output $${price.output} per million tokens`,
);
console.log("cache: a request's longest run of leading messages equal to any earlier request's is read, the rest written; tokens are Pi's estimate");

function table(figures: Measured[]): void {
  const off = figures[0];
  console.log(`
  ${off.what}:`);
  console.log("    configuration                  requests   peak  ×off    cost   ×off   read / written / output tokens   checkpoints  run-end  compactions  after run  missing (last request, after run)");
  figures.forEach((f, i) => {
    const cells = [
      CONFIGURATIONS[i].name.padEnd(30),
      String(f.requests).padStart(8),
      k(f.peak).padStart(7),
      ratio(f.peak, off.peak).padStart(6),
      usd(f.cost).padStart(8),
      ratio(f.cost, off.cost).padStart(6),
      `${k(f.read)} / ${k(f.written)} / ${k(f.output)}`.padStart(32),
      String(f.checkpoints).padStart(13),
      String(f.runEndPasses).padStart(8),
      String(f.compactions).padStart(12),
      k(f.after).padStart(10),
      `${f.lastRequest.missing.length}, ${f.afterRun.missing.length}${f.lastRequest.recalled.length ? ` (${f.lastRequest.recalled.length} recalled)` : ""}`.padStart(10),
    ];
    console.log(`    ${cells.join(" ")}`);
  });
  const every = (xs: number[]) => xs.map((x, i) => ({ x, i })).filter(({ i }) => i % 5 === 0 || i === xs.length - 1);
  console.log(`    context per request (request: tokens), every 5th and the last; where the peak is; after which requests checkpoints fired:`);
  figures.forEach((f, i) => {
    const at = f.checkpointsAt.map((c) => `${c.request} (${(c.saved / 1000).toFixed(1)}k chars kept out)`).join(", ");
    const wire = f.wirePeak === undefined ? "" : `; on the wire ${k(f.wirePeak)} (body characters ÷ 4)`;
    console.log(`      ${CONFIGURATIONS[i].name.padEnd(30)} ${every(f.context).map(({ x, i: r }) => `${r + 1}: ${k(x)}`).join("  ")}`);
    console.log(`      ${"".padEnd(30)} peak at request ${f.context.indexOf(f.peak) + 1}${wire}; checkpoints after requests: ${at || "none"}`);
  });
}
for (const r of results) {
  console.log(`
main model: ${r.main.name}`);
  table(r.long);
  table(r.short);
}

// Whether mid-run checkpoints exist: what /guard says about them.
const checkpointLine = /mid-run checkpoints: ([^\n;]*)/.exec(results[0].long[2].guardText)?.[1] ?? "(no such line in /guard)";
const built = !/not in this version/.test(checkpointLine);
const pending = built ? undefined : `mid-run checkpoints are not built: /guard says "mid-run checkpoints: ${checkpointLine}"`;
// The peak goal, once checkpoints exist, is bounded by the spec's own break-even
// (guard.md §7, seed 001): no checkpoint before turn 16, so on a run of 30-odd
// requests the peak comes before the first one. Printed as missed, every time,
// and not counted, until a rule that earns an earlier checkpoint (the cache
// issue's read point) is built; the midRunBreakEven: false row shows the bound.
const peakBound = pending ?? "the break-even of guard.md §7 lets no checkpoint fire before turn 16; see the midRunBreakEven: false row";
console.log(`
mid-run checkpoints, as /guard says after the default long run: "${checkpointLine}"${built ? "" : `; "default" measured the same as "run end only"`}`);

console.log("verdicts:");
for (const r of results) {
  const [longOff, , longDefault] = r.long;
  const [shortOff, shortRunEnd, shortDefault] = r.short;
  const model = r.main.anthropic ? "anthropic" : "faux";
  const verdicts: [string, string, boolean, string | undefined][] = [
    [`${model}: long run, peak context at default settings ≤ 0.5× guard off`, `${k(longDefault.peak)} vs ${k(longOff.peak)}, ${ratio(longDefault.peak, longOff.peak)}`, longDefault.peak <= 0.5 * longOff.peak, peakBound],
    [`${model}: long run, main-model cost at default settings below guard off`, `${usd(longDefault.cost)} vs ${usd(longOff.cost)}, ${ratio(longDefault.cost, longOff.cost)}`, longDefault.cost < longOff.cost, pending],
    [
      `${model}: short run, main-model cost never above guard off`,
      `default ${usd(shortDefault.cost)}, run end only ${usd(shortRunEnd.cost)}, guard off ${usd(shortOff.cost)}`,
      shortDefault.cost <= shortOff.cost && shortRunEnd.cost <= shortOff.cost,
      pending,
    ],
  ];
  for (const [what, detail, met, uncounted] of verdicts) console.log(`  ${what}: ${detail}: ${goal(what, met, uncounted)}`);
}
const all = results.flatMap((r) => [...r.long, ...r.short]);
const missing = all.reduce((n, f) => n + f.lastRequest.missing.length + f.afterRun.missing.length, 0);
const needed = "needed lines of the oracle missing from the window and not recalled, every run, main model and configuration";
console.log(`  ${needed}: ${missing}: ${goal(needed, missing === 0)}`);
for (const f of all) {
  for (const line of [...f.lastRequest.missing, ...f.afterRun.missing].slice(0, 3)) console.log(`  missing: ${line}`);
}
