/**
 * Clock: the time a server role reads and the timers it waits on, in one injectable object, so the
 * roles that run on time (the scheduled poller, the cron scheduler and leader election, sidekiq-cron
 * polling) can be driven by hand in tests instead of waiting seconds of real time.
 */
import { performance } from "node:perf_hooks";

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

/** setTimeout takes at most 2^31-1 ms (24.8 days); longer waits fire then and the caller re-arms. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** The process's own clock: Date.now, performance.now and setTimeout. */
export const SYSTEM_CLOCK: Clock = Object.freeze({
  now: () => Date.now(),
  monotonic: () => performance.now(),
  after(ms: number, fn: () => void, unref = false): () => void {
    const timer = setTimeout(fn, Math.min(Math.max(ms, 0), MAX_TIMER_MS));
    if (unref) timer.unref();
    return () => clearTimeout(timer);
  },
});
