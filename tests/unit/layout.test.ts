// The extension's layout: `report/` (/context) and `guard/` over a shared base
// at the top of extension/ (docs/DESIGN.md, "Module map"). Imports go one way:
// no circle, the two parts never import each other, and the base imports
// neither. `index.ts` is Pi's entry point, above everything: it registers both
// parts, and nothing imports it. `audit/` is the audit, run by the
// `pi-context-guard audit` command (bin/ → audit/cli.ts) and by `/guard audit`
// inside Pi (index.ts → audit/in-pi.ts, handed to guard/ as a callback): it
// may read the base and both parts; outside it only index.ts imports it, and
// only in-pi.ts; nothing imports cli.ts, the command line's own shell.
//
// The graph is every relative import of extension/**/*.ts, type-only imports
// included (a type import still ties one module's shape to another's). It is
// read with TypeScript's own pre-processor, so a multi-line or side-effect
// import counts like any other.
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, posix, relative, sep } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import ts from "typescript";

const extensionDir = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "extension");

/** The parts a file can belong to; the folder decides. */
type Part = "entry" | "base" | "report" | "guard" | "audit";

/** Module → the modules it imports (paths relative to extension/, `/`-separated). */
type Graph = Map<string, string[]>;

function tsFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((d) => {
    const path = join(dir, d.name);
    if (d.isDirectory()) return tsFiles(path);
    return d.name.endsWith(".ts") ? [path] : [];
  });
}

/** The import graph of extension/: relative imports that land inside it (pkg/ and packages are leaves). */
function importGraph(): Graph {
  const graph: Graph = new Map();
  for (const file of tsFiles(extensionDir)) {
    const from = relative(extensionDir, file).split(sep).join("/");
    const info = ts.preProcessFile(readFileSync(file, "utf8"), true, true);
    const targets = info.importedFiles
      .map((i) => i.fileName)
      .filter((name) => name.startsWith("."))
      .map((name) => posix.normalize(posix.join(posix.dirname(from), name)))
      .filter((to) => !to.startsWith("../"));
    graph.set(from, [...new Set(targets)]);
  }
  return graph;
}

function partOf(module: string): Part | undefined {
  if (module === "index.ts") return "entry";
  // generated/: the boundary's types from the Rust structs (scripts/gen-types.sh), types only, under the base.
  if (!module.includes("/") || module.startsWith("generated/")) return "base";
  const folder = module.slice(0, module.indexOf("/"));
  return folder === "report" || folder === "guard" || folder === "audit" ? folder : undefined;
}

/** Every import the layout forbids, as `a → b: why`. */
function wrongImports(graph: Graph): string[] {
  const wrong: string[] = [];
  for (const [from, targets] of graph) {
    const part = partOf(from);
    if (part === undefined) wrong.push(`${from}: in a folder that is not report/, guard/ or audit/ (add the folder to the layout first)`);
    for (const to of targets) {
      const target = partOf(to);
      if (target === "entry") wrong.push(`${from} → ${to}: nothing imports the entry point`);
      else if (to === "audit/cli.ts") wrong.push(`${from} → ${to}: nothing imports the command line's shell (bin/ runs it)`);
      else if (target === "audit" && part !== "audit" && !(part === "entry" && to === "audit/in-pi.ts")) {
        wrong.push(`${from} → ${to}: only audit/ imports audit/, and index.ts its in-pi.ts (/guard audit)`);
      } else if (part === "base" && (target === "report" || target === "guard")) wrong.push(`${from} → ${to}: the base imports neither report/ nor guard/`);
      else if (part === "report" && target === "guard") wrong.push(`${from} → ${to}: report/ never imports guard/ (pass a callback from index.ts)`);
      else if (part === "guard" && target === "report") wrong.push(`${from} → ${to}: guard/ never imports report/`);
    }
  }
  return wrong;
}

/**
 * One circle through each knot of the graph (a strongly connected part with more than one module, or a
 * module importing itself), as `a → b → a`; empty when imports go one way.
 */
function findCycles(graph: Graph): string[] {
  // Tarjan's strongly connected components.
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const knots: Set<string>[] = [];
  const connect = (module: string) => {
    index.set(module, index.size);
    low.set(module, index.get(module) as number);
    stack.push(module);
    for (const to of graph.get(module) ?? []) {
      if (!index.has(to)) {
        connect(to);
        low.set(module, Math.min(low.get(module) as number, low.get(to) as number));
      } else if (stack.includes(to)) {
        low.set(module, Math.min(low.get(module) as number, index.get(to) as number));
      }
    }
    if (low.get(module) !== index.get(module)) return;
    const knot = new Set<string>();
    let top: string | undefined;
    do {
      top = stack.pop() as string;
      knot.add(top);
    } while (top !== module);
    if (knot.size > 1 || graph.get(module)?.includes(module)) knots.push(knot);
  };
  for (const module of [...graph.keys()].sort()) if (!index.has(module)) connect(module);

  // Inside a knot every module reaches every other: walk from its first module back to it.
  return knots.map((knot) => {
    const first = [...knot].sort()[0];
    const cameFrom = new Map<string, string>();
    const queue = [first];
    while (queue.length) {
      const module = queue.shift() as string;
      for (const to of graph.get(module) ?? []) {
        if (to === first) {
          const path = [first];
          for (let at = module; at !== first; at = cameFrom.get(at) as string) path.splice(1, 0, at);
          return [...path, first].join(" → ");
        }
        if (knot.has(to) && !cameFrom.has(to)) {
          cameFrom.set(to, module);
          queue.push(to);
        }
      }
    }
    return [...knot].join(", "); // unreachable: a knot always closes
  });
}

test("the extension's imports have no circle", () => {
  const cycles = findCycles(importGraph());
  assert.deepEqual(cycles, [], `import circles:\n${cycles.join("\n")}`);
});

test("report/ and guard/ never import each other, the base imports neither, nothing imports index.ts", () => {
  const wrong = wrongImports(importGraph());
  assert.deepEqual(wrong, [], `imports against the layout:\n${wrong.join("\n")}`);
});

test("the graph is read from the tree: both parts, the base and their imports are there", () => {
  const graph = importGraph();
  const parts = new Set([...graph.keys()].map(partOf));
  assert.deepEqual([...parts].sort(), ["audit", "base", "entry", "guard", "report"]);
  // Guards against a reader that finds no imports at all (which would pass the two tests above).
  assert.ok(graph.get("index.ts")?.includes("report/index.ts"), `index.ts imports: ${graph.get("index.ts")}`);
  assert.ok(graph.get("index.ts")?.includes("guard/index.ts"), `index.ts imports: ${graph.get("index.ts")}`);
});

test("the checks name what they find", () => {
  const graph: Graph = new Map([
    ["index.ts", ["report/index.ts"]],
    ["core.ts", ["guard/wasm.ts"]],
    ["report/index.ts", ["report/view.ts"]],
    ["report/view.ts", ["report/commands.ts", "guard/figures.ts"]],
    ["report/commands.ts", ["report/view.ts"]],
    ["guard/wasm.ts", ["core.ts", "report/types.ts"]],
    ["guard/figures.ts", []],
    ["report/types.ts", []],
    ["stray/file.ts", ["index.ts"]],
    ["audit/cli.ts", ["guard/wasm.ts", "report/types.ts", "core.ts"]],
    ["audit/in-pi.ts", ["audit/run.ts", "audit/cli.ts"]],
  ]);
  assert.deepEqual(findCycles(graph).sort(), ["core.ts → guard/wasm.ts → core.ts", "report/commands.ts → report/view.ts → report/commands.ts"]);
  graph.set("core.ts", []);
  graph.set("report/types.ts", ["report/types.ts"]);
  assert.deepEqual(findCycles(graph).sort(), ["report/commands.ts → report/view.ts → report/commands.ts", "report/types.ts → report/types.ts"]);
  graph.set("report/types.ts", []);
  graph.set("guard/figures.ts", ["audit/run.ts"]);
  graph.set("index.ts", ["report/index.ts", "audit/in-pi.ts", "audit/run.ts"]);
  assert.deepEqual(wrongImports(graph), [
    "index.ts → audit/run.ts: only audit/ imports audit/, and index.ts its in-pi.ts (/guard audit)",
    "report/view.ts → guard/figures.ts: report/ never imports guard/ (pass a callback from index.ts)",
    "guard/wasm.ts → report/types.ts: guard/ never imports report/",
    "guard/figures.ts → audit/run.ts: only audit/ imports audit/, and index.ts its in-pi.ts (/guard audit)",
    "stray/file.ts: in a folder that is not report/, guard/ or audit/ (add the folder to the layout first)",
    "stray/file.ts → index.ts: nothing imports the entry point",
    "audit/in-pi.ts → audit/cli.ts: nothing imports the command line's shell (bin/ runs it)",
  ]);
});

/** A file's imports that load a module at run time (not `import type`, not only type specifiers). */
function valueImports(file: string): string[] {
  const source = ts.createSourceFile(file, readFileSync(file, "utf8"), ts.ScriptTarget.Latest);
  const out: string[] = [];
  for (const statement of source.statements) {
    if (ts.isImportDeclaration(statement)) {
      const clause = statement.importClause;
      const named = clause?.namedBindings && ts.isNamedImports(clause.namedBindings) ? clause.namedBindings.elements : undefined;
      const typesOnly = clause?.isTypeOnly || (clause && !clause.name && named !== undefined && named.length > 0 && named.every((e) => e.isTypeOnly));
      if (!typesOnly) out.push((statement.moduleSpecifier as ts.StringLiteral).text);
    } else if (ts.isExportDeclaration(statement) && statement.moduleSpecifier && !statement.isTypeOnly) {
      out.push((statement.moduleSpecifier as ts.StringLiteral).text);
    }
  }
  return out;
}

test("the audit's command line loads no Pi package: an installed audit runs where no Pi is", () => {
  // bin/ → audit/cli.ts, and every module it loads at run time. Pi's packages are peers, reached only
  // through Pi's loader inside an extension; a value import of one on this path fails without Pi.
  const seen = new Set<string>();
  const queue = ["audit/cli.ts"];
  const wrong: string[] = [];
  while (queue.length) {
    const module = queue.shift() as string;
    if (seen.has(module)) continue;
    seen.add(module);
    for (const spec of valueImports(join(extensionDir, module))) {
      if (spec.startsWith("@earendil-works/")) wrong.push(`${module} loads ${spec}`);
      if (!spec.startsWith(".")) continue;
      const to = posix.normalize(posix.join(posix.dirname(module), spec));
      if (!to.startsWith("../") && to.endsWith(".ts")) queue.push(to);
    }
  }
  assert.ok(seen.size > 5, [...seen].join(", "));
  assert.deepEqual(wrong, [], `on the command line's path:\n${wrong.join("\n")}`);
});
