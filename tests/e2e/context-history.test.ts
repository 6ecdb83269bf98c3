// /context's history inside real Pi: context per request over the branch, as
// Pi counts it (calculateContextTokens of each valid assistant usage), with the
// requests after a compaction and after the guard's edits marked; the last
// request's cache; and the session's cost as Pi's footer sums it, over every
// branch, on Pi's own anthropic provider (loopback), where requests cost money.
import assert from "node:assert/strict";
import { test } from "node:test";
import { anthropicSession, startAnthropicServer } from "../harness/anthropic-server.ts";
import { keepMatching } from "../harness/classifier.ts";
import { fixtureRepo } from "../harness/fixture-repo.ts";
import { agent, type Loose, piVersion } from "../harness/pi.ts";
import { startSession } from "../harness/session.ts";
import { recorder } from "./context-helpers.ts";

const count = (n: number) => (n < 1000 ? String(n) : `${(Math.floor((n + 50) / 100) / 10).toFixed(1)}k`);
const valid = (e: Loose) =>
  e.type === "message" &&
  e.message.role === "assistant" &&
  e.message.usage &&
  !["aborted", "error"].includes(e.message.stopReason) &&
  agent.calculateContextTokens(e.message.usage) > 0;

/** The branch's requests as Pi counts them, each with what came before it since the previous one. */
function expectedSeries(branch: Loose[]) {
  const out: { tokens: number; compaction: boolean; edit: boolean; usage: Loose }[] = [];
  let compaction = false;
  let edit = false;
  for (const e of branch) {
    if (e.type === "compaction") compaction = true;
    if (e.type === "context_edit") edit = true;
    if (valid(e)) {
      out.push({ tokens: agent.calculateContextTokens(e.message.usage), compaction, edit, usage: e.message.usage });
      compaction = edit = false;
    }
  }
  return out;
}

test(`Pi ${piVersion}: context per request over the branch, with compactions and the guard's edits marked, and the last request's cache`, async () => {
  const rec = recorder();
  const pi = await startSession({
    files: fixtureRepo(),
    classifier: keepMatching("=== 503"),
    piSettings: { compaction: { keepRecentTokens: 50 } },
    extensions: [rec.extension],
    script: [
      [
        { tool: "bash", args: { command: "rg -n status src/services" } },
        { tool: "read", args: { path: "src/lib/status.ts" } },
      ],
      "Nine services retry on 503.",
      "Noted.",
      "## Goal\nFind the retries.\n## Progress\nDone.",
      "After the compaction.",
    ],
  });
  try {
    await pi.prompt("Which services retry on 503?");
    assert.ok(
      pi.branch().some((e: Loose) => e.type === "context_edit"),
      "the guard distilled at run end",
    );
    await pi.prompt("Thanks");
    await pi.prompt("/context compact");
    assert.ok(
      pi.branch().some((e: Loose) => e.type === "compaction"),
      pi.notifications.at(-1)?.message,
    );
    await pi.prompt("And now?");
    await pi.prompt("/context");
    const report = rec.last();
    const series = expectedSeries(pi.branch());
    assert.ok(series.length >= 4, `requests: ${series.length}`);
    const tokens = series.map((s) => s.tokens);
    const peak = Math.max(...tokens);
    const r = report.requests;
    assert.deepEqual([r.count, r.first, r.peak, r.peakAt, r.last], [series.length, tokens[0], peak, tokens.indexOf(peak) + 1, tokens.at(-1)]);
    assert.equal(r.compactions, series.filter((s) => s.compaction).length);
    assert.equal(r.compactions, 1, "the request after the compaction");
    assert.equal(r.edits, series.filter((s) => s.edit).length);
    assert.ok(r.edits >= 1, "a request after the guard's edit");
    const last = series.at(-1)?.usage;
    assert.deepEqual(r.cache, { read: last.cacheRead, written: last.cacheWrite, uncached: last.input });
    assert.deepEqual(report.series, { tokens, marks: series.map((s) => (s.compaction ? 1 : 0) | (s.edit ? 2 : 0)) });

    const text = pi.notifications.at(-1)?.message ?? "";
    assert.ok(
      text.includes(
        `\nContext per request: ${series.length} on this branch, first ${count(tokens[0])}, peak ${count(peak)} (request ${r.peakAt}), last ${count(tokens.at(-1) ?? 0)}\n`,
      ),
      text,
    );
    assert.ok(text.includes(`\nLast request's cache: ${count(last.cacheRead)} read, ${count(last.cacheWrite)} written, ${count(last.input)} uncached`), text);
    assert.doesNotMatch(text, /Session cost/, "the faux model costs nothing, and Pi's footer then shows no cost");
  } finally {
    await pi.dispose();
  }
});

test(`Pi ${piVersion}: the session's cost as Pi's footer sums it, every branch included, on Pi's anthropic provider`, async () => {
  const server = await startAnthropicServer(["First answer.", "Second answer.", "Answer on the other branch."]);
  const loopback = anthropicSession(server);
  const rec = recorder();
  const pi = await startSession({ ...loopback.options, extensions: [...(loopback.options.extensions ?? []), rec.extension] });
  try {
    await loopback.select(pi);
    await pi.prompt("One");
    await pi.prompt("Two");
    // Back to the first answer, and a new branch from there: the second answer is on the other branch.
    const first = pi.branch().find((e: Loose) => e.type === "message" && e.message.role === "assistant");
    await pi.session.navigateTree(first.id);
    await pi.prompt("Three");
    assert.equal(server.bodies.length, 3);
    await pi.prompt("/context");
    const report = rec.last();

    const all = pi.session.sessionManager.getEntries().filter((e: Loose) => e.type === "message" && e.message.role === "assistant");
    const cost = all.reduce((s: number, e: Loose) => s + e.message.usage.cost.total, 0);
    assert.equal(all.length, 3);
    assert.ok(cost > 0, "Pi priced the requests");
    assert.equal(report.requests.count, 2, "the series is this branch's");
    assert.ok(Math.abs(report.requests.cost - cost) < 1e-12, `${report.requests.cost} vs ${cost}`);
    const text = pi.notifications.at(-1)?.message ?? "";
    assert.ok(text.includes(`\nSession cost: $${cost.toFixed(3)} (all branches, as Pi's footer sums it)`), text);
    const last = expectedSeries(pi.branch()).at(-1)?.usage;
    assert.ok(last.cacheRead > 0, "the loopback cache was read on the last request");
    assert.deepEqual(report.requests.cache, { read: last.cacheRead, written: last.cacheWrite, uncached: last.input });
  } finally {
    await pi.dispose();
    await server.close();
    delete process.env.ANTHROPIC_API_KEY;
  }
});
