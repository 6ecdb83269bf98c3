// The `median` estimator of later requests fed by the project's saved
// sessions (issue 20): inside real Pi, a project whose folder under Pi's
// sessions folder holds saved sessions with long runs, and a new session's
// ten-turn run (the scripted long run cut short, the room trigger off, so the
// money rule alone decides; faux has no catalog price, so it runs in tokens).
// With those runs the first checkpoint expects the median of what remained of
// them and fires; in a project with no saved sessions the same run expects
// its turns so far, and no checkpoint pays off (tests/e2e/guard-midrun.test.ts
// says the same of that run). `/guard` says how many runs the estimator has,
// and a saved session over the 2 MB bound is left out.
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { test } from "node:test";
import { writeSession } from "../harness/audit-sessions.ts";
import { assertNoPassFailure } from "../harness/guard-checks.ts";
import { longRunScript, project, startLongRun } from "../harness/long-run.ts";
import { type Loose, piVersion } from "../harness/pi.ts";
import type { PiSession } from "../harness/session.ts";

/** Pi's folder for a project's sessions (session-manager.js `getDefaultSessionDirPath`). */
const projectFolder = (agentDir: string, cwd: string) =>
  join(
    agentDir,
    "sessions",
    `--${resolve(cwd)
      .replace(/^[/\\]/, "")
      .replace(/[/\\:]/g, "-")}--`,
  );

/** Saved sessions of the project: tool calls per run and the file's size (writeSession ends a file's last run past it). */
const SAVED = [
  { callsPerRun: 59, bytes: 1_000 },
  { callsPerRun: 99, bytes: 160_000 },
  { callsPerRun: 139, bytes: 1_000 },
];

/** The lower median of what remained of the runs longer than `turns`, else `turns` (GUARD.md's `median`). */
function expectedLater(runs: number[], turns: number): number {
  const rest = runs
    .filter((n) => n > turns)
    .map((n) => n - turns)
    .sort((a, b) => a - b);
  return Math.max(1, rest.length ? rest[(rest.length - 1) >> 1] : turns);
}

async function guardText(pi: PiSession): Promise<string> {
  const before = pi.notifications.length;
  await pi.prompt("/guard details");
  return pi.notifications
    .slice(before)
    .map((n) => n.message)
    .join("\n");
}

/** `/guard` once the saved sessions are read (they are read in the background from the session's start). */
async function guardTextWhenRead(pi: PiSession): Promise<string> {
  for (let i = 0; i < 100; i++) {
    const text = await guardText(pi);
    if (!text.includes("still being read")) return text;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error("the saved sessions were not read within 5 s");
}

const mid = (branch: Loose[]) => branch.filter((e) => e.type === "custom" && e.customType === "context-guard" && e.data.phase === "mid-run").map((e) => e.data);

const short = () => [...longRunScript(project()).slice(0, 10), "Stopping here for now."];

test(`Pi ${piVersion}: a new session's first checkpoint expects the median of the project's saved runs`, async (t) => {
  // Written first with a stand-in folder, then copied into the project's folder with its own before Pi starts.
  const made = mkdtempSync(join(tmpdir(), "cg-saved-runs-"));
  const PLACEHOLDER = "/placeholder-project";
  const runs: number[] = [];
  const files: { name: string; cwd?: string }[] = [];
  try {
    for (const [i, shape] of SAVED.entries()) {
      const name = `2026-01-0${i + 1}T00-00-00-000Z_saved${i}.jsonl`;
      const wrote = await writeSession(join(made, name), { ...shape, outputChars: 200, cwd: PLACEHOLDER });
      for (let r = 0; r < wrote.runs; r++) runs.push(shape.callsPerRun + 1);
      files.push({ name });
    }
    // Over the 2 MB bound: left out (its runs of 2 requests would pull the median down).
    await writeSession(join(made, "2026-01-09T00-00-00-000Z_large.jsonl"), { bytes: 2_200_000, outputChars: 40_000, callsPerRun: 1, cwd: PLACEHOLDER });
    files.push({ name: "2026-01-09T00-00-00-000Z_large.jsonl" });
    // Another project's session in the same folder: not this project's, left out.
    await writeSession(join(made, "2026-01-08T00-00-00-000Z_other.jsonl"), { bytes: 1_000, outputChars: 200, callsPerRun: 0, cwd: "/elsewhere" });
    files.push({ name: "2026-01-08T00-00-00-000Z_other.jsonl", cwd: "/elsewhere" });
  } catch (error) {
    rmSync(made, { recursive: true, force: true });
    throw error;
  }
  runs.sort((a, b) => a - b);
  assert.ok(runs.length >= 4 && runs[0] === 60 && runs.at(-1) === 140, `the saved runs as written: ${runs}`);
  const n = runs.length;

  const { pi, prompt } = await startLongRun({
    script: short(),
    guardSettings: { midRunRoomTokens: 0 },
    beforeStart: (agentDir) => {
      // The workspace's folder (tests/harness/workspace.ts): `work` beside the agent dir.
      const cwd = join(dirname(agentDir), "work");
      const folder = projectFolder(agentDir, cwd);
      mkdirSync(folder, { recursive: true });
      for (const f of files) {
        const text = readFileSync(join(made, f.name), "utf8");
        writeFileSync(join(folder, f.name), f.cwd ? text : text.replace(JSON.stringify(PLACEHOLDER), JSON.stringify(cwd)));
      }
      rmSync(made, { recursive: true, force: true });
    },
  });
  try {
    const before = await guardTextWhenRead(pi);
    assert.match(
      before,
      new RegExp(
        `later requests: median of ${n} earlier runs \\(this session 0, saved sessions ${n}\\); read from 3 saved sessions of this project, 1 over 2 MB left out`,
      ),
    );

    await pi.prompt(prompt);
    assertNoPassFailure(pi.notifications);
    const fired = mid(pi.branch());
    assert.ok(fired.length > 0, "a checkpoint fired: the saved runs say many requests are still to come");
    const decision = (fired[0].breakEven as Loose[]).find((d) => d.rule === "checkpoint");
    assert.ok(decision, JSON.stringify(fired[0].breakEven));
    assert.ok(decision.requests > 0 && decision.requests < 10, `turns so far: ${decision.requests}`);
    assert.equal(decision.later, expectedLater(runs, decision.requests), "the record's later: the median of the saved runs");
    assert.ok(decision.later > decision.requests);
    t.diagnostic(`saved runs ${runs.join(", ")}; the first checkpoint at turn ${decision.requests} expected ${decision.later} later requests`);
    assert.equal(decision.paidOff, true);
    const after = await guardText(pi);
    assert.ok(after.includes(`later requests: median of ${n} earlier runs (this session 0, saved sessions ${n})`), after);
  } finally {
    await pi.dispose();
  }
});

test(`Pi ${piVersion}: with no saved sessions the same run expects its turns so far`, async () => {
  const { pi, prompt } = await startLongRun({ script: short(), guardSettings: { midRunRoomTokens: 0 } });
  try {
    const before = await guardTextWhenRead(pi);
    assert.match(before, /later requests: median of 0 earlier runs \(this session 0, saved sessions 0\), so the turns so far/);
    await pi.prompt(prompt);
    assertNoPassFailure(pi.notifications);
    assert.deepEqual(mid(pi.branch()), [], "no checkpoint pays off over the turns so far");
    const text = await guardText(pi);
    assert.match(text, /last checkpoint skipped \(turn 10\): not paying off, [\d.]+k chars × 10 later requests < 16 × [\d.]+k chars of cache rewrite/);
  } finally {
    await pi.dispose();
  }
});
