/**
 * DueAlarms: times at which this process knows a job it put in `schedule` comes due (a durable sleep, a
 * wait's deadline), so the Poller polls then instead of at its next random interval (2.5–7.5 s away
 * with one process). Only the process that parked the job holds its alarm; if it exits, the ordinary
 * poll still moves the job, as for any scheduled job.
 *
 * Bounded: at most MAX_ALARMS distinct times are kept (the rest wait for the ordinary poll), times are
 * kept to the millisecond, and an alarm fires at most once however many jobs share it.
 */
import { sleep } from "../platform/util/sleep.js";
import { SYSTEM_CLOCK, type Clock } from "../platform/util/clock.js";

/** Distinct due times kept; 10,000 numbers are about 400 KB of Set. */
const MAX_ALARMS = 10_000;

/** Milliseconds after a due time before polling, so this process's clock has passed the job's score. */
const MARGIN_MS = 5;

export class DueAlarms {
  /** Due times, epoch ms. */
  private readonly times = new Set<number>();
  /** Ends the Poller's current wait early; set while it waits. */
  private wake: (() => void) | undefined;
  /** Cancels the timer armed for the earliest alarm. */
  private cancelTimer: (() => void) | undefined;
  private armedFor = Infinity;

  constructor(private readonly clock: Clock = SYSTEM_CLOCK) {}

  /** A job is due at `atSeconds` (epoch seconds): poll then. Past times poll at once. */
  add(atSeconds: number): void {
    if (!Number.isFinite(atSeconds)) return;
    if (this.times.size >= MAX_ALARMS) return;
    this.times.add(Math.ceil(atSeconds * 1000) + MARGIN_MS);
    this.arm();
  }

  get size(): number {
    return this.times.size;
  }

  /**
   * Waits `ms`, or until the earliest alarm comes due, or until `signal` aborts. Alarms due by the time
   * it returns are spent: the poll that follows moves their jobs.
   */
  async sleep(ms: number, signal: AbortSignal): Promise<void> {
    const cut = new AbortController();
    const both = AbortSignal.any([signal, cut.signal]);
    this.wake = () => cut.abort();
    try {
      if (!this.dueNow()) await sleep(ms, both, this.clock);
    } finally {
      this.wake = undefined;
      this.spend();
    }
  }

  /** Forgets every alarm and its timer (the worker stops). */
  clear(): void {
    this.times.clear();
    this.cancelTimer?.();
    this.cancelTimer = undefined;
    this.armedFor = Infinity;
  }

  private dueNow(): boolean {
    const now = this.clock.now();
    for (const at of this.times) if (at <= now) return true;
    return false;
  }

  private spend(): void {
    const now = this.clock.now();
    for (const at of this.times) if (at <= now) this.times.delete(at);
    this.arm();
  }

  /** One timer, for the earliest alarm. */
  private arm(): void {
    let earliest = Infinity;
    for (const at of this.times) if (at < earliest) earliest = at;
    if (earliest === this.armedFor) return;
    this.cancelTimer?.();
    this.cancelTimer = undefined;
    this.armedFor = earliest;
    if (earliest === Infinity) return;
    // Mid-poll (no wait to end), the next sleep() finds the alarm due and returns at once. A timer
    // for a far alarm (past setTimeout's 24.8 days) is chained by the clock (platform/util/longTimer.ts).
    this.cancelTimer = this.clock.after(
      earliest - this.clock.now(),
      () => {
        this.cancelTimer = undefined;
        this.armedFor = Infinity;
        // A timer counts from the event loop's cached time, which a busy process lets fall behind: it
        // can fire milliseconds before the alarm. Then it is armed again for what is left.
        if (this.clock.now() < earliest) return this.arm();
        this.wake?.();
      },
      true,
    );
  }
}
