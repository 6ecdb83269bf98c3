// The judge in the background meets what happens meanwhile (issue 27; docs/GUARD.md "Nobody waits for the
// judge"), inside real Pi with a judge held until the test lets it answer:
// - answers in before the next prompt go into its first request, and the same edits are appended;
// - answers later than that request land at a later turn_end, the delay in the record;
// - answers after Esc, `/guard off`, a `/tree` jump, or Pi's exit land nowhere: no edit, no record, the
//   judge's requests aborted; every raw entry stays whole and `recall` returns it byte for byte;
// - answers after a compaction summarized their outputs find nothing to land on;
// - answers about an output edited meanwhile (by another extension) leave it alone; recall returns it whole.
import assert from "node:assert/strict";
import { test } from "node:test";
import { type Behaviour, type ClassifyRequest, keepChunks } from "../harness/classifier.ts";
import { fixtureRepo } from "../harness/fixture-repo.ts";
import { entriesOf, textOf, toolResultEntry } from "../harness/inspect.ts";
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { pi as cli, tempAgent } from "../harness/cli.ts";
import { type Loose, piVersion, repoRoot } from "../harness/pi.ts";
import { type PiSession, startSession, type Step } from "../harness/session.ts";

/** The judge keeps chunks naming a 503, and answers only once `open()` is called; an abort ends its wait. */
function heldJudge() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  const seen = { calls: 0, aborted: 0, answered: 0 };
  const judge = keepChunks((request: ClassifyRequest) =>
    Object.entries((request.state.chunks ?? {}) as Record<string, string>)
      .filter(([, text]) => /=== 503/.test(text))
      .map(([id]) => Number(id.replace("chunk_", ""))),
  );
  const behaviour: Behaviour = async (request, signal) => {
    seen.calls++;
    await new Promise<void>((resolve, reject) => {
      const onAbort = () => {
        seen.aborted++;
        reject(new Error("aborted"));
      };
      if (signal?.aborted) return onAbort();
      signal?.addEventListener("abort", onAbort, { once: true });
      void opened.then(() => {
        signal?.removeEventListener("abort", onAbort);
        resolve();
      });
    });
    seen.answered++;
    return judge(request, signal);
  };
  return { behaviour, open, seen };
}

const faux = join(repoRoot, "tests", "fixtures", "faux-cli.ts");

const READS: Step[] = [
  { tool: "bash", args: { command: "rg -n status src/services" }, id: "grep1" },
  { tool: "read", args: { path: "src/lib/status.ts", offset: 3 }, id: "read1" },
  "The services at 3 mod 7 retry on 503.",
];

/** Waits until `check` holds (the judge's answers are in), at most 5 s. */
async function until(check: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 500 && !check(); i++) await new Promise((r) => setTimeout(r, 10));
  assert.ok(check(), `timed out waiting: ${what}`);
}

async function session(judge: Behaviour, more: Loose = {}): Promise<PiSession> {
  return startSession({ files: fixtureRepo(), classifier: judge, guardSettings: { waitForJudge: false }, script: READS, ...more });
}

/** The raw outputs of the first run, to hold every later state to. */
function raws(pi: PiSession): Map<string, string> {
  const branch = pi.branch();
  return new Map(["grep1", "read1"].map((id) => [toolResultEntry(branch, id).id, textOf(toolResultEntry(branch, id).message)]));
}

/**
 * Nothing landed: no edit on the branch, and no record (or, with `paid`, only records of what the judge was
 * paid for, with no result), every raw entry as it was, `recall` returns each.
 */
async function nothingLanded(pi: PiSession, before: Map<string, string>, paid = false): Promise<void> {
  const branch = pi.branch();
  assert.deepEqual(entriesOf(branch, "context_edit"), [], "no edit");
  const records = entriesOf(branch, "custom", "context-guard");
  if (paid)
    assert.ok(
      records.every((r: Loose) => r.data.results.length === 0 && r.data.requests > 0),
      "only the judge's cost is recorded",
    );
  else assert.deepEqual(records, [], "no record");
  for (const [id, text] of before) {
    assert.equal(textOf(pi.session.sessionManager.getEntry(id).message), text, "the raw entry is whole");
    pi.script({ tool: "recall", args: { entryId: id }, id: `recall-${id}` }, "ok");
    await pi.prompt("recall it");
    const result = toolResultEntry(pi.branch(), `recall-${id}`);
    assert.ok(textOf(result.message).includes(text.slice(0, 2000)), "recall returns the output");
  }
}

/** The first run (a search and a read) done, its run end's judge asked and held. */
async function runWithJudgeOut(judge: ReturnType<typeof heldJudge>, pi: PiSession): Promise<Map<string, string>> {
  await pi.prompt("Which services retry when the upstream answers 503?");
  await until(() => judge.seen.calls > 0, "the judge's requests");
  return raws(pi);
}

const guardSaid = (pi: PiSession) => pi.notifications.map((n) => n.message).findLast((m) => m.includes("context-guard:")) ?? "";

test(`Pi ${piVersion}: answers in before the next prompt go into its first request; Pi did not wait for them`, async () => {
  const judge = heldJudge();
  const pi = await session(judge.behaviour);
  try {
    await pi.prompt("Which services retry when the upstream answers 503?");
    // Pi settled with the judge still out: nothing on the branch yet, the status says what is judged.
    await until(() => judge.seen.calls > 0, "the judge's requests");
    assert.equal(judge.seen.answered, 0, "the judge has not answered");
    assert.deepEqual(entriesOf(pi.branch(), "context_edit"), []);
    assert.match(pi.status("context-guard") ?? "", /judging 2 outputs…/);
    judge.open();
    await until(() => /judged, to land next/.test(pi.status("context-guard") ?? ""), "the answers");
    const first = pi.requests.length;
    pi.script("Done.");
    await pi.prompt("Thanks. Anything else?");
    const grep = toolResultEntry(pi.branch(), "grep1");
    const sent = pi.requests[first].messages.find((m: Loose) => m.role === "toolResult" && m.toolCallId === "grep1");
    assert.match(textOf(sent), /^\[context-guard\]/, "the next prompt's first request carries the distilled output");
    const edits = entriesOf(pi.branch(), "context_edit");
    assert.ok(
      edits.some((e: Loose) => e.targetId === grep.id),
      "the same edit is appended",
    );
    const [record] = entriesOf(pi.branch(), "custom", "context-guard");
    assert.equal(record.data.phase, "run-end");
    assert.deepEqual({ requests: record.data.late.requests, inRequest: record.data.late.inRequest }, { requests: 0, inRequest: true });
    const edited = pi.projection().entries.find((e: Loose) => e.sourceEntry.id === grep.id);
    assert.equal(textOf(edited.messages[0]), textOf(sent), "Pi's own projection carries the same text from then on");
  } finally {
    await pi.dispose();
  }
});

test(`Pi ${piVersion}: answers later than the next prompt's first request land at its turn_end, the delay recorded`, async () => {
  const judge = heldJudge();
  const pi = await session(judge.behaviour);
  try {
    await pi.prompt("Which services retry when the upstream answers 503?");
    const first = pi.requests.length;
    // The judge answers while the next prompt's first request is out.
    pi.script(
      () => {
        judge.open();
        return { tool: "bash", args: { command: "ls src" }, id: "ls1" };
      },
      (request: Loose) => {
        // The answers came after the first request: the run's first turn_end landed them.
        const sent = request.messages.find((m: Loose) => m.role === "toolResult" && m.toolCallId === "grep1");
        return /^\[context-guard\]/.test(textOf(sent)) ? "Landed." : "Not landed.";
      },
    );
    await pi.prompt("List src.");
    const firstSent = pi.requests[first].messages.find((m: Loose) => m.role === "toolResult" && m.toolCallId === "grep1");
    assert.doesNotMatch(textOf(firstSent), /^\[context-guard\]/, "the first request went without waiting");
    const [record] = entriesOf(pi.branch(), "custom", "context-guard");
    assert.ok(record, "a record");
    assert.equal(record.data.late.inRequest, false);
    assert.ok(record.data.late.requests >= 1, `landed ${record.data.late.requests} request(s) later`);
    const answer = pi.branch().findLast((e: Loose) => e.type === "message" && e.message.role === "assistant");
    assert.equal(textOf(answer.message), "Landed.");
  } finally {
    await pi.dispose();
  }
});

for (const [what, meanwhile] of [
  ["/guard off", async (pi: PiSession) => void (await pi.prompt("/guard off"))],
  [
    "a /tree jump",
    async (pi: PiSession) => {
      const prompt = pi.branch().find((e: Loose) => e.type === "message" && e.message.role === "user");
      await pi.session.navigateTree(prompt.id, { summarize: false });
    },
  ],
] as const) {
  test(`Pi ${piVersion}: answers after ${what} land nowhere, and nothing is lost`, async () => {
    const judge = heldJudge();
    const pi = await session(judge.behaviour);
    try {
      const before = await runWithJudgeOut(judge, pi);
      await meanwhile(pi);
      assert.ok(judge.seen.aborted > 0, "the judge's requests were aborted");
      judge.open();
      await pi.prompt("/guard on");
      await pi.prompt("/guard details");
      assert.match(guardSaid(pi), /dropped/, "/guard says the answers were dropped");
      pi.script("Done.");
      await pi.prompt("Anything else?");
      if (what === "/guard off") await nothingLanded(pi, before);
      else assert.deepEqual(entriesOf(pi.branch(), "context_edit"), [], "no edit on the new branch");
    } finally {
      await pi.dispose();
    }
  });
}

test(`Pi ${piVersion}: answers that come after a compaction took their outputs land nowhere, and nothing is lost`, async () => {
  const judge = heldJudge();
  const pi = await session(judge.behaviour, { piSettings: { compaction: { keepRecentTokens: 20 } } });
  try {
    const before = await runWithJudgeOut(judge, pi);
    // Pi's compaction summarizes the run, outputs and all, while the judge is still out.
    pi.script("## Goal\nFind the retrying services.\n## Progress\nNine found.");
    await pi.session.compact();
    assert.equal(entriesOf(pi.branch(), "compaction").length, 1);
    judge.open();
    await until(() => judge.seen.answered > 0 && !/judging/.test(pi.status("context-guard") ?? ""), "the answers");
    pi.script("Done.");
    await pi.prompt("Anything else?");
    await pi.prompt("/guard details");
    assert.match(guardSaid(pi), /landed[^;]*: 0 edits; 2 left alone, edited or gone meanwhile/, "/guard says they found nothing to land on");
    await nothingLanded(pi, before, true);
  } finally {
    await pi.dispose();
  }
});

test(`Pi ${piVersion}: answers about an output another extension edited meanwhile leave it alone; recall still returns it whole`, async () => {
  // Another extension edits the search's output at a turn end while the judge is out (it stands for
  // any later edit: the guard's own passes never hold one output twice); then the judge answers.
  const judge = heldJudge();
  const other = { target: "", edited: false };
  const editor = (api: Loose) => {
    api.on("turn_end", (event: Loose) => {
      if (!other.target || other.edited) return undefined;
      other.edited = true;
      judge.open();
      const edit = { type: "context_edit", targetId: other.target, replacement: { content: [{ type: "text", text: "(shortened by another extension)" }] } };
      return { entries: [...event.entries, edit] };
    });
  };
  const pi = await session(judge.behaviour, { extensions: [editor] });
  try {
    const before = await runWithJudgeOut(judge, pi);
    const grep = toolResultEntry(pi.branch(), "grep1");
    other.target = grep.id;
    // The next run: the other extension edits at its first turn end and the judge answers; the answers
    // land at the second turn's end, after a command that takes a moment.
    pi.script({ tool: "bash", args: { command: "ls src" }, id: "ls2" }, { tool: "bash", args: { command: "sleep 0.5" }, id: "sleep2" }, "Done.");
    await pi.prompt("List src, then wait a moment.");
    assert.ok(other.edited && judge.seen.answered > 0, "the other edit came first, then the answers");
    const edits = entriesOf(pi.branch(), "context_edit").filter((e: Loose) => e.targetId === grep.id);
    assert.equal(edits.length, 1, "one edit of the search's output: the other extension's");
    assert.equal(textOf(edits[0].replacement), "(shortened by another extension)");
    const records = entriesOf(pi.branch(), "custom", "context-guard");
    assert.ok(records.length > 0, "the answers landed");
    for (const r of records) assert.ok(!r.data.results.some((x: Loose) => x.entryId === grep.id), "no result for the output edited meanwhile");
    await pi.prompt("/guard details");
    assert.match(guardSaid(pi), /landed[^;]*: \d+ edits?; 1 left alone, edited or gone meanwhile/);
    // Every raw entry as it was; recall returns the search's output whole.
    for (const [id, text] of before) assert.equal(textOf(pi.session.sessionManager.getEntry(id).message), text, "the raw entry is whole");
    pi.script({ tool: "recall", args: { entryId: grep.id }, id: "recall-grep" }, "ok");
    await pi.prompt("recall it");
    const recalled = textOf(toolResultEntry(pi.branch(), "recall-grep").message);
    assert.ok(recalled.includes((before.get(grep.id) ?? "").slice(0, 2000)), "recall returns the output");
  } finally {
    await pi.dispose();
  }
});

test(`Pi ${piVersion}: Esc during the next run aborts the judge's requests; nothing lands`, async () => {
  const judge = heldJudge();
  const pi = await session(judge.behaviour);
  try {
    const before = await runWithJudgeOut(judge, pi);
    pi.script(() => {
      void pi.session.abort();
      return { tool: "bash", args: { command: "ls src" }, id: "ls2" };
    });
    await pi.prompt("List src.");
    assert.ok(judge.seen.aborted > 0, "Esc aborted the judge's requests");
    judge.open();
    await nothingLanded(pi, before);
  } finally {
    await pi.dispose();
  }
});

test(`Pi ${piVersion} print: pi -p exits without waiting for the judge; what it asked is aborted, the session file holds no edit`, async () => {
  const dir = tempAgent({ waitForJudge: false, minRunChars: 1_000, minResultChars: 1_000 });
  try {
    for (const [path, text] of Object.entries(fixtureRepo())) {
      mkdirSync(dirname(join(dir.cwd, path)), { recursive: true });
      writeFileSync(join(dir.cwd, path), text);
    }
    const script = join(dir.cwd, "script.json");
    writeFileSync(script, JSON.stringify([{ tool: "bash", args: { command: "rg -n status src/services" } }, "The services at 3 mod 7 retry on 503."]));
    const log = join(dir.cwd, "judge.log");
    const sessions = join(dir.cwd, "sessions");
    const started = Date.now();
    await cli(["-p", "--session-dir", sessions, "-e", faux, "-e", repoRoot, "--model", "faux/faux-1", "Which services retry on 503?"], {
      ...dir,
      env: { CG_FAUX_SCRIPT: script, CG_CLASSIFIER: "hang-keep-none", CG_JUDGE_LOG: log },
    });
    const took = Date.now() - started;
    // Pi settles at once and plans the run end right after; as it exits that quickly, the judge is asked
    // nothing, or what it was asked is aborted.
    const judged = existsSync(log) ? readFileSync(log, "utf8").trim().split("\n") : [];
    assert.equal(judged.filter((l) => l === "aborted").length, judged.filter((l) => l === "asked").length, "every request was aborted as Pi exited");
    assert.ok(took < 15_000, `pi -p took ${took} ms: it did not wait for the 20 s judge`);
    const [file] = readdirSync(sessions, { recursive: true })
      .map(String)
      .filter((f) => f.endsWith(".jsonl"));
    const entries = readFileSync(join(sessions, file), "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    assert.ok(
      entries.some((e) => e.type === "message" && e.message.role === "toolResult" && textOf(e.message).length > 10_000),
      "the output is in the session, whole",
    );
    assert.deepEqual(
      entries.filter((e) => e.type === "context_edit" || e.customType === "context-guard"),
      [],
      "no edit, no record",
    );
  } finally {
    dir.remove();
  }
});
