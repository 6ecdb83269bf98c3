// `pi-context-guard audit` on session files written by real Pi (CG_PI picks
// 1.6.0 or 1.3.0), with and without the guard, its figures checked against
// the session Pi held; bad input files; a generated 200 MB session under a
// 512 MB heap.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { appendFileSync, cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { test } from "node:test";
import { writeSession } from "../harness/audit-sessions.ts";
import { keepChunks } from "../harness/classifier.ts";
import { fixtureRepo } from "../harness/fixture-repo.ts";
import { entriesOf, textOf, toolResultEntry } from "../harness/inspect.ts";
import { type Loose, piVersion, repoRoot } from "../harness/pi.ts";
import { png } from "../harness/png.ts";
import { startSession } from "../harness/session.ts";
import "../../extension/core.ts"; // instantiates the wasm module
import * as wasm from "../../pkg/context_guard.js";

const bin = join(repoRoot, "bin", "pi-context-guard.mjs");
const node = process.execPath;

function audit(args: string[], heapMb?: number, env: NodeJS.ProcessEnv = {}) {
  const flags = heapMb ? [`--max-old-space-size=${heapMb}`] : [];
  const r = spawnSync(node, [...flags, bin, "audit", ...args], { encoding: "utf8", maxBuffer: 64 << 20, env: { ...process.env, ...env } });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** A real Pi session with a large search and a read, persisted in `dir`; returns what Pi held. */
async function recorded(dir: string, guard: boolean) {
  const pi = await startSession({
    files: fixtureRepo(),
    sessionDir: dir,
    // Keeps the first chunk of each output: the search is distilled.
    classifier: keepChunks(() => [1]),
    guardSettings: guard ? undefined : { enabled: false },
    script: [
      { tool: "bash", args: { command: "rg -n status src/services" }, id: "grep1" },
      { tool: "read", args: { path: "src/lib/status.ts" }, id: "read1" },
      "Found them.",
    ],
  });
  try {
    await pi.prompt("Which services retry on 503?");
    if (guard) {
      // The model recalls the distilled search by the id in its note, as a model would.
      pi.script((request) => {
        const id = request.messages.map((m: Loose) => /recall\(\{"entryId":"([^"]+)"\}\)/.exec(m.role === "toolResult" ? textOf(m) : "")?.[1]).find(Boolean);
        return { tool: "recall", args: { entryId: id ?? "" }, id: "rc0" };
      }, "Here it is.");
      await pi.prompt("Show the search again.");
    }
    pi.script("You are welcome.");
    await pi.prompt("Thanks.");
    const branch = pi.branch();
    await pi.prompt("/context");
    const context = pi.notifications.at(-1)?.message ?? "";
    await pi.prompt("/guard details");
    const guardText = pi.notifications.at(-1)?.message ?? "";
    return {
      branch,
      context,
      guardText,
      file: pi.session.sessionManager.getSessionFile() as string,
      grep: toolResultEntry(branch, "grep1"),
      read: toolResultEntry(branch, "read1"),
    };
  } finally {
    await pi.dispose();
  }
}

test(`Pi ${piVersion}: audit figures of real sessions, with and without the guard`, async () => {
  const dir = mkdtempSync(join(tmpdir(), "cg-audit-"));
  try {
    const on = await recorded(join(dir, "on"), true);
    const off = await recorded(join(dir, "off"), false);
    const r = audit(["--json", dir]);
    assert.equal(r.code, 0, r.stderr);
    const out = JSON.parse(r.stdout);
    assert.equal(out.version, 1);
    assert.equal(out.sessions.length, 2);
    for (const [held, guarded] of [
      [on, true],
      [off, false],
    ] as const) {
      const s = out.sessions.find((x: Loose) => x.path === held.file);
      assert.ok(s, `${held.file} audited`);
      // What /context said of the same branch: requests with usage, peak and last context.
      const series = /Context per request: (\d+) on this branch, first (\S+), peak (\S+) \(request \d+\), last (\S+)/.exec(held.context);
      assert.ok(series, held.context);
      assert.equal(s.branch.contextSeries.length, Number(series[1]));
      assert.deepEqual(
        [s.branch.contextSeries[0], s.branch.peakContext, s.branch.finalContext].map((n: number) => wasm.shortCount(n)),
        [series[2], series[3], series[4]],
      );
      // What /guard said: the records' savings on this branch.
      const saved = /on this branch in all: ~\S+ tokens \((\S+) chars\)/.exec(held.guardText);
      assert.ok(saved, held.guardText);
      assert.equal(wasm.shortCount(s.branch.guardSavedChars), saved[1]);
      if (guarded) assert.ok(s.branch.guardSavedChars > 0);
      // The recall after the distill, and what it brought back.
      const back = held.branch.find((e: Loose) => e.type === "message" && e.message.role === "toolResult" && e.message.toolCallId === "rc0");
      assert.equal(s.branch.recallsAfterDistill, guarded ? 1 : 0);
      assert.equal(s.branch.recalledChars, guarded ? textOf(back.message).length : 0);
      if (guarded) assert.ok(s.branch.recalledChars > 1000, "the recall brought the search back");
      const assistants = held.branch.filter((e: Loose) => e.type === "message" && e.message.role === "assistant");
      assert.equal(s.branch.requests, assistants.length);
      assert.equal(s.branch.toolOutput.bash.chars, textOf(held.grep.message).length);
      assert.equal(s.branch.toolOutput.read.chars, textOf(held.read.message).length);
      const records = entriesOf(held.branch, "custom", "context-guard");
      assert.equal(s.branch.guardRecords, records.length);
      const keptLarge = records.flatMap((e: Loose) => e.data.results).filter((x: Loose) => x.outcome !== "kept" && x.kind === "large");
      assert.equal(
        s.branch.keptOut.large ?? 0,
        keptLarge.reduce((n: number, x: Loose) => n + x.beforeChars - x.afterChars, 0),
      );
      const ids = s.wouldDo.candidates.map((c: Loose) => c.entryId);
      if (guarded) {
        assert.ok(records.length >= 1, "the guard recorded a pass");
        assert.ok(!ids.includes(held.grep.id), "a distilled output is no candidate");
      } else {
        assert.equal(records.length, 0);
        const grep = s.wouldDo.candidates.find((c: Loose) => c.entryId === held.grep.id);
        assert.equal(grep.kind, "large");
        assert.equal(grep.chars, textOf(held.grep.message).length);
        assert.ok(grep.rewriteChars >= grep.chars, "the rewrite starts at the edited output");
        assert.equal(
          s.wouldDo.upper.chars,
          s.wouldDo.candidates.filter((c: Loose) => c.kind !== "exchange").reduce((n: number, c: Loose) => n + c.chars, 0),
        );
      }
    }
    // What names a session for a person: Pi's header (start, folder) and the first prompt; the guard on where its records are.
    for (const [held, guarded] of [
      [on, true],
      [off, false],
    ] as const) {
      const s = out.sessions.find((x: Loose) => x.path === held.file);
      const header = JSON.parse(readFileSync(held.file, "utf8").split("\n")[0]);
      assert.equal(s.startedAt, header.timestamp);
      assert.equal(s.cwd, header.cwd);
      assert.equal(s.firstPrompt, "Which services retry on 503?");
      assert.equal(s.guardOn, guarded);
      // Tokens as Pi estimates them (characters / 4) of what the records kept out and the recall brought back.
      if (guarded) {
        const kept = Object.values(s.branch.keptOut as Record<string, number>).reduce((n, c) => n + c, 0);
        assert.equal(s.estimate.did.keptTokens, kept / 4);
        assert.equal(s.estimate.did.recalledTokens, s.branch.recalledChars / 4);
        assert.ok(s.estimate.did.sparedTokens > 0, "the requests after the distill sent less");
      } else assert.equal(s.estimate.did, null);
      assert.equal(s.estimate.would.candidateTokens, s.wouldDo.upper.chars / 4);
    }
    // The text form: each session named by its date, folder and first prompt, what the guard did, and the total.
    const t = audit([dir], undefined, { TZ: "UTC" });
    assert.equal(t.code, 0);
    for (const held of [on, off]) {
      const header = JSON.parse(readFileSync(held.file, "utf8").split("\n")[0]);
      const date = `${header.timestamp.slice(0, 10)} ${header.timestamp.slice(11, 16)}`;
      assert.ok(t.stdout.includes(`${date}  ${basename(header.cwd)}  "Which services retry on 503?"`), t.stdout);
    }
    assert.match(
      t.stdout,
      /^ {2}The guard kept \S+ tokens of tool output out of the context at \d+ run (end or checkpoint|ends and checkpoints), so the requests after that sent \S+ fewer tokens in all\. .*The agent asked for removed output back once/m,
    );
    assert.match(t.stdout, /^total: 2 sessions \(1 with the guard, 1 without\)/m);
    assert.match(t.stdout, /With the guard against without, per session on average: /);
    const page = join(dir, "audit.html");
    const written = audit(["--html", page, dir]);
    assert.equal(written.code, 0);
    assert.match(written.stderr, new RegExp(`^wrote the page: ${page.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}$`, "m"), "where the page went");
    // Wrong usage, read by parseArgs: a clear message and exit code 2.
    for (const [args, message] of [
      [["--html"], /^--html needs a file name\nusage: /],
      [["--html", "--json"], /^--html needs a file name\nusage: /],
      [["--sideways"], /^unknown option --sideways\nusage: /],
    ] as const) {
      const wrong = audit([...args]);
      assert.equal(wrong.code, 2, `${args.join(" ")}: ${wrong.stderr}`);
      assert.match(wrong.stderr, message);
    }
    const html = readFileSync(page, "utf8");
    assert.equal((html.match(/<svg class="chart" /g) ?? []).length, 2, "a context chart per session");
    assert.equal((html.match(/<article class="session /g) ?? []).length, 2);
    assert.match(html, /<div class="group with"><h2>With the guard \(1 session\)<\/h2>/);
    assert.match(html, /<div class="group without"><h2>Without the guard \(1 session\)<\/h2>/);
    assert.match(html, /<title>the guard edited the context after request \d+<\/title>/, "the guard's edits are marked");
    assert.match(html, /<span>the guard removed or shortened tool output here, between two requests<\/span>/, "and explained");
    assert.doesNotMatch(html, /<script|https?:\/\/(?!www\.w3\.org)/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test(`Pi ${piVersion}: a real session with a compaction, an image and a branch left behind`, async () => {
  const dir = mkdtempSync(join(tmpdir(), "cg-audit-tree-"));
  const pi = await startSession({
    files: { "big.txt": "line of the big file\n".repeat(2000) },
    sessionDir: dir,
    piSettings: { compaction: { keepRecentTokens: 50 } },
    guardSettings: { enabled: false },
    script: [
      { tool: "bash", args: { command: "cat big.txt" } },
      "It is a big file.",
      "Small answer.",
      // The summary (a second summary request, when Pi cuts inside a turn, gets the stand-in's default).
      "## Goal\nSummarized.",
    ],
  });
  try {
    writeFileSync(join(pi.cwd, "shot.png"), png(1280, 960));
    await pi.prompt("Show big.txt");
    await pi.prompt(`Anything else? ${"Tell me more. ".repeat(30)}`);
    await pi.prompt("/context compact");
    pi.script({ tool: "read", args: { path: "shot.png" }, id: "img" }, "A grey screenshot.", "Second.", "Third.", "Fourth.");
    await pi.prompt("Look at shot.png");
    await pi.prompt("Second question");
    const second = pi.branch().at(-1);
    await pi.prompt("Third question");
    // Back to the second answer: the third exchange stays in the file, off the branch.
    await pi.session.navigateTree(second.id, { summarize: false });
    await pi.prompt("Fourth question");
    const branch = pi.branch();
    const image = toolResultEntry(branch, "img");
    await pi.prompt("/context");
    const context = pi.notifications.at(-1)?.message ?? "";
    const file = pi.session.sessionManager.getSessionFile() as string;
    const all = pi.session.sessionManager.getEntries();

    const r = audit(["--json", file]);
    assert.equal(r.code, 0, r.stderr);
    const s = JSON.parse(r.stdout).sessions[0];
    assert.deepEqual(s.warnings, []);
    const replies = (entries: Loose[]) => entries.filter((e: Loose) => e.type === "message" && e.message.role === "assistant").length;
    assert.equal(s.branch.requests, replies(branch));
    assert.ok(s.file, "the file holds more than the branch");
    assert.equal(s.file.requests, replies(all));
    assert.ok(s.file.requests > s.branch.requests);
    assert.equal(s.branch.compactions, 1);
    assert.match(context, /Compactions: 1 on this branch/);
    const series = /Context per request: (\d+) on this branch, first (\S+), peak (\S+) \(request \d+\), last (\S+)/.exec(context);
    assert.ok(series, context);
    assert.equal(s.branch.contextSeries.length, Number(series[1]));
    assert.deepEqual(
      [s.branch.contextSeries[0], s.branch.peakContext, s.branch.finalContext].map((n: number) => wasm.shortCount(n)),
      [series[2], series[3], series[4]],
    );
    // The image is 3 replies old on the branch: the lower bound, with no classifier.
    assert.equal(s.wouldDo.lower.items, 1);
    const shot = s.wouldDo.candidates.find((c: Loose) => c.kind === "image");
    assert.equal(shot.entryId, image.id);
    assert.equal(s.wouldDo.lower.chars, shot.chars);
    assert.ok(shot.chars > 0 && shot.rewriteChars >= shot.chars, JSON.stringify(shot));
    // The page marks the compaction on the session's context chart, before the request that followed it.
    const page = join(dir, "tree.html");
    assert.equal(audit(["--html", page, file]).code, 0);
    const html = readFileSync(page, "utf8");
    assert.match(html, new RegExp(`<title>Pi compacted the conversation after request ${s.branch.compactionsAt[0]}</title>`));
    assert.match(html, /<span>Pi compacted the conversation here \(older messages replaced by a summary\)<\/span>/, "and the legend says what the mark is");
    // The old image, in words: removed without asking, in tokens.
    assert.match(
      html,
      new RegExp(
        `<p class="would">The guard would remove 1 old image \\(${(shot.chars / 4 / 1000).toFixed(1).replace(".", "\\.")}k tokens\\) without asking anyone`,
      ),
    );
  } finally {
    await pi.dispose();
    rmSync(dir, { recursive: true, force: true });
  }
});

test("bad input: a clear message per file, the others audited, exit 0 with one read and 1 with none", async () => {
  const dir = mkdtempSync(join(tmpdir(), "cg-audit-bad-"));
  try {
    const good = join(dir, "good.jsonl");
    await writeSession(good, { bytes: 50_000, outputChars: 5_000, callsPerRun: 2 });
    const cut = join(dir, "cut.jsonl");
    writeFileSync(cut, readFileSync(good));
    appendFileSync(cut, '{"type":"message","id":"x1","parentId":"e1","message":{"role":"assi');
    const unknown = join(dir, "unknown.jsonl");
    writeFileSync(unknown, readFileSync(good));
    appendFileSync(unknown, '{"type":"hologram","id":"h1","parentId":"e2"}\n');
    writeFileSync(join(dir, "notes.jsonl"), '{"hello":"world"}\n');
    writeFileSync(join(dir, "old.jsonl"), '{"type":"session","version":2,"id":"o","cwd":"/"}\n');
    writeFileSync(join(dir, "new.jsonl"), '{"type":"session","version":4,"id":"n","cwd":"/"}\n');
    const r = audit(["--json", dir]);
    assert.equal(r.code, 0, r.stderr);
    const out = JSON.parse(r.stdout);
    assert.equal(out.sessions.length, 3);
    const warnings = (name: string) => out.sessions.find((s: Loose) => s.path.endsWith(name)).warnings;
    assert.deepEqual(warnings("good.jsonl"), []);
    assert.match(warnings("cut.jsonl")[0], /line \d+ is cut short/);
    assert.match(warnings("unknown.jsonl")[0], /unknown type "hologram"/);
    const failed = Object.fromEntries(out.failed.map((f: Loose) => [f.path.split("/").at(-1), f.error]));
    assert.match(failed["notes.jsonl"], /not a Pi session/);
    assert.match(failed["old.jsonl"], /v2 is from an older Pi/);
    assert.match(failed["new.jsonl"], /v4 is from a newer Pi/);
    assert.match(r.stderr, /notes\.jsonl: not a Pi session/);
    // Six files: the progress bar on stderr, ending at 6/6.
    assert.match(r.stderr, /\[#{30}\] 6\/6 files/);
    // The cut line does not change the figures.
    assert.deepEqual(
      out.sessions.find((s: Loose) => s.path.endsWith("cut.jsonl")).branch,
      out.sessions.find((s: Loose) => s.path.endsWith("good.jsonl")).branch,
    );
    const none = audit([join(dir, "notes.jsonl"), join(dir, "new.jsonl"), join(dir, "missing.jsonl")]);
    assert.equal(none.code, 1);
    assert.match(none.stderr, /missing\.jsonl: no such file or folder/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("the command runs from an install under node_modules, where Node strips no types itself", async () => {
  const dir = mkdtempSync(join(tmpdir(), "cg-audit-install-"));
  try {
    const own = join(dir, "node_modules", "pi-context-guard");
    mkdirSync(own, { recursive: true });
    for (const part of ["bin", "extension", "pkg", "package.json"]) cpSync(join(repoRoot, part), join(own, part), { recursive: true });
    symlinkSync(join(repoRoot, "node_modules", "@earendil-works"), join(dir, "node_modules", "@earendil-works"));
    const session = join(dir, "s.jsonl");
    await writeSession(session, { bytes: 20_000, outputChars: 5_000, callsPerRun: 1 });
    const r = spawnSync(node, [join(own, "bin", "pi-context-guard.mjs"), "audit", "--json", session], { encoding: "utf8", cwd: dir });
    assert.equal(r.status, 0, r.stderr);
    assert.equal(JSON.parse(r.stdout).sessions.length, 1);
    assert.doesNotMatch(r.stderr, /ExperimentalWarning|stripTypeScriptTypes/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("a generated 200 MB session is audited under a 512 MB heap", { timeout: 300_000 }, async () => {
  const dir = mkdtempSync(join(tmpdir(), "cg-audit-big-"));
  try {
    const path = join(dir, "big.jsonl");
    const wrote = await writeSession(path, { bytes: 200 << 20, outputChars: 40_000, callsPerRun: 10 });
    const r = audit(["--json", path], 512);
    assert.equal(r.code, 0, r.stderr);
    const s = JSON.parse(r.stdout).sessions[0];
    assert.equal(s.branch.requests, wrote.requests);
    assert.equal(s.branch.toolOutput.bash.results, wrote.results);
    assert.equal(s.wouldDo.runs, wrote.runs);
    assert.equal(s.wouldDo.byKind.large.items, wrote.results);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
