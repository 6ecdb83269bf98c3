// One clock for a loopback server and the Pi session beside it, in the same
// process: `Date.now` shifted by an offset that `advance(ms)` grows.
//
// Why shift the process's own clock rather than hand the server a manual one
// (`manualClock` in anthropic-server.ts): Pi stamps every message with
// `Date.now()`, and the guard reads `Date.now()` too (the cache pin's log of
// what is cached, and the time of a prompt against the previous request's).
// A pause the server sees must be a pause Pi and the guard see, or a test of
// an expired cache would show the server and the session disagreeing about
// when things happened. So a session with pauses (the economy suite's
// "6 prompts with pauses") installs this clock, passes it to the server as
// its `clock`, advances it between prompts, and restores `Date.now` after.
//
// For: pauses of minutes between prompts, while Pi is idle. Not for: moving
// time inside a run (timers run on Node's monotonic clock, not on `Date.now`,
// so a timeout does not fire because of an advance), and not for `new Date()`
// without arguments, which reads the system time whatever `Date.now` is: Pi's
// entry timestamps (ISO strings) keep the real time; its message timestamps
// (numbers) follow this clock.
import type { Clock } from "./anthropic-server.ts";

export interface ShiftedClock extends Clock {
  /** Moves the clock forward by `ms` (a finite number ≥ 0). */
  advance(ms: number): void;
  /** How far this clock is ahead of the system time, in ms. */
  offset(): number;
  /** Puts the system's `Date.now` back. Calling it twice is harmless. */
  restore(): void;
}

let installed: ShiftedClock | undefined;

/**
 * Replaces `Date.now` with the system time plus an offset (0 at first) and
 * returns the clock. One at a time: installing a second before the first is
 * restored throws, so two sessions never fight over the offset.
 */
export function shiftedClock(): ShiftedClock {
  if (installed) throw new Error("shiftedClock: a shifted clock is already installed; restore() it first");
  const systemNow = Date.now;
  let offset = 0;
  const now = () => systemNow() + offset;
  const clock: ShiftedClock = {
    now,
    advance(ms: number) {
      if (!Number.isFinite(ms) || ms < 0) throw new Error(`shiftedClock.advance: ms must be a finite number ≥ 0, got ${ms}`);
      offset += ms;
    },
    offset: () => offset,
    restore() {
      if (installed !== clock) return;
      Date.now = systemNow;
      installed = undefined;
    },
  };
  Date.now = now;
  installed = clock;
  return clock;
}
