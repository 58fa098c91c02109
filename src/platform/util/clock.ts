/**
 * Clock: the time a server role reads and the timers it waits on, in one injectable object, so the
 * roles that run on time (the scheduled poller, the cron scheduler and leader election, sidekiq-cron
 * polling) can be driven by hand in tests instead of waiting seconds of real time.
 */
import { performance } from "node:perf_hooks";
import { longTimeout } from "./longTimer.js";

export interface Clock {
  /** Wall-clock epoch milliseconds: job timestamps, due times, cron ticks. */
  now(): number;
  /** Milliseconds that never step back (NTP, a VM pause): for "valid until" windows. */
  monotonic(): number;
  /**
   * Calls `fn` once, `ms` milliseconds from now on this clock. The result cancels it. `unref`: the
   * timer alone does not keep the process alive.
   */
  after(ms: number, fn: () => void, unref?: boolean): () => void;
}

/** The process's own clock: Date.now, performance.now and setTimeout (chained past 24.8 days: longTimer.ts). */
export const SYSTEM_CLOCK: Clock = Object.freeze({
  now: () => Date.now(),
  monotonic: () => performance.now(),
  after: (ms: number, fn: () => void, unref = false): (() => void) => longTimeout(ms, fn, unref),
});
