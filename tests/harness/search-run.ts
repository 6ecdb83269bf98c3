// A search-and-read run, scripted, for the economy suite
// (tests/bench/economy.bench.ts): an audit that greps a folder for the
// handlers that write to the ledger, then reads every one of them. Its tool
// outputs are many and of about the same size (30 reads of 9–12 KB, some
// 2.3–3k tokens each), unlike the "fix all failing tests" run of
// long-run.ts, whose test logs dwarf its reads.
//
// The project is generated and the tools are real (`bash` runs grep, Pi's
// `read` reads the files). Each handler builds a ledger entry from a field
// table and writes it; one in three writes it without first checking that the
// user may. The ORACLE is each unchecked write line (the lines the audit's
// answer is about; the answer cites them by file and line number, not
// verbatim, so they count only where an output still holds them). The
// long run's `oracleClassifier` keeps exactly the chunks holding one.
import type { Loose } from "./pi.ts";
import type { Step } from "./session.ts";

/** The handlers, one file each, in the order the grep lists them (sorted). */
const HANDLERS = [
  "accounts",
  "adjustments",
  "approvals",
  "audits",
  "balances",
  "batches",
  "budgets",
  "cards",
  "chargebacks",
  "closings",
  "credits",
  "currencies",
  "deposits",
  "disputes",
  "exports",
  "fees",
  "holds",
  "imports",
  "interest",
  "invoices",
  "journals",
  "limits",
  "payouts",
  "periods",
  "refunds",
  "reversals",
  "statements",
  "transfers",
  "vendors",
  "withdrawals",
];

const TYPES = ["decimal(12,2)", "varchar(64)", "timestamp", "char(3)", "bigint", "boolean"];

export interface SearchProject {
  files: Record<string, string>;
  /** Every handler's path, sorted (what the grep prints). */
  paths: string[];
  /** The handlers that write without a check: their path, the line and its 1-based number. */
  unchecked: { path: string; line: string; at: number }[];
}

export const SEARCH_COMMAND = 'grep -rl "ledger.write" src/handlers | sort';
export const SEARCH_PROMPT = "Audit src/handlers: which handlers write to the ledger without checking ctx.user.canWrite first? Read each one.";

/**
 * The generated project: `count` handlers (30 at most) of 9–11 KB, every third one (from the second)
 * without its check.
 */
export function searchProject(count = HANDLERS.length): SearchProject {
  const files: Record<string, string> = {
    "package.json": `${JSON.stringify({ name: "ledger-service", version: "2.3.1", type: "module" }, null, 2)}\n`,
    "README.md": "# ledger-service\n\nHTTP handlers of the ledger: one file per resource under src/handlers.\n",
    "src/ledger.js": "export const ledger = { async write(ctx, kind, entry) { ctx.log(kind, entry.id); } };\n",
  };
  const paths: string[] = [];
  const unchecked: SearchProject["unchecked"] = [];
  HANDLERS.slice(0, count).forEach((name, i) => {
    const path = `src/handlers/${name}.js`;
    // 78–90 fields: files of about the same size, not all equal.
    const count = 78 + ((i * 7) % 13);
    const field = (k: number) =>
      `  { field: "${name}_${TYPES[k % TYPES.length].replace(/\W.*/, "")}_${String(k).padStart(2, "0")}", type: "${TYPES[k % TYPES.length]}", required: ${k % 3 !== 0}, doc: "${name} field ${k}, from the v2 export" },`;
    const fields = Array.from({ length: count }, (_, k) => field(k));
    const half = count >> 1;
    const write = `  await ledger.write(ctx, "${name}.post", entry);`;
    const checked = i % 3 !== 1;
    const lines = [
      `// ${name}: the ${name} resource of the ledger service (POST /${name}).`,
      'import { ledger } from "../ledger.js";',
      'import { buildEntry, forbidden } from "../entry.js";',
      "",
      "const FIELDS = [",
      ...fields.slice(0, half),
      "];",
      "",
      `/** Posts one ${name} entry. */`,
      "export async function handle(ctx, input) {",
      "  const entry = buildEntry(input, FIELDS);",
      ...(checked ? [`  if (!ctx.user.canWrite("${name}")) throw forbidden("${name}");`] : []),
      write,
      "  return { ok: true, id: entry.id };",
      "}",
      "",
      "export const ARCHIVED_FIELDS = [",
      ...fields.slice(half),
      "];",
      "",
    ];
    files[path] = lines.join("\n");
    paths.push(path);
    if (!checked) unchecked.push({ path, line: write, at: lines.indexOf(write) + 1 });
  });
  return { files, paths, unchecked };
}

/** The lines the audit needs: each unchecked write. */
export function searchOracle(p: SearchProject): string[] {
  return p.unchecked.map((u) => u.line);
}

/** The model's turns: the grep, one read per handler, the answer (32 requests). */
export function searchScript(p: SearchProject): Step[] {
  return [
    { say: "Finding the handlers that write to the ledger.", calls: [{ tool: "bash", args: { command: SEARCH_COMMAND } }] },
    ...p.paths.map((path, i): Step => ({ say: i === 0 ? `${p.paths.length} handlers. Reading each.` : "Next.", calls: [{ tool: "read", args: { path } }] })),
    [
      `${p.unchecked.length} of ${p.paths.length} handlers write without checking ctx.user.canWrite:`,
      ...p.unchecked.map((u) => `- ${u.path}, line ${u.at}`),
    ].join("\n"),
  ];
}

/**
 * Short questions after the audit, each answered from what it read (`tools: false`), or after one small
 * grep: the shape of work that reads a lot and then talks about it (issue 26).
 */
export function followUps(p: SearchProject, n: number): { text: string; steps: Step[] }[] {
  const asked = [
    { text: "Which of those is the most urgent to fix?", steps: [`${p.unchecked[0]?.path ?? "none"}: it is the first one a request reaches.`] },
    {
      text: "How many handlers import the ledger at all?",
      steps: [
        { say: "Counting.", calls: [{ tool: "bash", args: { command: 'grep -l "import { ledger }" src/handlers/*.js | wc -l' } }] },
        `${p.paths.length} of them.`,
      ],
    },
    { text: "Would one middleware cover them all?", steps: ["Yes: a check of ctx.user.canWrite before every handler's write would."] },
    { text: "Summarize the fix in one line.", steps: [`Check ctx.user.canWrite in ${p.unchecked.map((u) => u.path).join(", ")}.`] },
  ];
  return asked.slice(0, n);
}

/**
 * Checks that the run did its work: the grep listed every handler, and every
 * read succeeded and returned its file. Throws naming what went wrong.
 */
export function checkSearchWorked(branch: readonly Loose[], p: SearchProject): void {
  const results = branch.filter((e) => e.type === "message" && e.message.role === "toolResult").map((e) => e.message);
  const text = (m: Loose) => (m.content ?? []).map((b: Loose) => (b.type === "text" ? b.text : "")).join("");
  const grep = results.find((m) => m.toolName === "bash");
  if (!grep || text(grep).trim() !== p.paths.join("\n")) throw new Error(`search-run: the grep listed ${JSON.stringify(grep && text(grep).slice(0, 300))}`);
  const reads = results.filter((m) => m.toolName === "read");
  if (reads.length !== p.paths.length) throw new Error(`search-run: ${reads.length} reads, ${p.paths.length} handlers`);
  reads.forEach((m, i) => {
    const first = p.files[p.paths[i]].split("\n")[0];
    if (m.isError || !text(m).includes(first)) throw new Error(`search-run: reading ${p.paths[i]} gave ${text(m).slice(0, 300)}`);
  });
}
