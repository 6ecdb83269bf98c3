// The saved sessions' runs for the guard's `median` estimator (audit/runs.ts,
// guard/checkpoint.ts `runLengths`): a run is a user message and the replies up
// to the next one; the project's sessions are read with the audit's reader
// within the bounds (the newest by modification time, none over the byte
// bound, not another project's, never the session's own file), and what is
// left out is said.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { readSavedRuns } from "../../extension/audit/runs.ts";
import { runLengths } from "../../extension/guard/runs.ts";

const user = { type: "message", message: { role: "user", content: "go" } };
const reply = { type: "message", message: { role: "assistant", content: [] } };
const result = { type: "message", message: { role: "toolResult", content: [] } };

const call = { type: "message", message: { role: "assistant", content: [{ type: "toolCall", id: "c1", name: "bash", arguments: {} }] } };
const notice = { type: "custom_message", customType: "subagent", content: "done" };

test("runLengths: each prompt starts a run of the replies after it, the last run included", () => {
  assert.deepEqual(runLengths([user, reply, result, reply, user, reply, { type: "compaction" }, user]), [2, 1, 0]);
  assert.deepEqual(runLengths([reply, { type: "custom" }]), [], "replies before any user message are no run");
  assert.deepEqual(runLengths([]), []);
});

test("runLengths: a steering message continues its run, as the pass's run does (guard/run.rs run_lengths)", () => {
  // Sent while the agent worked: after a tool result, or after a call with a custom notice between.
  assert.deepEqual(runLengths([user, call, result, user, call, result, reply, user, reply]), [3, 1]);
  assert.deepEqual(runLengths([user, call, result, call, notice, user, reply]), [3]);
  // After a reply without calls the agent had stopped: a new run.
  assert.deepEqual(runLengths([user, reply, notice, user, reply]), [1, 1]);
});

/** A session file of Pi's format v3 whose runs have these many replies. */
function session(path: string, cwd: string, runs: number[], mtime: number, pad = 0): void {
  const lines: object[] = [{ type: "session", version: 3, id: path, timestamp: new Date(0).toISOString(), cwd }];
  let parent: string | null = null;
  let n = 0;
  const add = (entry: object) => {
    const id = `e${++n}`;
    lines.push({ ...entry, id, parentId: parent, timestamp: new Date(0).toISOString() });
    parent = id;
  };
  for (const replies of runs) {
    add({ type: "message", message: { role: "user", content: [{ type: "text", text: `run ${"x".repeat(pad)}` }], timestamp: 0 } });
    for (let r = 0; r < replies; r++) add({ type: "message", message: { role: "assistant", content: [{ type: "text", text: "ok" }], timestamp: 0 } });
  }
  writeFileSync(path, `${lines.map((l) => JSON.stringify(l)).join("\n")}\n`);
  utimesSync(path, mtime, mtime);
}

test("readSavedRuns: the project's sessions within the bounds, newest last, and what was left out", async () => {
  const dir = mkdtempSync(join(tmpdir(), "cg-saved-runs-unit-"));
  try {
    const cwd = "/home/you/project";
    session(join(dir, "a.jsonl"), cwd, [3, 5], 1_000);
    session(join(dir, "b.jsonl"), cwd, [7], 2_000);
    session(join(dir, "c.jsonl"), cwd, [11, 13], 3_000);
    session(join(dir, "own.jsonl"), cwd, [8], 4_000);
    session(join(dir, "other.jsonl"), "/elsewhere", [9], 5_000);
    session(join(dir, "big.jsonl"), cwd, [97], 6_000, 20_000);
    writeFileSync(join(dir, "broken.jsonl"), "not json\n");
    utimesSync(join(dir, "broken.jsonl"), 500, 500);

    const all = await readSavedRuns(dir, cwd, join(dir, "own.jsonl"), { sessions: 50, bytes: 10_000 });
    assert.deepEqual(all.runs, [3, 5, 7, 11, 13], "oldest session first; own, the other project's and the big one left out");
    assert.deepEqual(
      { sessions: all.sessions, tooLarge: all.tooLarge, beyond: all.beyond, unreadable: all.unreadable },
      { sessions: 3, tooLarge: 1, beyond: 0, unreadable: 1 },
    );

    // At most two sessions: the two newest of this project (c, then b), a left out.
    const two = await readSavedRuns(dir, cwd, join(dir, "own.jsonl"), { sessions: 2, bytes: 10_000 });
    assert.deepEqual(two.runs, [7, 11, 13]);
    assert.equal(two.beyond, 2, "a and the broken file, older than the two read");

    const none = await readSavedRuns(join(dir, "missing"), cwd, undefined);
    assert.deepEqual(none.runs, [], "a project with no folder has no saved sessions");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
