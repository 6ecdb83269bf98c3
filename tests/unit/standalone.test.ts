// The repository stands alone: a clone holds every document its files cite.
// The guard was first written against a spec, two seeds (the /context
// contract, the original guard's user reference and measured results) and a
// style page that live beside the repository, not in it; a file that cites
// them sends a reader to text a clone does not have. What those documents
// said is in docs/ (GUARD.md, CONTEXT.md, AUDIT.md) or written out where it
// is used.
//
// Every tracked text file is read line by line, except Pi's installed
// versions (tests/pi-versions/), packages and the generated pkg/. The
// patterns are regular expressions whose own source text never matches them,
// so this file is read like any other.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..");

/** Folders whose files are not this repository's own writing. */
const SKIPPED = ["tests/pi-versions/", "node_modules/", "pkg/"];

/** Each citation of a document outside the repository, with what it names. */
const OUTSIDE: [RegExp, string][] = [
  // Case-sensitive, so the repository's own upper-case GUARD page passes; so does a docs/ path.
  [/(?<!docs\/)(?<![\w-])guard\.md/, "the outside guard spec"],
  [/seed 00\d/i, "a seed"],
  [/seeds\//, "the seeds' folder"],
  [/spec\/guard|spec\/product/, "the outside spec folder"],
  [/(?<![\w-])product\.md/, "the outside product page"],
  [/(?<![\w-])STYLE\.md/, "the outside style page"],
  [/(?<![\w-])REFERENCE\.md/, "the original guard's reference"],
  [/(?<![\w-])RESULTS\.md/, "the original guard's results"],
  [/pi-offline\.md/, "the outside offline-Pi page"],
  [/\.\.\/shared/, "a folder beside the repository"],
];

function trackedFiles(): string[] {
  const out = execFileSync("git", ["ls-files", "-z"], { cwd: root, encoding: "utf8", maxBuffer: 64 * 1024 * 1024 });
  return out
    .split("\0")
    .filter((f) => f !== "")
    .filter((f) => !SKIPPED.some((dir) => f.startsWith(dir) || f.includes(`/${dir}`)));
}

/** The file's text, or undefined for a binary file or one gone from the working tree. */
function textOf(file: string): string | undefined {
  let bytes: Buffer;
  try {
    bytes = readFileSync(join(root, file));
  } catch {
    return undefined;
  }
  return bytes.subarray(0, 8000).includes(0) ? undefined : bytes.toString("utf8");
}

/** `file:line: what it cites: the line` for every line that cites a document outside the repository. */
function outsideCitations(file: string, text: string): string[] {
  const found: string[] = [];
  text.split("\n").forEach((line, i) => {
    for (const [pattern, what] of OUTSIDE) {
      if (pattern.test(line)) {
        found.push(`${file}:${i + 1}: ${what}: ${line.trim().slice(0, 160)}`);
        break;
      }
    }
  });
  return found;
}

test("the patterns find each kind of outside citation and pass the repository's own docs", () => {
  const cites = (...parts: string[]) => outsideCitations("x", parts.join("")).length > 0;
  for (const parts of [
    ["(guard", ".md §7)"],
    ["seed", " 001's size.ts"],
    ["Seed", " 000"],
    ["..", "/shared/x.txt"],
    ["seeds", "/000_x.txt"],
    ["spec/", "product"],
    ["spec/", "guard"],
    ["product", '.md "Budgets"'],
    ["STYLE", ".md"],
    ["REFERENCE", '.md "Data sent to Jev"'],
    ["RESULTS", ".md"],
    ["pi-offline", ".md"],
  ]) {
    assert.ok(cites(...parts), parts.join(""));
  }
  for (const parts of [
    ["docs/GUARD", '.md, "Mid-run checkpoints"'],
    ["GUARD", ".md"],
    ["docs/guard", ".md"],
    ["the original guard's default was 4"],
    ["seed: u64"],
  ]) {
    assert.ok(!cites(...parts), parts.join(""));
  }
});

test("no tracked file cites a document outside the repository", () => {
  const files = trackedFiles();
  assert.ok(files.length > 100, `git ls-files listed ${files.length} files`);
  const found = files.flatMap((file) => {
    const text = textOf(file);
    return text === undefined ? [] : outsideCitations(file, text);
  });
  assert.deepEqual(found, [], `cite what the document said, or where docs/ says it:\n${found.join("\n")}`);
});
