// The economy suite's session with pauses, inside real Pi with the guard at
// its defaults, on both loopback servers: six prompts of long-run.ts's
// `pausedSession` with 2, 10, 2, 2 and 10 minutes between them, on the
// harness's shifted clock (tests/harness/clock.ts), which the server and Pi
// share. Across each pause, Pi's message timestamps and the server's usage
// times move by the pause, together; after a 10-minute pause the first
// request finds the 5-minute cache lapsed, after a 2-minute one it reads. The
// pauses take no real time, so a lapse can only come from the shared clock.
import assert from "node:assert/strict";
import { test } from "node:test";
import { anthropicSession, breakpointsOf, startAnthropicServer } from "../harness/anthropic-server.ts";
import { shiftedClock } from "../harness/clock.ts";
import {
  checkRunWorked,
  LONG_RUN_PI_SETTINGS,
  oracleClassifier,
  oracleLines,
  pausedSession,
  project,
  promptWithPauses,
  putNodeOnPath,
  SESSION_PAUSE_MINUTES,
} from "../harness/long-run.ts";
import { openAiSession, startOpenAiServer } from "../harness/openai-server.ts";
import type { Loose } from "../harness/pi.ts";
import { startSession } from "../harness/session.ts";

/** How far apart two stamps of the same moment may be: the few real seconds a request and Pi's bookkeeping take. */
const SAME_MOMENT_MS = 5_000;

/** The system time, read without Date.now. */
const systemTime = () => performance.timeOrigin + performance.now();

for (const provider of ["anthropic", "openai"] as const) {
  test(`${provider}: Pi's timestamps and the server's clock move together across the session's pauses, and the cache lapses after 10 minutes only`, async () => {
    putNodeOnPath();
    const p = project(SESSION_PAUSE_MINUTES.length + 1);
    const prompts = pausedSession(p);
    const clock = shiftedClock();
    try {
      const script = prompts.flatMap((x) => x.steps);
      const server = provider === "anthropic" ? await startAnthropicServer(script, { clock }) : await startOpenAiServer(script, { clock });
      const loopback = provider === "anthropic" ? anthropicSession(server as never) : openAiSession(server as never);
      const pi = await startSession({
        ...loopback.options,
        files: p.files,
        classifier: oracleClassifier(oracleLines(p)),
        piSettings: { ...LONG_RUN_PI_SETTINGS, ...loopback.options.piSettings },
      });
      try {
        await loopback.select(pi);
        /** The index of each prompt's first request. */
        const firsts = await promptWithPauses(pi, server, clock, prompts);
        assert.equal(server.bodies.length, 25, "5 requests for the first prompt, 4 for each later one");
        const branch = pi.branch();
        checkRunWorked(branch, p);
        assert.equal(clock.offset(), 26 * 60_000, "2 + 10 + 2 + 10 + 2 minutes");

        // Pi's replies and prompts, in order, with their timestamps.
        const messages = branch.filter((e: Loose) => e.type === "message").map((e: Loose) => e.message);
        const replies = messages.filter((m: Loose) => m.role === "assistant");
        const asked = messages.filter((m: Loose) => m.role === "user");
        assert.equal(replies.length, server.usage.length);
        assert.equal(asked.length, prompts.length);
        // Each reply is stamped at the moment the server counted its request.
        replies.forEach((m: Loose, i: number) => {
          const apart = Math.abs(m.timestamp - server.usage[i].at);
          assert.ok(
            apart < SAME_MOMENT_MS,
            `request ${i + 1}: Pi stamped its reply ${m.timestamp}, the server counted it at ${server.usage[i].at} (${apart} ms apart)`,
          );
        });
        // The whole session lies on the shifted clock: it ends 26 minutes past the system time.
        assert.ok(replies.at(-1).timestamp - systemTime() > 26 * 60_000 - SAME_MOMENT_MS, "Pi's last stamp is on the shifted clock");

        for (let k = 1; k < prompts.length; k++) {
          const pause = prompts[k].pauseMs;
          const [before, after] = [firsts[k] - 1, firsts[k]];
          const serverGap = server.usage[after].at - server.usage[before].at;
          const piGap = asked[k].timestamp - replies[before].timestamp;
          const where = `pause ${k} (${pause / 60_000} min)`;
          assert.ok(serverGap >= pause && serverGap < pause + SAME_MOMENT_MS, `${where}: the server's clock moved ${serverGap} ms`);
          assert.ok(piGap >= pause && piGap < pause + SAME_MOMENT_MS, `${where}: Pi's prompt came ${piGap} ms after its last reply`);
          assert.ok(replies[after].timestamp - asked[k].timestamp < SAME_MOMENT_MS, `${where}: the next reply follows the prompt`);

          // Every breakpoint Pi (and the guard's pin) placed lives 5 minutes: nothing was written to outlast 10.
          if (provider === "anthropic") {
            for (const body of server.bodies.slice(0, after)) {
              const marked = breakpointsOf(body).length;
              assert.equal(JSON.stringify(body).split('"ttl":"1h"').length - 1, 0, `${where}: ${marked} breakpoints, none with a 1-hour TTL`);
            }
          }
          const read = server.usage[after].read;
          if (pause >= 10 * 60_000) assert.equal(read, 0, `${where}: the first request after it reads nothing (the 5-minute cache lapsed)`);
          else assert.ok(read > 0, `${where}: the first request after it reads ${read} tokens (the cache is live)`);
        }
        // Within a prompt the cache reads as usual.
        server.usage.forEach((u, i) => {
          if (i > 0 && !firsts.includes(i)) assert.ok(u.read > 0, `request ${i + 1} reads from the cache`);
        });
      } finally {
        await pi.dispose();
        await server.close();
        delete process.env.ANTHROPIC_API_KEY;
        delete process.env.OPENAI_API_KEY;
      }
    } finally {
      clock.restore();
    }
    assert.ok(Math.abs(Date.now() - systemTime()) < 1_000, "Date.now is the system's again");
    // One shifted clock at a time, moving forward only.
    const again = shiftedClock();
    try {
      assert.throws(() => shiftedClock(), /already installed/);
      assert.throws(() => again.advance(-1), /finite number ≥ 0/);
    } finally {
      again.restore();
    }
  });
}
