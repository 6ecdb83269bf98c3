// A long autonomous run, scripted: "fix all failing tests" in a generated
// project, for the economy benchmark (tests/bench/economy.bench.ts) and the
// mid-run checkpoint tests.
//
// The project is real and so are the tools: ten small modules, each with one
// bug, a test runner (`node test/run.mjs`) whose TAP-like log is tens of
// kilobytes (every passing case on its own line, every failure as a block
// with its assertion line), and it shrinks as the fixes land. The scripted
// model runs the suite, searches with Pi's `grep` tool, then for each bug
// reads the file (Pi's `read`), fixes it (`edit`, one line) and runs the suite
// again (`bash`): 33 provider requests in one run. Nothing in the log is
// faked: the runner computes every case, and the expected values were
// computed here by the correct code.
//
// The ORACLE is what the work needs: every failing case's assertion line and
// every source line an edit replaces. The stand-in classifier
// `oracleClassifier` keeps exactly the chunks and whole outputs that hold an
// oracle line (and drops the rest), so a guard that obeys its classifier
// never loses one; `checkOracle` says which lines are neither in a request's
// window nor in a `recall` output. The short run (≤ 8 requests) fixes the one
// bug of a one-bug project.
//
// `pausedSession` cuts the same work into a session of prompts, one bug
// each, with pauses of minutes between them (the economy suite's session
// shape, on the shifted clock of clock.ts).
import { delimiter, dirname } from "node:path";
import { answering, type Behaviour, choose, type ClassifyRequest, yes } from "./classifier.ts";
import type { Loose } from "./pi.ts";
import { type PiSession, type ProviderRequest, type SessionOptions, type Step, startSession } from "./session.ts";

/** One seeded bug: a module, the function it breaks, its correct and its buggy line. */
interface Bug {
  module: string;
  fn: string;
  params: string;
  /** The function's body, `LINE` where the correct or buggy line goes. */
  body: string[];
  correct: string;
  buggy: string;
  cases: unknown[][];
  /** What the scripted model says when it has read the file. */
  why: string;
}

// Each bug makes a few of its function's cases fail (checked in `project`);
// the fix is the one line.
const BUGS: Bug[] = [
  {
    module: "money",
    fn: "toCents",
    params: "amount",
    body: ["LINE"],
    correct: "return Math.round(amount * 100);",
    buggy: "return Math.trunc(amount * 100);",
    cases: [[0.29], [19.99], [2.5], [10], [4.35], [0.1], [7.25], [3], [99.5], [0.57]],
    why: "toCents truncates amount * 100, so 19.99 becomes 1998; it must round",
  },
  {
    module: "cart",
    fn: "lineTotal",
    params: "items",
    body: ["let sum = 0;", "for (const item of items) {", "  LINE", "}", "return sum;"],
    correct: "sum += item.price * item.qty;",
    buggy: "sum += item.price;",
    cases: [
      [[{ price: 5, qty: 1 }]],
      [[{ price: 5, qty: 3 }]],
      [[]],
      [
        [
          { price: 2, qty: 1 },
          { price: 7, qty: 1 },
        ],
      ],
      [
        [
          { price: 2, qty: 4 },
          { price: 1, qty: 2 },
        ],
      ],
      [[{ price: 12, qty: 1 }]],
    ],
    why: "lineTotal adds item.price and ignores item.qty",
  },
  {
    module: "dates",
    fn: "isLeapYear",
    params: "year",
    body: ["LINE"],
    correct: "return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;",
    buggy: "return year % 4 === 0;",
    cases: [[2024], [2023], [1900], [2000], [2100], [1996], [2001], [2400]],
    why: "isLeapYear forgets the century rule, so 1900 and 2100 count as leap years",
  },
  {
    module: "slug",
    fn: "slugify",
    params: "title",
    body: ["const lower = title.trim().toLowerCase();", "LINE"],
    correct: 'return lower.replace(/[^a-z0-9]+/g, "-").replace(/^-|-$/g, "");',
    buggy: 'return lower.replace(/[^a-z0-9]/g, "-").replace(/^-|-$/g, "");',
    cases: [["Hello World"], ["Hello, World"], ["  Pi  "], ["a -- b"], ["Release 1.2"], ["single"]],
    why: "slugify replaces each character separately, so runs of punctuation give double dashes",
  },
  {
    module: "paging",
    fn: "pageCount",
    params: "total, size",
    body: ["LINE"],
    correct: "return Math.ceil(total / size);",
    buggy: "return Math.floor(total / size);",
    cases: [
      [100, 10],
      [101, 10],
      [0, 10],
      [9, 10],
      [50, 25],
      [51, 25],
    ],
    why: "pageCount rounds down, dropping the last partial page",
  },
  {
    module: "retry",
    fn: "backoffMs",
    params: "attempt",
    body: ["LINE"],
    correct: "return Math.min(100 * 2 ** attempt, 5000);",
    buggy: "return 100 * 2 ** attempt;",
    cases: [[0], [1], [2], [5], [6], [8], [3]],
    why: "backoffMs has no cap; it must stop at 5000 ms",
  },
  {
    module: "csv",
    fn: "parseRow",
    params: "line",
    body: ["LINE"],
    correct: 'return line.split(",").map((cell) => cell.trim());',
    buggy: 'return line.split(",");',
    cases: [["a,b,c"], ["a, b, c"], ["one"], [" x ,y"], ["1,2,3"]],
    why: "parseRow keeps the spaces around each cell",
  },
  {
    module: "semver",
    fn: "compare",
    params: "a, b",
    body: ['const [x, y] = [a, b].map((v) => v.split(".").map(Number));', "for (let i = 0; i < 3; i++) {", "  LINE", "}", "return 0;"],
    correct: "if (x[i] !== y[i]) return x[i] < y[i] ? -1 : 1;",
    buggy: "if (x[i] !== y[i]) return String(x[i]) < String(y[i]) ? -1 : 1;",
    cases: [
      ["1.0.0", "1.0.0"],
      ["1.2.0", "1.3.0"],
      ["1.10.0", "1.9.0"],
      ["2.0.0", "10.0.0"],
      ["1.0.1", "1.0.0"],
      ["0.9.9", "1.0.0"],
    ],
    why: "compare compares version parts as strings, so 1.10.0 sorts before 1.9.0",
  },
  {
    module: "stats",
    fn: "median",
    params: "values",
    body: ["const xs = [...values].sort((p, q) => p - q);", "const mid = xs.length >> 1;", "LINE"],
    correct: "return xs.length % 2 ? xs[mid] : (xs[mid - 1] + xs[mid]) / 2;",
    buggy: "return xs[mid];",
    cases: [[[3, 1, 2]], [[4, 1, 3, 2]], [[5]], [[10, 20]], [[7, 7, 7]], [[1, 2, 3, 4, 5, 6]]],
    why: "median takes the upper middle value of an even-length list instead of the mean of both",
  },
  {
    module: "text",
    fn: "truncate",
    params: "s, max",
    body: ["LINE"],
    correct: 'return s.length <= max ? s : s.slice(0, max - 1) + "…";',
    buggy: 'return s.length <= max ? s : s.slice(0, max) + "…";',
    cases: [
      ["hello", 10],
      ["hello world", 5],
      ["abc", 3],
      ["abcdef", 4],
      ["", 2],
    ],
    why: "truncate keeps max characters before the ellipsis, one too many",
  },
];

/** Correct helpers every module also has: their passing cases are most of the log, as in a real suite. */
const HELPERS: { name: (m: string) => string; params: string; body: string; cases: unknown[][] }[] = [
  { name: (m) => `${m}Clamp`, params: "x", body: "return Math.min(Math.max(x, 0), 1000);", cases: [[-5], [0], [17], [999], [1000], [4000]] },
  {
    name: (m) => `${m}Scale`,
    params: "x, k",
    body: "return Math.round(x * k * 1000) / 1000;",
    cases: [
      [1.5, 2],
      [0.1, 3],
      [7, 0.5],
      [2.25, 4],
    ],
  },
  { name: (m) => `${m}Key`, params: "id", body: 'return String(id).padStart(6, "0");', cases: [[7], [123456], ["42"], [990]] },
  { name: (m) => `${m}Sum`, params: "xs", body: "return xs.reduce((s, x) => s + x, 0);", cases: [[[1, 2, 3]], [[]], [[0.5, 0.25]], [[10, -10]]] },
  { name: (m) => `${m}Label`, params: "n", body: 'return n === 1 ? "1 item" : `${n} items`;', cases: [[0], [1], [2], [40]] },
];

const functionSource = (name: string, params: string, body: string[]) => [`export function ${name}(${params}) {`, ...body.map((l) => `  ${l}`), "}"].join("\n");
// a generated function's signature is whatever its params say
const compile = (params: string, body: string[]): ((...args: any[]) => unknown) => new Function(...params.split(", "), body.join("\n")) as never;
const shown = (v: unknown) => JSON.stringify(v);

/** One test case as the runner reads it. */
interface Case {
  fn: string;
  args: unknown[];
  expected: unknown;
  table: string;
}

/** What a generated project holds and what its work needs. */
export interface Project {
  files: Record<string, string>;
  /** The bugs seeded, in the order the script fixes them. */
  bugs: { module: string; fn: string; path: string; buggy: string; correct: string; why: string; failing: number }[];
  /** The assertion line of every case that fails before its fix. */
  assertionLines: string[];
  cases: number;
}

/**
 * The generated project: `bugs` modules with one bug each (the first ones of
 * the list), all ten modules with their helpers and tests, and the runner.
 */
export function project(bugs = BUGS.length): Project {
  if (!(bugs >= 1 && bugs <= BUGS.length)) throw new Error(`long-run: bugs must be 1 to ${BUGS.length}, got ${bugs}`);
  const files: Record<string, string> = {
    "package.json": `${JSON.stringify({ name: "ledger-utils", version: "0.4.0", type: "module", scripts: { test: "node test/run.mjs" } }, null, 2)}\n`,
    "README.md":
      "# ledger-utils\n\nSmall helpers for the ledger service: money, carts, dates, slugs, paging, retries, CSV, versions, statistics, text.\n\nRun the tests with `node test/run.mjs`.\n",
    "test/run.mjs": RUNNER,
  };
  const seeded: Project["bugs"] = [];
  const assertionLines: string[] = [];
  let cases = 0;
  BUGS.forEach((bug, index) => {
    const broken = index < bugs;
    const body = (line: string) => bug.body.map((l) => l.replace("LINE", line));
    const right = compile(bug.params, body(bug.correct));
    const wrong = compile(bug.params, body(bug.buggy));
    const path = `src/${bug.module}.js`;
    const list: Case[] = [];
    const table = (i: number) => `${bug.module}-${String(i + 1).padStart(3, "0")}`;
    let failing = 0;
    for (const args of bug.cases) {
      const expected = right(...structuredClone(args));
      list.push({ fn: bug.fn, args, expected, table: table(list.length) });
      if (broken && shown(wrong(...structuredClone(args))) !== shown(expected)) {
        failing++;
        assertionLines.push(assertionLine(bug.module, bug.fn, args, expected, wrong(...structuredClone(args))));
      }
    }
    if (broken && failing === 0) throw new Error(`long-run: the ${bug.module} bug fails no case`);
    const helpers = HELPERS.map((h) => {
      const name = h.name(bug.module);
      const f = compile(h.params, [h.body]);
      for (const args of h.cases) list.push({ fn: name, args, expected: f(...structuredClone(args)), table: table(list.length) });
      return functionSource(name, h.params, [h.body]);
    });
    // A rate table makes each module a read of several kilobytes, as real modules are.
    const rates = Array.from(
      { length: 48 },
      (_, i) =>
        `export const ${bug.module.toUpperCase()}_RATE_${String(i).padStart(2, "0")} = ${(1 + ((i * 37) % 100) / 1000).toFixed(3)}; // ${bug.module} rate table entry ${i}, reviewed 2024-0${1 + (i % 9)}`,
    );
    files[path] = [
      `// ${bug.module}: helpers of the ledger service (see README.md).`,
      "",
      ...rates,
      "",
      functionSource(bug.fn, bug.params, body(broken ? bug.buggy : bug.correct)),
      "",
      ...helpers.flatMap((h) => [h, ""]),
    ].join("\n");
    files[`test/${bug.module}.test.mjs`] =
      `// Cases of src/${bug.module}.js; expected values from the reference implementation.\nexport const module = ${shown(bug.module)};\nexport const cases = [\n${list.map((c) => `  ${shown(c)},`).join("\n")}\n];\n`;
    cases += list.length;
    if (broken) seeded.push({ module: bug.module, fn: bug.fn, path, buggy: bug.buggy, correct: bug.correct, why: bug.why, failing });
  });
  return { files, bugs: seeded, assertionLines, cases };
}

/** The line the runner prints for a failing case (the runner builds it the same way). */
function assertionLine(module: string, fn: string, args: unknown[], expected: unknown, actual: unknown): string {
  return `AssertionError [ERR_ASSERTION]: ${module}.${fn}(${args.map(shown).join(", ")}) expected ${shown(expected)}, got ${shown(actual)}`;
}

// The runner: every case on its own line, a failure as a block. Deterministic
// (no timings), so a log is the same on every run of the same sources.
const RUNNER = `// Runs every case of test/*.test.mjs against src/ and prints a TAP-like log.
import { readdirSync } from "node:fs";

const shown = (v) => JSON.stringify(v);
const files = readdirSync(new URL(".", import.meta.url)).filter((f) => f.endsWith(".test.mjs")).sort();
let n = 0;
let passed = 0;
const failed = [];
console.log("TAP version 13");
for (const file of files) {
  const { module, cases } = await import(\`./\${file}\`);
  const src = await import(\`../src/\${module}.js\`);
  console.log(\`# \${module}: \${cases.length} cases from test/\${file}\`);
  for (const [i, c] of cases.entries()) {
    n++;
    const name = \`\${module} › \${c.fn}(\${c.args.map(shown).join(", ")}) → \${shown(c.expected)}\`;
    let actual;
    try {
      actual = src[c.fn](...structuredClone(c.args));
    } catch (error) {
      actual = \`threw \${error.message}\`;
    }
    if (shown(actual) === shown(c.expected)) {
      passed++;
      console.log(\`ok \${n} - \${name}  (case \${i + 1} of test/\${file}, reference table \${c.table})\`);
      continue;
    }
    failed.push(\`\${module}.\${c.fn}\`);
    console.log(\`not ok \${n} - \${name}\`);
    console.log("  ---");
    console.log(\`  AssertionError [ERR_ASSERTION]: \${module}.\${c.fn}(\${c.args.map(shown).join(", ")}) expected \${shown(c.expected)}, got \${shown(actual)}\`);
    console.log(\`    expected: \${shown(c.expected)}\`);
    console.log(\`    actual: \${shown(actual)}\`);
    console.log(\`    at: test/\${file} (case \${i + 1}, reference table \${c.table})\`);
    console.log(\`    source: src/\${module}.js, function \${c.fn}\`);
    console.log("    stack: |");
    console.log("      at checkCase (test/run.mjs:24:22)");
    console.log("      at runModule (test/run.mjs:19:3)");
    console.log("      at async main (test/run.mjs:11:1)");
    console.log(\`    fixture: \${shown(c)}\`);
    console.log("  ...");
  }
}
console.log(\`1..\${n}\`);
console.log(\`# tests \${n}\`);
console.log(\`# pass \${passed}\`);
console.log(\`# fail \${failed.length}\`);
if (failed.length) {
  const counts = new Map();
  for (const f of failed) counts.set(f, (counts.get(f) ?? 0) + 1);
  console.log(\`# failing: \${[...counts].map(([f, k]) => \`\${f} ×\${k}\`).join(", ")}\`);
  process.exitCode = 1;
}
`;

/** The command that runs the suite. */
export const TEST_COMMAND = "node test/run.mjs";

export const LONG_RUN_PROMPT = "The test suite of this project fails. Fix all failing tests; run `node test/run.mjs` to check.";
export const SHORT_RUN_PROMPT = "`node test/run.mjs` fails. Fix it.";

/**
 * The model's turns of the long run over `p` (33 requests with ten bugs): run
 * the suite, search, then per bug read, edit and run the suite again; the
 * final answer names the fixes. Every step is a fixed call, so the run is the
 * same whatever the guard does to the context.
 */
export function longRunScript(p: Project = project(), extra = 0): Step[] {
  const steps: Step[] = [
    { say: "Running the suite to see what fails.", calls: [{ tool: "bash", args: { command: TEST_COMMAND } }] },
    { say: `${p.bugs.length} functions fail. Listing the exported functions.`, calls: [{ tool: "grep", args: { pattern: "^export function", path: "src" } }] },
  ];
  for (const [i, bug] of p.bugs.entries()) {
    // `extra` looks spread over the bugs, before each fix: the longer runs of the economy suite.
    const looks = Math.floor((extra * (i + 1)) / p.bugs.length) - Math.floor((extra * i) / p.bugs.length);
    steps.push(...lookSteps(bug, looks), ...fixSteps(bug, i === p.bugs.length - 1 ? "The last one: " : ""));
  }
  steps.push(finalAnswer(p));
  return steps;
}

/**
 * What an agent looks at around a bug before it reads the file, `n` of them,
 * in turn: the module's test cases, then its rate table. None holds a line of
 * the oracle, so the stand-in classifier keeps none. (The suite run again
 * would be a look too, but 31 of its logs take the 64-request run past Pi's
 * compaction threshold with the guard off.)
 */
function lookSteps(bug: Project["bugs"][number], n: number): Step[] {
  const looks: Step[] = [
    { say: `Looking at the cases of ${bug.fn}.`, calls: [{ tool: "read", args: { path: `test/${bug.module}.test.mjs` } }] },
    { say: `Where ${bug.module}'s rates are defined.`, calls: [{ tool: "grep", args: { pattern: `${bug.module.toUpperCase()}_RATE`, path: "src" } }] },
  ];
  return Array.from({ length: n }, (_, i) => looks[i % looks.length]);
}

/** The short run over a one-bug project (`project(1)`): run, read, edit, run, answer: 5 requests. */
export function shortRunScript(p: Project = project(1)): Step[] {
  return [{ say: "Running the suite.", calls: [{ tool: "bash", args: { command: TEST_COMMAND } }] }, ...fixSteps(p.bugs[0], ""), finalAnswer(p)];
}

/** One prompt of a session: the pause before it (ms), what the user says, and the model's turns. */
export interface SessionPrompt {
  pauseMs: number;
  text: string;
  steps: Step[];
}

/**
 * The pauses of the economy suite's session, in minutes: the 5-minute cache lapses across the 10s only,
 * and the last one follows the run end that holds back an old exchange's omission, so the suite measures
 * it going in free (docs/GUARD.md "Waiting for the cache to lapse").
 */
export const SESSION_PAUSE_MINUTES = [2, 10, 2, 2, 10];

/**
 * A session of one prompt per bug of `p` (6 with `project(6)`), with
 * `pauses[i]` minutes before prompt i + 2: the first prompt runs the suite,
 * reads, fixes and runs it again; each later one names the next function and
 * reads, fixes and runs the suite (5 + 4 per later prompt: 25 requests with
 * six bugs). Each prompt ends with a short answer, so the suite's log shrinks
 * from prompt to prompt as in `longRunScript` (`checkRunWorked` holds).
 */
export function pausedSession(p: Project = project(SESSION_PAUSE_MINUTES.length + 1), pauses = SESSION_PAUSE_MINUTES): SessionPrompt[] {
  if (pauses.length !== p.bugs.length - 1) throw new Error(`long-run: ${p.bugs.length} prompts need ${p.bugs.length - 1} pauses, got ${pauses.length}`);
  const done = (bug: Project["bugs"][number]) => `Fixed ${bug.path}: ${bug.why}.`;
  return p.bugs.map((bug, i) => {
    const fix = fixSteps(bug, "");
    if (i === 0) {
      return {
        pauseMs: 0,
        text: `\`${TEST_COMMAND}\` fails. Start with ${bug.module}: fix ${bug.fn}.`,
        steps: [{ say: "Running the suite.", calls: [{ tool: "bash", args: { command: TEST_COMMAND } }] }, ...fix, done(bug)],
      };
    }
    return { pauseMs: pauses[i - 1] * 60_000, text: `Next, ${bug.module}: ${bug.fn} still fails. Fix it.`, steps: [...fix, done(bug)] };
  });
}

/**
 * A pause of `ms` on the fake `clock`. Minutes of a person's pause are minutes of real time for what the guard
 * does in the background, so before the clock moves this waits, in real time, until the guard's status stops
 * saying it is judging (at most `ms` and 10 s: the judges here answer within a second). Without it a judge's
 * answers would still be out at a prompt a fake ten minutes later, which no person's pause gives.
 */
export async function pause(pi: Pick<PiSession, "status">, clock: { advance(ms: number): void } | undefined, ms: number): Promise<void> {
  const until = Date.now() + Math.min(ms, 10_000);
  // A run end plans once Pi has settled (on the next turn of the event loop): let it start first.
  if (ms > 0) await new Promise((done) => setTimeout(done, 1));
  while (ms > 0 && Date.now() < until && (pi.status("context-guard") ?? "").includes("judging")) {
    await new Promise((done) => setTimeout(done, 2));
  }
  clock?.advance(ms);
}

/**
 * Sends `prompts` to `pi` in order, each after its pause on `clock`, and checks that the server used
 * every scripted turn and accepted every body. Returns the index of each prompt's first request.
 */
export async function promptWithPauses(
  pi: Pick<PiSession, "prompt" | "status">,
  server: { bodies: unknown[]; usage: { rejected?: string }[]; pendingSteps(): number },
  clock: { advance(ms: number): void },
  prompts: SessionPrompt[],
): Promise<number[]> {
  const firsts: number[] = [];
  for (const x of prompts) {
    await pause(pi, clock, x.pauseMs);
    firsts.push(server.bodies.length);
    await pi.prompt(x.text);
  }
  const unused = server.pendingSteps();
  if (unused !== 0) throw new Error(`long-run: ${unused} scripted turns unused`);
  const rejected = server.usage.find((u) => u.rejected !== undefined);
  if (rejected) throw new Error(`long-run: the server rejected a body: ${rejected.rejected}`);
  return firsts;
}

function fixSteps(bug: Project["bugs"][number], lead: string): Step[] {
  return [
    {
      say: `${lead}${bug.module}.${bug.fn} fails ${bug.failing} case${bug.failing === 1 ? "" : "s"}. Reading ${bug.path}.`,
      calls: [{ tool: "read", args: { path: bug.path } }],
    },
    { say: `${bug.why}. Fixing that line.`, calls: [{ tool: "edit", args: { path: bug.path, edits: [{ oldText: bug.buggy, newText: bug.correct }] } }] },
    { say: "Running the suite again.", calls: [{ tool: "bash", args: { command: TEST_COMMAND } }] },
  ];
}

function finalAnswer(p: Project): string {
  return [`All ${p.cases} cases pass now. Fixed:`, ...p.bugs.map((b) => `- ${b.path}: ${b.why}.`)].join("\n");
}

/** Every line the work needs: the failing cases' assertion lines and the lines the edits replace. */
export function oracleLines(p: Project = project()): string[] {
  return [...p.assertionLines, ...p.bugs.map((b) => b.buggy)];
}

/** Whether a text holds one of `lines` (what the oracle's judges call needed). */
const holdsAny = (lines: string[]) => (text: unknown) => typeof text === "string" && lines.some((line) => text.includes(line));

/**
 * The stand-in classifier of the long run: a chunk, or a whole output, is
 * needed exactly when it holds an oracle line (chunks end at line ends, so a
 * needed line is whole in one chunk); nothing else is. It answers every kind of request the guard sends (large outputs
 * by `chunk_N`, `keep_whole` and `focus`; small outputs `output_N`; old
 * exchanges) and, for a question it does not know, keeps.
 *
 * Old exchanges (a one-prompt run has none): without `bugs`, kept. With the
 * project's `bugs` (a session, one bug per prompt), an exchange is needed
 * exactly when it concerns the current prompt's bug: the request's
 * `user_question` (the current prompt) names a bug, and the exchange (its
 * prompt, last reply and tool calls, as the request carries them) names that
 * bug's module and function or its file. A question that names no bug keeps
 * every exchange.
 */
export function oracleClassifier(lines: string[] = oracleLines(), bugs?: Project["bugs"]): Behaviour {
  const needs = holdsAny(lines);
  return answering((id, question, request: ClassifyRequest) => {
    const state = request.state as Loose;
    const chunks = (state.chunks ?? {}) as Record<string, string>;
    if (id === "keep_whole") return 0.05;
    if (id === "focus") {
      const first = Object.keys(chunks).find((k) => needs(chunks[k]));
      return first ? choose(question, first, 0.7) : choose(question, "none", 0.8);
    }
    if (id in chunks) return needs(chunks[id]) ? 0.9 : 0.05;
    const output = state.outputs?.[id];
    if (output) return needs(output.output) ? 0.9 : 0.05;
    const exchange = state.exchanges?.[id];
    if (exchange && bugs) {
      const current = bugNamed(String(state.user_question ?? ""), bugs);
      if (!current) return 0.9;
      const text = [exchange.user, exchange.assistant, ...(exchange.tool_calls ?? [])].join("\n");
      return concerns(text, current) ? 0.9 : 0.05;
    }
    return 0.9;
  });
}

/** A judge whose every `every`-th request fails as a provider error does (issue 26: "10% of requests failing"); `judge` answers the rest. */
export function failingClassifier(judge: Behaviour, every: number): Behaviour {
  let n = 0;
  return async (request, signal) => {
    n++;
    if (n % every === 0) return { answers: {}, stopReason: "error", errorMessage: `stand-in: request ${n} fails (1 in ${every})` };
    return judge(request, signal);
  };
}

/**
 * A judge that keeps more than the work needs (issue 26): the oracle's answers, and besides the needed
 * chunks and outputs about `share` of the others, chosen by a hash of their text (the same text, the
 * same answer). A real judge keeps what looks relevant; this one keeps a share at random.
 */
export function keepingClassifier(lines: string[], share: number): Behaviour {
  const oracle = oracleClassifier(lines);
  const needs = holdsAny(lines);
  const kept = (text: string) => {
    let h = 2166136261;
    for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 16777619);
    return (h >>> 0) % 1000 < share * 1000;
  };
  return async (request, signal) => {
    const answered = await oracle(request, signal);
    const state = request.state as Loose;
    const texts: Record<string, string> = { ...(state.chunks ?? {}) };
    for (const [id, o] of Object.entries((state.outputs ?? {}) as Record<string, Loose>)) texts[id] = String(o.output ?? "");
    for (const [id, text] of Object.entries(texts)) {
      if (!needs(text) && kept(text) && answered.answers[id]?.type === "bool") answered.answers[id] = yes(0.9);
    }
    return answered;
  };
}

/** Whether `text` names `bug`: its module and function, or its file. */
const concerns = (text: string, bug: Project["bugs"][number]) => (text.includes(bug.module) && text.includes(bug.fn)) || text.includes(bug.path);

/** The bug a prompt is about: the one it names (a session's prompts name one each). */
function bugNamed(text: string, bugs: Project["bugs"]): Project["bugs"][number] | undefined {
  const named = bugs.filter((b) => text.includes(b.module) && text.includes(b.fn));
  return named.length === 1 ? named[0] : undefined;
}

/**
 * The lines the last prompt of `pausedSession(p)` needs: its bug's failing
 * assertion lines and the line its edit replaces. The earlier prompts' bugs
 * are fixed and their exchanges unrelated to it (an omitted one's lines are
 * needed by no later prompt), so the oracle's check after a session asks for
 * these only.
 */
export function lastPromptLines(p: Project): string[] {
  const bug = p.bugs.at(-1);
  if (!bug) return [];
  return [...p.assertionLines.filter((l) => l.startsWith(`AssertionError [ERR_ASSERTION]: ${bug.module}.${bug.fn}(`)), bug.buggy];
}

/** Every string in a message the model sees: text blocks, tool-call arguments, tool results. */
export function visibleText(messages: readonly Loose[]): string {
  const out: string[] = [];
  const walk = (v: unknown) => {
    if (typeof v === "string") out.push(v);
    else if (Array.isArray(v)) v.forEach(walk);
    else if (v && typeof v === "object") Object.values(v).forEach(walk);
  };
  for (const m of messages) {
    if (typeof m.content === "string") out.push(m.content);
    else
      for (const block of m.content ?? []) {
        if (block.type === "text") out.push(block.text);
        else if (block.type === "toolCall") walk(block.arguments);
      }
  }
  return out.join("\n");
}

export interface OracleCheck {
  /** Needed lines neither in the window nor recalled. */
  missing: string[];
  /** Needed lines found only in a `recall` output. */
  recalled: string[];
}

/**
 * The oracle's check: each needed line must be in `window` (the messages of
 * the latest request, or the projection after the run), or in the output of a
 * `recall` call of any recorded request.
 */
export function checkOracle(window: readonly Loose[], requests: readonly ProviderRequest[], lines: string[] = oracleLines()): OracleCheck {
  const seen = visibleText(window);
  const recalls = requests.flatMap((r) => r.messages.filter((m: Loose) => m.role === "toolResult" && m.toolName === "recall"));
  const recalledText = visibleText(recalls);
  const missing: string[] = [];
  const recalled: string[] = [];
  for (const line of lines) {
    if (seen.includes(line)) continue;
    if (recalledText.includes(line)) recalled.push(line);
    else missing.push(line);
  }
  return { missing, recalled };
}

/**
 * Checks that the run did its work: the read, edit and grep calls succeeded,
 * each suite run failed fewer cases than the one before, and the last one
 * passed everything. Throws naming what went wrong (a tool missing, an edit
 * that did not apply), so a benchmark never reports figures of a broken run.
 */
export function checkRunWorked(branch: readonly Loose[], p: Project): void {
  const results = branch.filter((e) => e.type === "message" && e.message.role === "toolResult").map((e) => e.message);
  const text = (m: Loose) => (m.content ?? []).map((b: Loose) => (b.type === "text" ? b.text : "")).join("");
  for (const m of results) {
    if (m.toolName !== "bash" && m.isError) throw new Error(`long-run: ${m.toolName} failed: ${text(m).slice(0, 300)}`);
  }
  const fails = results.filter((m) => m.toolName === "bash").map((m) => Number(/^# fail (\d+)$/m.exec(text(m))?.[1] ?? Number.NaN));
  if (fails.some((f) => Number.isNaN(f))) throw new Error(`long-run: a suite run printed no "# fail N" line (is node on PATH?): ${JSON.stringify(fails)}`);
  for (let i = 1; i < fails.length; i++) {
    if (!(fails[i] < fails[i - 1])) throw new Error(`long-run: suite run ${i + 1} failed ${fails[i]} cases after ${fails[i - 1]}`);
  }
  if (fails.at(-1) !== 0) throw new Error(`long-run: the last suite run still fails ${fails.at(-1)} cases`);
  if (fails[0] !== p.assertionLines.length)
    throw new Error(`long-run: the first suite run failed ${fails[0]} cases, the project seeds ${p.assertionLines.length}`);
}

/**
 * Pi's settings for these runs (`defaultTools`: the `grep` tool is not active
 * by default), and `node` on the bash tool's PATH: the Node running this
 * process, so the suite runs where only node_modules/.bin/node exists.
 */
export const LONG_RUN_PI_SETTINGS = { defaultTools: ["read", "bash", "edit", "write", "grep"] };
export function putNodeOnPath(): void {
  const bin = dirname(process.execPath);
  const path = process.env.PATH ?? "";
  if (!path.split(delimiter).includes(bin)) process.env.PATH = `${bin}${delimiter}${path}`;
}

/**
 * A real Pi session set up for the long run (or, with `short`, the short
 * run): the project's files, the script, the oracle's classifier, the `grep`
 * tool, `node` on PATH. `options` add to or override the session's (guard
 * settings, extensions, the window …). Prompt with `prompt`.
 */
export async function startLongRun(
  options: SessionOptions & { short?: boolean; bugs?: number; extra?: number } = {},
): Promise<{ pi: PiSession; project: Project; lines: string[]; prompt: string }> {
  putNodeOnPath();
  const p = project(options.short ? 1 : (options.bugs ?? BUGS.length));
  const lines = oracleLines(p);
  const pi = await startSession({
    files: p.files,
    script: options.short ? shortRunScript(p) : longRunScript(p, options.extra ?? 0),
    classifier: oracleClassifier(lines),
    ...options,
    piSettings: { ...LONG_RUN_PI_SETTINGS, ...options.piSettings },
  });
  return { pi, project: p, lines, prompt: options.short ? SHORT_RUN_PROMPT : LONG_RUN_PROMPT };
}
