/**
 * Timers of any length, and the check every duration a user passes goes through.
 *
 * setTimeout honours at most 2^31-1 ms (24.8 days): a longer delay fires after 1 ms with a
 * TimeoutOverflowWarning, so `static timeout = 30 * 86400` aborted a job at once. `longTimeout` chains
 * timers of at most that length against a deadline on a monotonic clock, so a month or a year fires when
 * it should; it is cancellable and unref-able like one setTimeout, and runs on an injected Clock's timers
 * (a ManualClock in tests) as well as on the process's own.
 */
import { performance } from "node:perf_hooks";
import { ArgumentError } from "../../wire/errors.js";

/** Longest delay one Node timer honours, in ms (about 24.8 days). */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * Longest duration a user may give a timeout, grace or wait, in seconds: 10 years. Longer means "never"
 * or a unit mistake (milliseconds given as seconds), and either is better said than armed.
 */
export const MAX_DURATION_SECONDS = 10 * 365 * 86_400;

/** The timers a long timeout is chained on: the process's own, or a Clock's (src/platform/util/clock.ts). */
export interface TimerBase {
  /** Milliseconds that never step back. */
  monotonic(): number;
  /** One timer of at most MAX_TIMER_MS; the result cancels it. */
  after(ms: number, fn: () => void, unref?: boolean): () => void;
}

/** Node's timers; `after` is only ever asked for at most MAX_TIMER_MS here. */
const NODE_TIMERS: TimerBase = {
  monotonic: () => performance.now(),
  after(ms, fn, unref = false) {
    const timer = setTimeout(fn, ms);
    if (unref) timer.unref();
    return () => clearTimeout(timer);
  },
};

/**
 * Calls `fn` once, `ms` milliseconds from now (0, negative or NaN: on the next timer turn), however long
 * `ms` is. The result cancels it; `unref`: the timer alone does not keep the process alive.
 */
export function longTimeout(ms: number, fn: () => void, unref = false, base: TimerBase = NODE_TIMERS): () => void {
  const delay = ms > 0 ? ms : 0; // NaN and negatives: at once, as setTimeout does
  const deadline = base.monotonic() + delay;
  let cancel: () => void = () => {};
  let cancelled = false;
  const arm = (left: number): void => {
    cancel = base.after(
      Math.min(left, MAX_TIMER_MS),
      () => {
        if (cancelled) return;
        // Timers may fire a little early or late: re-arm for what is left, measured, not counted.
        const rest = deadline - base.monotonic();
        if (rest > 0 && left > MAX_TIMER_MS) arm(rest);
        else fn();
      },
      unref,
    );
  };
  arm(delay);
  return () => {
    cancelled = true;
    cancel();
  };
}

export interface DurationRule {
  /** What the value is, as the user wrote it: "static timeout", "waitUntilFinished(jid, { timeout })". */
  what: string;
  /** True: 0 is allowed (a sleep of 0 s ends at once); false: the duration must be above 0. */
  zero?: boolean;
  /** Longest allowed, seconds; default MAX_DURATION_SECONDS. */
  max?: number;
  /** What to do instead, added to the message: "leave it out for no timeout". */
  fix?: string;
}

/**
 * `value` as seconds when it is a number in [0 (or above 0), MAX_DURATION_SECONDS]; otherwise an
 * ArgumentError naming the option, the value and what to do.
 */
export function checkDuration(value: unknown, rule: DurationRule): number {
  const fix = rule.fix ? `; ${rule.fix}` : "";
  const low = rule.zero ? ">= 0" : "> 0";
  if (typeof value !== "number" || Number.isNaN(value))
    throw new ArgumentError(`${rule.what} must be a number of seconds ${low}, got ${shown(value)}${fix}`);
  if (rule.zero ? value < 0 : value <= 0)
    throw new ArgumentError(`${rule.what} must be seconds ${low}, got ${value}${fix}`);
  const max = rule.max ?? MAX_DURATION_SECONDS;
  if (value > max)
    throw new ArgumentError(
      `${rule.what} of ${value} s is over the longest allowed, ${max} s (${inDays(max)}): ` +
        `give it in seconds (not milliseconds)${fix}`,
    );
  return value;
}

function inDays(seconds: number): string {
  const days = seconds / 86_400;
  if (days >= 365) return `${Math.round(days / 365)} years`;
  return days === 1 ? "a day" : `${days} days`;
}

function shown(value: unknown): string {
  if (typeof value === "string") return JSON.stringify(value.slice(0, 50));
  return typeof value === "number" || typeof value === "boolean" ? String(value) : typeof value;
}
