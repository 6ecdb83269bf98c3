// `/guard audit` inside real Pi (issue 19 part 2): the audit of this project's
// sessions (or all, or given paths) as text in print mode, as a
// `context-guard-audit` custom entry in json mode, as a screen in the TUI,
// and `--html FILE` writing the page. Sessions are made by Pi itself (print
// runs with the stand-in model in the project), beside a session of another
// project in the same session folder.
import assert from "node:assert/strict";
import { mkdirSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { writeSession } from "../harness/audit-sessions.ts";
import { pi, tempAgent } from "../harness/cli.ts";
import { piVersion, repoRoot } from "../harness/pi.ts";
import { startTui } from "../harness/tui.ts";

const faux = join(repoRoot, "tests", "fixtures", "faux-cli.ts");
const withPi = (dir: { agentDir: string; cwd: string }, ...args: string[]) => pi([...args, "-e", faux, "-e", repoRoot, "--model", "faux/faux-1"], dir);

type Loose = any;

/** The `entry_appended` records of one custom type on a json-mode stream. */
const entriesOf = (stdout: string, type: string): Loose[] =>
  stdout
    .split("\n")
    .filter(Boolean)
    .map((line) => JSON.parse(line))
    .filter((r) => r.type === "entry_appended" && r.entry?.customType === type)
    .map((r) => r.entry);

/** Two sessions of this project made by Pi, and one of another project under the same sessions folder. */
async function sessions(dir: { agentDir: string; cwd: string }): Promise<string> {
  await withPi(dir, "-p", "first prompt of the project");
  await withPi(dir, "-p", "second prompt of the project");
  const root = join(dir.agentDir, "sessions");
  const own = readdirSync(root).map((d) => join(root, d));
  assert.equal(own.length, 1, `Pi keeps this project's sessions in one folder: ${own}`);
  assert.equal(readdirSync(own[0]).filter((f) => f.endsWith(".jsonl")).length, 2);
  mkdirSync(join(root, "--elsewhere--"));
  await writeSession(join(root, "--elsewhere--", "other.jsonl"), { bytes: 20_000, outputChars: 5_000, callsPerRun: 1 });
  return own[0];
}

test(`Pi ${piVersion} print and json: /guard audit reads this project's sessions, all, or a path; --html writes the page`, async () => {
  const dir = tempAgent();
  try {
    const folder = await sessions(dir);

    const printed = (await withPi(dir, "-p", "--no-session", "/guard audit")).stdout;
    assert.match(printed, /"first prompt of the project"/);
    assert.match(printed, /"second prompt of the project"/);
    assert.doesNotMatch(printed, /other\.jsonl|\/generated/, "another project's session is not this project's");

    const project = entriesOf((await withPi(dir, "--mode", "json", "--no-session", "/guard audit")).stdout, "context-guard-audit");
    assert.equal(project.length, 1);
    assert.equal(project[0].type, "custom", "a custom entry: never in the model's context");
    assert.equal(project[0].data.sessions.length, 2);
    for (const s of project[0].data.sessions) assert.equal(s.cwd, dir.cwd);
    assert.ok(
      project[0].data.sessions.every((s: Loose) => s.wouldDo?.projection === "pi"),
      "measured on the running Pi's projection",
    );

    const all = entriesOf((await withPi(dir, "--mode", "json", "--no-session", "/guard audit all --html page.html")).stdout, "context-guard-audit");
    assert.equal(all[0].data.sessions.length, 3);
    assert.ok(all[0].data.sessions.some((s: Loose) => s.cwd === "/generated"));
    assert.equal(all[0].data.html, join(dir.cwd, "page.html"));
    assert.match(readFileSync(join(dir.cwd, "page.html"), "utf8"), /<html/i);

    const one = entriesOf(
      (await withPi(dir, "--mode", "json", "--no-session", `/guard audit "${join(folder, readdirSync(folder)[0])}"`)).stdout,
      "context-guard-audit",
    );
    assert.equal(one[0].data.sessions.length, 1);

    const wrong = entriesOf((await withPi(dir, "--mode", "json", "--no-session", "/guard audit --sideways")).stdout, "guard-report");
    assert.equal(wrong[0].data.kind, "warning");
    assert.match(wrong[0].data.text, /unknown option --sideways\. Usage: \/guard audit/);
    const missing = entriesOf((await withPi(dir, "--mode", "json", "--no-session", "/guard audit no/such/file.jsonl")).stdout, "context-guard-audit");
    assert.equal(missing[0].data.sessions.length, 0);
    assert.match(JSON.stringify(missing[0].data), /no such file or folder/);
  } finally {
    dir.remove();
  }
});

test(`Pi ${piVersion} TUI: /guard audit opens a screen of this project's sessions, which q closes`, async () => {
  const tui = await startTui({ width: 100, height: 30 });
  try {
    tui.submit("a prompt to audit 日本語 🚀");
    await tui.waitFor("(faux) ok", { timeoutMs: 20_000 });
    await tui.command("/guard audit");
    const pane = await tui.waitFor(/ Audit · 1 session · this project's sessions/);
    assert.match(pane, /q close/);
    assert.match(pane, /a prompt to audit/);
    // At 80, 100 and 120 columns (issue 28): no line wider, and a wrapped line keeps its indent (only the
    // session's name line, the total and blank lines start at the left edge).
    for (const width of [80, 100, 120]) {
      tui.resize(width, 30);
      await new Promise((r) => setTimeout(r, 300));
      const lines = (await tui.waitFor(/q close/)).split("\n");
      const body = lines.slice(
        lines.findIndex((l) => l.startsWith(" Audit · ")) + 1,
        lines.findIndex((l) => l.includes("q close")),
      );
      assert.ok(
        lines.every((l) => [...l].length <= width),
        `width ${width}:\n${lines.join("\n")}`,
      );
      for (const l of body) assert.match(l, /^(\s|\d{4}-\d\d-\d\d |\(no date\)|total: |$)/, `width ${width}: ${l}`);
    }
    tui.keys("q");
    const after = await tui.waitFor(/^(?![\s\S]*q close)/);
    assert.doesNotMatch(after, / Audit · /);
  } finally {
    tui.close();
  }
});
