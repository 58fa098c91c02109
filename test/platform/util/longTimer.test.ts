/**
 * longTimeout fires a month or a year from now, not at once (setTimeout's 2^31-1 ms limit), on a
 * ManualClock whose timers refuse any delay past that limit, so the chain is checked as Node would run
 * it; 0, negative and NaN fire on the next turn; cancel works mid-chain. checkDuration names the option.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { ManualClock } from "../../helpers/manualClock.js";
import {
  checkDuration,
  longTimeout,
  MAX_DURATION_SECONDS,
  MAX_TIMER_MS,
  type TimerBase,
} from "../../../src/platform/util/longTimer.js";
import { SYSTEM_CLOCK } from "../../../src/platform/util/clock.js";

const DAY_MS = 86_400_000;

/** A ManualClock whose timers behave as Node's: a delay past MAX_TIMER_MS is a bug (Node fires it at 1 ms). */
function nodeLike(clock: ManualClock): TimerBase & { delays: number[] } {
  const delays: number[] = [];
  return {
    delays,
    monotonic: () => clock.monotonic(),
    after(ms, fn) {
      assert.ok(ms <= MAX_TIMER_MS, `a timer of ${ms} ms was armed: Node would fire it after 1 ms`);
      delays.push(ms);
      return clock.after(ms, fn);
    },
  };
}

for (const [label, ms] of [
  ["a month", 30 * DAY_MS],
  ["a year", 365 * DAY_MS],
  ["just past the limit", MAX_TIMER_MS + 1],
] as const) {
  test(`a timeout of ${label} fires at its deadline, not before`, async () => {
    const clock = new ManualClock();
    const base = nodeLike(clock);
    let firedAt: number | undefined;
    const start = clock.monotonic();
    longTimeout(ms, () => (firedAt = clock.monotonic() - start), false, base);
    await clock.advance(ms - 1);
    assert.equal(firedAt, undefined, "fired before its deadline");
    await clock.advance(1);
    assert.equal(firedAt, ms);
    assert.ok(base.delays.length >= 2, `chained over ${base.delays.length} timer(s)`);
    assert.equal(clock.pending, 0, "no timer left behind");
  });
}

test("a timeout within the limit is one timer", async () => {
  const clock = new ManualClock();
  const base = nodeLike(clock);
  let fired = 0;
  longTimeout(5_000, () => fired++, false, base);
  await clock.advance(5_000);
  assert.equal(fired, 1);
  assert.deepEqual(base.delays, [5_000]);
});

for (const ms of [0, -5_000, Number.NaN]) {
  test(`a timeout of ${ms} ms fires on the next turn`, async () => {
    const clock = new ManualClock();
    const base = nodeLike(clock);
    let fired = 0;
    longTimeout(ms, () => fired++, false, base);
    assert.deepEqual(base.delays, [0]);
    await clock.advance(0);
    assert.equal(fired, 1);
  });
}

test("cancelling a month-long timeout mid-chain: it never fires and leaves no timer", async () => {
  const clock = new ManualClock();
  const base = nodeLike(clock);
  let fired = 0;
  const cancel = longTimeout(30 * DAY_MS, () => fired++, false, base);
  await clock.advance(26 * DAY_MS); // past the first link
  assert.equal(base.delays.length, 2);
  cancel();
  await clock.advance(10 * DAY_MS);
  assert.equal(fired, 0);
  assert.equal(clock.pending, 0);
});

test("on the process's timers: a month-long unref'd timer does not fire at once and holds no process open", async () => {
  let fired = 0;
  const cancel = SYSTEM_CLOCK.after(30 * DAY_MS, () => fired++, true);
  await new Promise((resolve) => setTimeout(resolve, 50));
  assert.equal(fired, 0, "fired at once (setTimeout overflow)");
  cancel();
  let quick = 0;
  longTimeout(10, () => quick++, true);
  await new Promise((resolve) => setTimeout(resolve, 100));
  assert.equal(quick, 1);
});

test("checkDuration: 0, negative, NaN, non-numbers and past 10 years are refused, naming the option", () => {
  const rule = { what: "HardJob.timeout", fix: "leave it out for no timeout" };
  assert.equal(checkDuration(30 * 86_400, rule), 30 * 86_400);
  assert.equal(checkDuration(365 * 86_400, rule), 365 * 86_400);
  assert.equal(checkDuration(0, { ...rule, zero: true }), 0);
  assert.throws(() => checkDuration(0, rule), /HardJob\.timeout must be seconds > 0, got 0; leave it out/);
  assert.throws(() => checkDuration(-1, { ...rule, zero: true }), /must be seconds >= 0, got -1/);
  assert.throws(() => checkDuration(Number.NaN, rule), /HardJob\.timeout must be a number of seconds > 0, got NaN/);
  assert.throws(() => checkDuration("30", rule), /got "30"/);
  assert.throws(() => checkDuration(Infinity, rule), /over the longest allowed, 315360000 s \(10 years\)/);
  assert.throws(() => checkDuration(MAX_DURATION_SECONDS + 1, rule), /give it in seconds \(not milliseconds\)/);
  assert.throws(() => checkDuration(86_401, { ...rule, max: 86_400 }), /longest allowed, 86400 s \(a day\)/);
});
