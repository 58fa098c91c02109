/**
 * The one way a test says how long something may take.
 *
 * A test never bounds a duration by a guess at the machine's speed: the suite runs several files at once
 * on two cores, often beside other work, and a bound that holds on a quiet machine fails on a busy one.
 * What a test may bound is a product deadline: a stop's `-t`, the 1 s a scrape waits for Redis, the
 * supervisor's kill at `-t + 5 s`. Those fail by running into the deadline, or by never ending, not by
 * being a few hundred milliseconds slow, so `withinDeadline` asserts the duration against the deadline
 * plus the slack a loaded machine needs: SLACK_MS, or the deadline again if that is longer.
 * `TSQ_TEST_SLOWDOWN` (a factor, default 1) stretches the slack on a slower machine.
 *
 * Everything else asserts order (this happened before that; the stop ended while Redis was still
 * down) or exact counts on an injectable clock (test/helpers/manualClock.ts). The lint rule in
 * eslint.config.js refuses `assert.ok(ms < 1000)`-style bounds in tests and points here.
 */
import assert from "node:assert/strict";

/** ms of slack over a deadline: more than a Node start-up and a GC pause on a busy 2-core machine. */
const SLACK_MS = 10_000;

/** The factor TSQ_TEST_SLOWDOWN sets (>= 1). */
function slowdown(): number {
  const factor = Number(process.env.TSQ_TEST_SLOWDOWN ?? 1);
  return Number.isFinite(factor) && factor >= 1 ? factor : 1;
}

/**
 * A give-up wait (`eventually`, `waitForLine`) bounds nothing the product promises: it only turns a hang
 * into a failure. So it is GIVE_UP_FACTOR times what the caller names: a green run never waits it
 * out, and a machine at a load of 15 (8 test files beside other work) still sees the event come.
 */
const GIVE_UP_FACTOR = 3;

/** How long a give-up wait the caller names `ms` really waits. */
export function giveUpAfter(ms: number): number {
  return ms * GIVE_UP_FACTOR * slowdown();
}

/** The longest a thing with this product deadline may take in a test. */
export function limitFor(deadlineMs: number): number {
  return deadlineMs + Math.max(SLACK_MS, deadlineMs) * slowdown();
}

/**
 * Asserts `tookMs` ended within `deadlineMs` (a deadline the product promises, named in `what`) plus
 * the slack of a loaded machine. `atLeastMs`, when given, is a lower bound the product must not beat
 * (pacing, a back-off), which no load can break.
 */
export function withinDeadline(tookMs: number, deadlineMs: number, what: string, atLeastMs = 0): void {
  const limit = limitFor(deadlineMs);
  assert.ok(
    tookMs >= atLeastMs,
    `${what}: took ${tookMs.toFixed(0)} ms, less than the ${atLeastMs} ms it must take at the least`,
  );
  assert.ok(
    tookMs <= limit,
    `${what}: took ${tookMs.toFixed(0)} ms, past its ${deadlineMs} ms deadline and ${limit - deadlineMs} ms of slack`,
  );
}
