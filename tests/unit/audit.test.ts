// The audit's pure parts: the figures summed from entries (Pi's context count,
// what is skipped, the records, recalls after a distill), the requests after
// each run, the estimates in tokens and dollars, the words that name a
// session and say what the guard did and would do, and the sparkline.
import assert from "node:assert/strict";
import { test } from "node:test";
import { contextTokens, emptyCost, estimate, LaterRequests, pricesOf, Tally } from "../../extension/audit/figures.ts";
import { BillEvents, billOf } from "../../extension/guard/bill.ts";
import { runLengths } from "../../extension/guard/runs.ts";
import { didSentence, folderName, sparkline, wouldSentences } from "../../extension/audit/format.ts";
import { PROMPT_CHARS, promptLine } from "../../extension/audit/read.ts";

const reply = (usage: object, stopReason = "stop", content: object[] = []) => ({ type: "message", message: { role: "assistant", content, usage, stopReason } });
const result = (toolName: string, toolCallId: string, text: string) => ({
  type: "message",
  message: { role: "toolResult", toolName, toolCallId, content: [{ type: "text", text }] },
});

test("figures: context as Pi counts it, aborted and failed replies left out of the series, records and recalls", () => {
  assert.equal(contextTokens({ totalTokens: 900, input: 1 }), 900);
  assert.equal(contextTokens({ input: 100, output: 20, cacheRead: 300, cacheWrite: 40 }), 460);
  const t = new Tally();
  t.add(
    reply({ input: 100, output: 10, cacheRead: 0, cacheWrite: 0, cost: { total: 0.5, cacheRead: 0, cacheWrite: 0.1 } }, "toolUse", [
      { type: "toolCall", id: "c1", name: "bash" },
    ]),
  );
  t.add(result("bash", "c1", "x".repeat(5000)));
  t.add(reply({ totalTokens: 5000, cacheRead: 100, cacheWrite: 200, cost: { total: 0.25, cacheRead: 0.01, cacheWrite: 0.02 } }));
  t.add(reply({ totalTokens: 9000 }, "aborted"));
  t.add({ type: "context_edit", targetId: "r1" });
  t.add({
    type: "custom",
    customType: "context-guard",
    data: {
      savedChars: 4000,
      costUsd: 0.001,
      results: [
        { kind: "large", outcome: "distilled", beforeChars: 5000, afterChars: 1000 },
        { kind: "small", outcome: "kept", beforeChars: 800, afterChars: 800 },
      ],
    },
  });
  t.add(reply({ totalTokens: 2000 }, "toolUse", [{ type: "toolCall", id: "c2", name: "recall" }]));
  t.add(result("recall", "c2", "y".repeat(300)));
  t.add({ type: "compaction" });
  t.add(reply({ totalTokens: 1500 }));
  const f = t.f;
  assert.equal(f.requests, 5);
  assert.deepEqual(f.contextSeries, [110, 5000, 2000, 1500]);
  assert.deepEqual([f.peakContext, f.finalContext], [5000, 1500]);
  assert.deepEqual(f.editsAt, [2]);
  assert.deepEqual(f.compactionsAt, [3]);
  assert.deepEqual(f.toolOutput, { bash: { results: 1, chars: 5000 }, recall: { results: 1, chars: 300 } });
  assert.deepEqual(f.keptOut, { large: 4000 });
  assert.deepEqual([f.guardRecords, f.guardSavedChars, f.recallsAfterDistill, f.recalledChars], [1, 4000, 1, 300]);
  assert.deepEqual([f.cost.total, f.cost.cacheReadTokens, f.cost.cacheWriteTokens], [0.75, 100, 200]);
});

test("prices: the audit's and the bill's are one rule (economics/bill.rs usage_prices), the same on the same session", () => {
  // Per million tokens: Anthropic's shape (cache writes recorded) and a prefix cache's (no write: a rewrite is plain input).
  const usage = (input: number, read: number, write: number, [pi, pr, pw]: number[]) => ({
    input,
    cacheRead: read,
    cacheWrite: write,
    output: 10,
    cost: { input: (input * pi) / 1e6, cacheRead: (read * pr) / 1e6, cacheWrite: (write * pw) / 1e6, total: 0 },
  });
  for (const [name, prices, writes] of [
    ["anthropic", [3, 0.3, 3.75], 400],
    ["openai", [1.25, 0.125, 0], 0],
  ] as const) {
    const entries = [
      { type: "custom", customType: "context-guard", data: { results: [{ kind: "large", outcome: "distilled", beforeChars: 8000, afterChars: 800 }] } },
      reply(usage(200, 5000, writes, [...prices])),
      reply(usage(100, 6000, writes, [...prices])),
    ];
    const tally = new Tally();
    const events = new BillEvents();
    for (const e of entries) {
      tally.add(e);
      events.add(e);
    }
    const audit = pricesOf(tally.f.cost);
    const bill = billOf(events.events, undefined);
    assert.ok(bill.ok, name);
    const perMillion = (x: number | undefined) => (x === undefined ? undefined : Math.round(x * 1e6 * 1e6) / 1e6);
    assert.deepEqual([perMillion(audit.cacheRead), perMillion(audit.cacheWrite)], [bill.value.readPrice, bill.value.writePrice], name);
    // The write price falls back to the uncached input's where no write was recorded, in both.
    assert.equal(perMillion(audit.cacheWrite), writes > 0 ? prices[2] : prices[0], name);
    assert.equal(perMillion(audit.premium), perMillion((audit.cacheWrite ?? 0) - (audit.cacheRead ?? 0)), name);
  }
});

test("requests after a run: a steering message belongs to its run, as runLengths counts runs (one rule, guard/run.rs)", () => {
  const user = (id: string) => ({ type: "message", id, message: { role: "user", content: "q" } });
  const calls = (id: string) => ({ type: "message", id, message: { role: "assistant", content: [{ type: "toolCall", id: `c-${id}`, name: "bash" }] } });
  const reply = (id: string) => ({ type: "message", id, message: { role: "assistant", content: [] } });
  const out = (id: string) => ({ type: "message", id, message: { role: "toolResult", toolName: "bash", content: [] } });
  // s1 comes after a tool result, during the run: a steering message, not a new prompt.
  const branch = [user("p1"), calls("a1"), out("t1"), user("s1"), calls("a2"), out("t2"), reply("a3"), user("p2"), reply("a4"), user("p3"), reply("a5")];
  const later = new LaterRequests();
  for (const e of branch) later.add(e);
  const runs = runLengths(branch);
  assert.deepEqual(runs, [3, 1, 1]);
  // Every entry of the first run is followed by the requests of the runs after it (2; 4 if s1 began a run).
  const afterFirst = runs[1] + runs[2];
  assert.deepEqual(
    ["p1", "t1", "s1", "t2", "p2"].map((id) => later.after(id)),
    [afterFirst, afterFirst, afterFirst, afterFirst, runs[2]],
  );
});

test("requests after a run: from the next prompt to the next compaction; the last run spares none", () => {
  const later = new LaterRequests();
  const user = (id: string) => ({ type: "message", id, message: { role: "user", content: "q" } });
  const ask = (id: string) => ({ type: "message", id, message: { role: "assistant", content: [] } });
  const out = (id: string) => ({ type: "message", id, message: { role: "toolResult", toolName: "bash", content: [] } });
  for (const e of [
    user("p1"),
    ask("a1"),
    out("t1"),
    ask("a2"),
    user("p2"),
    ask("a3"),
    out("t2"),
    ask("a4"),
    user("p3"),
    ask("a5"),
    { type: "compaction", id: "c" },
    ask("a6"),
    user("p4"),
    out("t3"),
    ask("a7"),
  ]) {
    later.add(e);
  }
  // Run 1 ends at p2: a3, a4, a5 follow before the compaction. Run 2 ends at p3: a5, then the compaction.
  // Run 3 (p3) was running at the compaction, which keeps it: a7 after its end. The last run: none.
  assert.deepEqual(
    ["p1", "t1", "t2", "p3", "t3", "missing"].map((id) => later.after(id)),
    [3, 3, 1, 1, 0, 0],
  );
});

test("estimates: tokens as characters / 4, dollars at the session's price, one cache rewrite per run end", () => {
  const cost = {
    ...emptyCost(),
    input: 3e-6 * 100,
    inputTokens: 100,
    cacheRead: 0.3e-6 * 1000,
    cacheReadTokens: 1000,
    cacheWrite: 3.75e-6 * 100,
    cacheWriteTokens: 100,
  };
  const own = pricesOf(cost);
  assert.ok(Math.abs((own.input ?? 0) - (3e-4 + 3e-4 + 3.75e-4) / 1200) < 1e-15);
  const f = new Tally().f;
  f.guardRecords = 1;
  f.keptOut = { large: 4000 };
  f.guardCostUsd = 0.002;
  const would = {
    candidates: [
      { kind: "large", entryId: "t1", chars: 8000, rewriteChars: 20_000, superseded: true, run: 0 },
      { kind: "small", entryId: "t2", chars: 800, rewriteChars: 12_000, superseded: false, run: 0 },
      { kind: "image", entryId: "t3", chars: 4000, rewriteChars: 6000, superseded: false, run: 1 },
      { kind: "exchange", entryId: "p1", chars: 9000, rewriteChars: 30_000, superseded: false, run: 1 },
    ],
  };
  const later = (id: string) => ({ t1: 5, t2: 5, t3: 2 })[id] ?? 0;
  // The tokens the later requests did not send are the bill's (guard/bill.rs), handed in: one figure.
  const e = estimate(f, would, later, own, pricesOf(emptyCost()), 3000);
  assert.equal(e.priceFrom, "session");
  assert.deepEqual([e.did?.keptTokens, e.did?.sparedTokens, e.did?.classifierUsd], [1000, 3000, 0.002]);
  assert.equal(estimate(f, would, later, own, pricesOf(emptyCost())).did?.sparedTokens, null, "no bill: no figure");
  const w = e.would;
  assert.ok(w);
  assert.deepEqual([w.candidates, w.candidateTokens, w.images, w.imageTokens, w.superseded, w.exchanges, w.exchangeTokens], [3, 3200, 1, 1000, 1, 1, 2250]);
  assert.deepEqual([w.sparedUpperTokens, w.sparedLowerTokens], [2000 * 5 + 200 * 5 + 1000 * 2, 1000 * 2]);
  // Run 0 rewrites from its earliest edit (20,000 chars), run 1 from the image (6,000): the exchange is not one of the bounds.
  assert.equal(w.rewriteTokens, (20_000 + 6000) / 4);
  assert.ok(Math.abs((w.rewriteUsd ?? 0) - w.rewriteTokens * (3.75e-6 - 0.3e-6)) < 1e-12);
  // A session that records no cost is priced at all the sessions' price; with none anywhere, no dollars.
  assert.equal(estimate(f, would, later, pricesOf(emptyCost()), own).priceFrom, "all");
  const none = estimate(f, would, later, pricesOf(emptyCost()), pricesOf(emptyCost()));
  assert.deepEqual([none.priceFrom, none.pricePerToken, none.would?.sparedUpperUsd, none.would?.rewriteUsd], ["none", null, null, null]);

  // The same in words, in tokens: the money is the bill's one answer, never a second figure here (issue 28).
  assert.equal(
    didSentence(e),
    "The guard kept 1.0k tokens of tool output out of the context at 1 run end or checkpoint, so the requests after that sent 3.0k fewer tokens in all. Its classifier cost $0.0020. The agent never asked for removed output back.",
  );
  const said = wouldSentences(e, false);
  assert.equal(
    said?.what,
    "The guard would remove 1 old image (1.0k tokens) without asking anyone, and show its classifier 2 tool outputs of 2.2k tokens to shorten or drop (1 already outdated by a later call).",
  );
  assert.match(
    said?.spared ?? "",
    /^Dropping them would spare the later requests between 2\.0k tokens \(about \$[\d.]+\) \(the images alone\) and 13\.0k tokens \(about \$[\d.]+\) \(everything dropped\) but make the provider write 6\.5k tokens to its cache again \(about \$[\d.]+\): on balance about \$[\d.]+ (saved|lost), estimated at/,
  );
  assert.match(wouldSentences(none, true)?.spared ?? "", /\(no dollar estimate: no session here records costs\)\.$/);
  assert.equal(wouldSentences(estimate(f, { candidates: [] }, later, own, own), true)?.what.startsWith("The guard would still find nothing to remove"), true);
});

test("a session's name: its folder's own name, and its first prompt as one clean, clipped line", () => {
  assert.equal(folderName("/home/me/work/shop"), "shop");
  assert.equal(folderName("C:\\Users\\me\\shop\\"), "shop");
  assert.equal(folderName("/"), "/");
  assert.equal(promptLine("Fix\nthe \u001b[31mbuild\u001b[0m\u0007 now"), "Fix the build now");
  assert.equal(
    promptLine([
      { type: "text", text: "看 🔍" },
      { type: "image", data: "xx" },
      { type: "text", text: "<b>this</b>" },
    ]),
    "看 🔍 <b>this</b>",
  );
  assert.equal(promptLine([{ type: "image", data: "xx" }]), "(an image)");
  assert.equal(promptLine([]), "");
  const long = promptLine("🔍".repeat(500));
  // 2 UTF-16 units a character: 79 of them and the ellipsis, within the limit.
  assert.equal(long.length, PROMPT_CHARS - 1);
  assert.ok(long.endsWith("…") && !/[\ud800-\udbff]…$/.test(long), "clipped whole, on a character boundary");
});

test("sparkline: one cell per request up to the width, each the peak of its requests, scaled to the peak", () => {
  assert.equal(sparkline([]), "");
  assert.equal(sparkline([0, 0]), "▁▁");
  // Level = round(value / peak × 7) of ▁…█: 1/8 → 1, 2/8 → 2, 4/8 → 4, 8/8 → 7.
  assert.equal(sparkline([1, 2, 4, 8]), "▂▃▅█");
  const long = Array.from({ length: 400 }, (_, i) => i);
  const line = sparkline(long, 40);
  assert.equal([...line].length, 40);
  assert.equal([...line].at(-1), "█");
});
