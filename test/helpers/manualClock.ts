/**
 * A Clock that moves only when a test says so: `advance(ms)` fires the timers that come due, in order,
 * letting what each one starts run to its next wait. Roles built on it (Poller, CronScheduler, Leader,
 * SidekiqCronPoller) then take no real time to cover minutes of theirs.
 */
import type { Clock } from "../../src/platform/util/clock.js";

interface Timer {
  at: number;
  fn: () => void;
}

/** Lets pending promise callbacks and I/O callbacks queued so far run. */
const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

export class ManualClock implements Clock {
  private current: number;
  private readonly timers = new Set<Timer>();
  private waiters: Array<{ count: number; resolve: () => void }> = [];

  /** @param start epoch ms the clock shows first; default a fixed whole second, for repeatable ticks. */
  constructor(start = Date.UTC(2030, 0, 1)) {
    this.current = start;
  }

  now(): number {
    return this.current;
  }

  monotonic(): number {
    return this.current;
  }

  after(ms: number, fn: () => void): () => void {
    const timer = { at: this.current + Math.max(ms, 0), fn };
    this.timers.add(timer);
    this.waiters = this.waiters.filter((w) => (this.timers.size >= w.count ? (w.resolve(), false) : true));
    return () => this.timers.delete(timer);
  }

  /** Timers waiting to fire. */
  get pending(): number {
    return this.timers.size;
  }

  /** Resolves once at least `count` timers are waiting: the roles under test have all gone to sleep. */
  waitForTimers(count = 1): Promise<void> {
    if (this.timers.size >= count) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push({ count, resolve }));
  }

  /** Moves the clock `ms` forward, firing due timers in due order; `settle` is awaited after each. */
  async advance(ms: number, settle: () => Promise<void> = turn): Promise<void> {
    const end = this.current + ms;
    for (;;) {
      let next: Timer | undefined;
      for (const timer of this.timers) if (timer.at <= end && (next === undefined || timer.at < next.at)) next = timer;
      if (next === undefined) break;
      this.timers.delete(next);
      this.current = Math.max(this.current, next.at);
      next.fn();
      await settle();
    }
    this.current = end;
  }

  /** Sets the time outright (forward or back: a stepped wall clock); no timer fires. */
  set(epochMs: number): void {
    this.current = epochMs;
  }
}
