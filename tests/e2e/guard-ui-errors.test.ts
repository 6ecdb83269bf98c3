// No UI error stops the guard, inside real Pi. Status, theme and notify calls
// are cosmetic: a session whose UI context throws on one of them, or lacks
// them (as some hosts' contexts do), still gets its large output distilled at
// run end. The failure is reported once, through whichever channel still works
// (nowhere when none does), and no "the pass failed" warning appears. Before
// extension/ui.ts, a throwing theme ended the pass with "the pass failed,
// nothing was changed".
import assert from "node:assert/strict";
import { test } from "node:test";
import { keepChunks, type ClassifyRequest } from "../harness/classifier.ts";
import { chunksSeen, expectedNote } from "../harness/expected.ts";
import { entriesOf, textOf, toolResultEntry, toolResults } from "../harness/inspect.ts";
import { type Loose, piVersion } from "../harness/pi.ts";
import { startSession } from "../harness/session.ts";

const STATUS_KEY = "context-guard";
/** The status key a UI failure is reported under when notifications fail (extension/ui.ts). */
const FAILURE_KEY = "context-guard-ui";
const REPORT = /^context-guard: .*; the status bar and notices may be incomplete, the work goes on$/;
const PASS_BROKE = /the pass failed|could not finish|could not be planned|extension error/;

const log = Array.from({ length: 900 }, (_, i) => `step ${i + 1}: ${i % 97 === 5 ? "FAILED assertion in parser" : "ok"} ${"·".repeat(20)}`).join("\n");
const kept = (chunk: { text: string }) => /FAILED/.test(chunk.text);
const keepFailures = keepChunks((request: ClassifyRequest) =>
  Object.entries((request.state.chunks ?? {}) as Record<string, string>)
    .filter(([, text]) => /FAILED/.test(text))
    .map(([id]) => Number(id.replace("chunk_", ""))),
);

const broken = (what: string) => () => {
  throw new Error(`${what} broke`);
};
/** A theme whose every read throws, as Pi's own does before `initTheme` ran. */
const brokenTheme = new Proxy({}, { get: broken("the theme") });

interface Case {
  name: string;
  ui: (recording: Loose, attempts: string[]) => Loose;
  /** The report expected (a pattern on its text), or none when no channel works. */
  report: RegExp | undefined;
  /** Where the report goes. */
  channel?: "notify" | "status";
  /** Whether the guard's own status still shows the savings. */
  statusShown: boolean;
}

const cases: Case[] = [
  {
    name: "setStatus throws",
    ui: (r) => ({ ...r, setStatus: broken("the status bar") }),
    report: /ctx\.ui\.setStatus failed \(the status bar broke\)/,
    channel: "notify",
    statusShown: false,
  },
  {
    name: "the theme throws",
    ui: (r) => ({ ...r, theme: brokenTheme }),
    report: /ctx\.ui\.theme failed \(the theme broke\)/,
    channel: "notify",
    statusShown: true,
  },
  {
    name: "notify throws",
    ui: (r, attempts) => ({
      ...r,
      notify: (message: string) => {
        attempts.push(message);
        throw new Error("notifications broke");
      },
    }),
    report: /ctx\.ui\.notify failed \(notifications broke\)/,
    channel: "status",
    statusShown: true,
  },
  {
    name: "setStatus and theme are missing",
    ui: (r) => ({ ...r, setStatus: undefined, theme: undefined }),
    report: /this host's UI has no theme/,
    channel: "notify",
    statusShown: false,
  },
  {
    name: "notify, setStatus and theme are missing",
    ui: (r) => ({ ...r, notify: undefined, setStatus: undefined, theme: undefined }),
    report: undefined,
    statusShown: false,
  },
];

for (const c of cases) {
  test(`Pi ${piVersion}: ${c.name}, and the output is still distilled at run end`, async () => {
    const attempts: string[] = [];
    const pi = await startSession({
      files: { "test.log": `${log}\n` },
      classifier: keepFailures,
      ui: (recording) => c.ui(recording, attempts),
      script: [{ tool: "bash", args: { command: "cat test.log" }, id: "log1" }, "The parser assertion fails in several steps.", "ok"],
    });
    try {
      await pi.prompt("Why does the test fail?");
      const branch = pi.branch();
      const logEntry = toolResultEntry(branch, "log1");
      const raw = textOf(logEntry.message);

      // The pass ran to its end: the edit and the record are on the branch.
      assert.deepEqual(
        entriesOf(branch, "context_edit").map((e: Loose) => e.targetId),
        [logEntry.id],
      );
      const records = entriesOf(branch, "custom", "context-guard");
      assert.equal(records.length, 1);
      assert.deepEqual(
        records[0].data.results.map((r: Loose) => [r.kind, r.entryId, r.outcome]),
        [["large", logEntry.id, "distilled"]],
      );

      // The next request carries exactly the distilled output.
      await pi.prompt("Thanks.");
      const [visible] = toolResults(pi.requests.at(-1)?.messages ?? []);
      assert.equal(
        textOf(visible),
        expectedNote({
          label: "bash `cat test.log`",
          entryId: logEntry.id,
          raw,
          chunks: chunksSeen(pi.classifierCalls, "bash"),
          kept,
          numbering: { kind: "output" },
        }),
      );

      // `/guard` notifies (its summary) and sets the status again: a failing notify is met here, a
      // failing setStatus a second time, which must not be reported again.
      await pi.prompt("/guard details");

      // Exactly one report of the failure, through the channel that still works.
      const shown = [...pi.notifications.map((n) => n.message), ...attempts];
      const statusReports = (pi.statuses.get(FAILURE_KEY) ?? []).filter((t): t is string => typeof t === "string");
      const reports = [...shown.filter((m) => REPORT.test(m)), ...statusReports];
      if (c.report === undefined) {
        assert.deepEqual(reports, [], "no channel works: the failure is swallowed");
      } else {
        assert.equal(reports.length, 1, `one report: ${JSON.stringify(reports)}`);
        assert.match(reports[0], c.report);
        assert.match(reports[0], REPORT);
        if (c.channel === "status") assert.deepEqual(statusReports, reports);
        else assert.deepEqual(statusReports, [], "reported by a notification, not a status");
      }

      // No crash passed for a fallback: no "the pass failed" warning, no extension error.
      const broke = shown.filter((m) => PASS_BROKE.test(m));
      assert.deepEqual(broke, [], "no pass warning");

      // The guard's own status, where setStatus works, shows the savings (in plain text without a theme).
      const status = pi.status(STATUS_KEY);
      if (c.statusShown) assert.match(status ?? "", /^🛡 −[\d.]+k tok · 1 item$/);
      else assert.equal(status, undefined);
    } finally {
      await pi.dispose();
    }
  });
}
