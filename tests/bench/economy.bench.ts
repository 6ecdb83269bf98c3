// Benchmark: the guard's economy (product.md "Economy"), measured on scripted
// runs inside real Pi: a long autonomous run ("fix all failing tests", 33
// requests) and a short one (5 requests), from tests/harness/long-run.ts, each
// with the guard off, with run-end passes only (`midRun: false`) and with the
// default settings. Real session, tools, folder and extension loading; the
// main model is Pi's faux provider replaying the script (so every
// configuration makes the same calls) and the classifier the oracle's
// stand-in (it keeps exactly the chunks that hold a needed line).
//
// Per configuration:
// - requests: provider requests of the run;
// - peak context: the largest request, in Pi's estimate: its exported
//   `estimateTokens` summed over the request's messages (in Pi 1.6 the first
//   is the system message, whose estimate holds the system prompt and the
//   tool definitions);
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
// 16 × rewrite) lets no checkpoint fire before turn 17, which bounds how far
// a run of 30-odd requests can lower its peak.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { checkOracle, checkRunWorked, type OracleCheck, startLongRun } from "../harness/long-run.ts";
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

async function measure(short: boolean, settings: Record<string, unknown>): Promise<Figures & { what: string }> {
  const { pi, project: p, lines, prompt } = await startLongRun({ short, guardSettings: settings });
  try {
    await pi.prompt(prompt);
    if (pi.pendingSteps() !== 0) throw new Error(`economy: ${pi.pendingSteps()} scripted turns unused (a compaction or an error took one?)`);
    const branch = pi.branch();
    checkRunWorked(branch, p);
    const context = pi.requests.map(requestTokens);
    const window = pi.projection().messages;
    const { read, written } = cacheUse(pi.requests);
    const output = branch.filter((e: Loose) => e.type === "message" && e.message.role === "assistant").reduce((n: number, e: Loose) => n + estimate(e.message), 0);
    const records = branch.filter((e: Loose) => e.type === "custom" && e.customType === "context-guard").map((e: Loose) => e.data);
    const checkpointsAt: Figures["checkpointsAt"] = [];
    let turns = 0;
    for (const e of branch) {
      if (e.type === "message" && e.message.role === "assistant") turns++;
      if (e.type === "custom" && e.customType === "context-guard" && e.data?.phase === "mid-run") checkpointsAt.push({ request: turns, saved: e.data.savedChars });
    }
    const figures: Figures & { what: string } = {
      what: short ? `short run: one bug, ${p.cases} cases` : `long run: "fix all failing tests", ${p.bugs.length} bugs, ${p.cases} cases`,
      requests: pi.requests.length,
      context,
      peak: Math.max(...context),
      after: window.reduce((n: number, m: Loose) => n + estimate(m), 0),
      read,
      written,
      output,
      cost: (read * price.cacheRead + written * price.cacheWrite + output * price.output) / 1e6,
      checkpoints: records.filter((d: Loose) => d.phase === "mid-run").length,
      checkpointsAt,
      runEndPasses: records.filter((d: Loose) => d.phase === "run-end").length,
      compactions: branch.filter((e: Loose) => e.type === "compaction").length,
      lastRequest: checkOracle(pi.requests.at(-1)?.messages ?? [], pi.requests, lines),
      afterRun: checkOracle(window, pi.requests, lines),
      guardText: "",
    };
    await pi.prompt("/guard");
    figures.guardText = pi.notifications.at(-1)?.message ?? "";
    return figures;
  } finally {
    await pi.dispose();
  }
}

const runs = [
  { key: "long", short: false },
  { key: "short", short: true },
];
const results = new Map<string, (Figures & { what: string })[]>();
const started = performance.now();
for (const run of runs) {
  const figures: (Figures & { what: string })[] = [];
  for (const c of CONFIGURATIONS) figures.push(await measure(run.short, c.settings));
  results.set(run.key, figures);
}

const k = (tokens: number) => `${(tokens / 1000).toFixed(1)}k`;
const usd = (x: number) => `$${x.toFixed(3)}`;
const ratio = (a: number, b: number) => `${(a / b).toFixed(2)}×`;

console.log(`economy: scripted runs in real Pi ${piVersion} (faux main model replaying the script, stand-in classifier keeping the oracle's chunks); ${((performance.now() - started) / 1000).toFixed(1)} s`);
console.log(
  `prices: ${PRICED.provider}/${PRICED.id}, Pi's catalog (${catalogFile.slice(catalogFile.indexOf("@earendil-works"))}): input $${price.input}, cache write $${price.cacheWrite}, cache read $${price.cacheRead}, output $${price.output} per million tokens`,
);
console.log("cache: a request's longest run of leading messages equal to any earlier request's is read, the rest written; tokens are Pi's estimate");
for (const run of runs) {
  const figures = results.get(run.key) as (Figures & { what: string })[];
  const off = figures[0];
  console.log(`\n${off.what}:`);
  console.log("  configuration                  requests   peak  ×off    cost   ×off   read / written / output tokens   checkpoints  run-end  compactions  after run  missing (last request, after run)");
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
    console.log(`  ${cells.join(" ")}`);
  });
  const every = (xs: number[]) => xs.map((x, i) => ({ x, i })).filter(({ i }) => i % 5 === 0 || i === xs.length - 1);
  console.log(`  context per request (request: tokens), every 5th and the last:`);
  figures.forEach((f, i) => console.log(`    ${CONFIGURATIONS[i].name.padEnd(30)} ${every(f.context).map(({ x, i: r }) => `${r + 1}: ${k(x)}`).join("  ")}`));
  figures.forEach((f, i) => {
    const at = f.checkpointsAt.map((c) => `after request ${c.request} (${(c.saved / 1000).toFixed(1)}k chars kept out)`).join(", ");
    console.log(`    ${CONFIGURATIONS[i].name.padEnd(30)} peak at request ${f.context.indexOf(f.peak) + 1}; checkpoints ${at || "none"}`);
  });
}

// Whether mid-run checkpoints exist: what /guard says about them.
const longDefault = (results.get("long") as Figures[])[2];
const checkpointLine = /mid-run checkpoints: ([^\n;]*)/.exec(longDefault.guardText)?.[1] ?? "(no such line in /guard)";
const built = !/not in this version/.test(checkpointLine);
const pending = built ? undefined : `mid-run checkpoints are not built: /guard says "mid-run checkpoints: ${checkpointLine}"`;
console.log(`\nmid-run checkpoints, as /guard says after the default long run: "${checkpointLine}"${built ? "" : `; "default" measured the same as "run end only"`}`);

const [longOff, longRunEnd, longDefaultF] = results.get("long") as Figures[];
const [shortOff, shortRunEnd, shortDefault] = results.get("short") as Figures[];
const verdicts: [string, string, boolean, string | undefined][] = [
  ["long run, peak context at default settings ≤ 0.5× guard off", `${k(longDefaultF.peak)} vs ${k(longOff.peak)}, ${ratio(longDefaultF.peak, longOff.peak)}`, longDefaultF.peak <= 0.5 * longOff.peak, pending],
  ["long run, main-model cost at default settings below guard off", `${usd(longDefaultF.cost)} vs ${usd(longOff.cost)}, ${ratio(longDefaultF.cost, longOff.cost)}`, longDefaultF.cost < longOff.cost, pending],
  [
    "short run, main-model cost never above guard off",
    `default ${usd(shortDefault.cost)}, run end only ${usd(shortRunEnd.cost)}, guard off ${usd(shortOff.cost)}`,
    shortDefault.cost <= shortOff.cost && shortRunEnd.cost <= shortOff.cost,
    pending,
  ],
];
const missing = [...results.values()].flat().reduce((n, f) => n + f.lastRequest.missing.length + f.afterRun.missing.length, 0);
console.log("verdicts:");
for (const [what, detail, met, why] of verdicts) console.log(`  ${what}: ${detail}: ${goal(what, met, why)}`);
const needed = "needed lines of the oracle missing from the window and not recalled, every run and configuration";
console.log(`  ${needed}: ${missing}: ${goal(needed, missing === 0)}`);
if (longRunEnd.peak < longOff.peak * 0.99 && !built) console.log("  note: run end only changed the peak, which a run-end pass cannot do; look at the requests");
for (const f of [...results.values()].flat()) {
  for (const line of [...f.lastRequest.missing, ...f.afterRun.missing].slice(0, 3)) console.log(`  missing: ${line}`);
}
