// The classifier request runner: limiter, time budget, failures.
import assert from "node:assert/strict";
import { test } from "node:test";
import { type Classify, runRequests } from "../../extension/guard/requests.ts";

const request = (n: number) => ({ state: { n }, questions: {} });
const answer = { stopReason: "stop", answers: { keep_whole: { type: "bool", probability: 0.1 } }, usage: { input: 10, cost: { total: 0.001 } } };

test("never more than `concurrency` requests in flight, and outcomes stay in order", async () => {
  let inFlight = 0;
  let most = 0;
  const classify: Classify = async (context) => {
    inFlight++;
    most = Math.max(most, inFlight);
    await new Promise((r) => setTimeout(r, 5 + (Number((context.state as { n: number }).n) % 3)));
    inFlight--;
    return { ...answer, answers: { n: (context.state as { n: number }).n } };
  };
  const run = await runRequests(
    Array.from({ length: 20 }, (_, i) => request(i)),
    classify,
    { concurrency: 3, timeoutMs: 5_000 },
  );
  assert.equal(most, 3);
  assert.equal(run.timedOut, false);
  run.outcomes.forEach((o, i) => assert.deepEqual(o.status === "answered" && o.answers, { n: i }));
});

test("a hang that ignores abort cannot hold the pass past its budget", async () => {
  const classify: Classify = () => new Promise(() => {});
  const started = Date.now();
  const run = await runRequests([request(1), request(2)], classify, { concurrency: 6, timeoutMs: 150 });
  const took = Date.now() - started;
  assert.ok(took >= 140 && took < 400, `took ${took} ms`);
  assert.equal(run.timedOut, true);
  assert.deepEqual(run.outcomes, [{ status: "timeout" }, { status: "timeout" }]);
});

test("errors, throws and late answers are outcomes, never exceptions", async () => {
  const behaviours: Classify[] = [
    async () => ({ stopReason: "error", errorMessage: "upstream 500" }),
    async () => {
      throw new Error("reset");
    },
    () => new Promise((r) => setTimeout(() => r(answer), 400)),
    async () => answer,
  ];
  const requests = behaviours.map((_, i) => request(i));
  const run = await runRequests(requests, (ctx, o) => behaviours[Number((ctx.state as { n: number }).n)](ctx, o), { concurrency: 4, timeoutMs: 100 });
  assert.deepEqual(run.outcomes[0], { status: "error", message: "upstream 500" });
  assert.deepEqual(run.outcomes[1], { status: "error", message: "reset" });
  assert.deepEqual(run.outcomes[2], { status: "timeout" });
  assert.equal(run.outcomes[3].status, "answered");
});

test("nothing starts after the budget is spent", async () => {
  let started = 0;
  const classify: Classify = () => {
    started++;
    return new Promise((r) => setTimeout(() => r(answer), 80));
  };
  await runRequests(
    Array.from({ length: 10 }, (_, i) => request(i)),
    classify,
    { concurrency: 2, timeoutMs: 100 },
  );
  assert.equal(started, 4);
});

test("the caller's abort stops the pass at once: running requests see it, nothing new starts, nothing counts as answered", async () => {
  const caller = new AbortController();
  const seen: AbortSignal[] = [];
  const classify: Classify = (_context, options) => {
    seen.push(options.signal);
    return new Promise((r) => setTimeout(() => r(answer), 300));
  };
  setTimeout(() => caller.abort(), 30);
  const started = Date.now();
  const run = await runRequests(
    Array.from({ length: 6 }, (_, i) => request(i)),
    classify,
    { concurrency: 2, timeoutMs: 5_000, signal: caller.signal },
  );
  const took = Date.now() - started;
  assert.ok(took < 250, `took ${took} ms`);
  assert.equal(seen.length, 2);
  assert.ok(seen.every((s) => s.aborted));
  assert.equal(run.timedOut, false);
  assert.deepEqual(
    run.outcomes,
    Array.from({ length: 6 }, () => ({ status: "timeout" })),
  );
});

test("a signal aborted before the call starts nothing", async () => {
  let started = 0;
  const classify: Classify = async () => {
    started++;
    return answer;
  };
  const run = await runRequests([request(1), request(2)], classify, { concurrency: 2, timeoutMs: 5_000, signal: AbortSignal.abort() });
  assert.equal(started, 0);
  assert.deepEqual(run.outcomes, [{ status: "timeout" }, { status: "timeout" }]);
});

test("a judge's reply becomes a `replied` outcome with its usage; a judge that stops otherwise is an error", async () => {
  const replies = [
    { stopReason: "stop", reply: '{"answers": {"keep_whole": 0.2}}', usage: { input: 1200, cost: { total: 0.0012 } } },
    { stopReason: "length", reply: '{"answers": {"keep', errorMessage: undefined },
    { stopReason: "stop", reply: "", usage: { input: Number.NaN } },
  ];
  const run = await runRequests([request(0), request(1), request(2)], async (context) => replies[(context.state as { n: number }).n], {
    concurrency: 1,
    timeoutMs: 5_000,
  });
  assert.deepEqual(run.outcomes, [
    { status: "replied", text: '{"answers": {"keep_whole": 0.2}}', inputTokens: 1200, costUsd: 0.0012 },
    { status: "error", message: "classifier stopped: length" },
    { status: "replied", text: "", inputTokens: 0, costUsd: 0 },
  ]);
});
