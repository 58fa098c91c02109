/**
 * StopBudget: how long each step of a graceful stop may take, so a stop always ends, Redis or not.
 *
 *   t = 0            TERM: quiet (stop fetching; one beat publishes quiet="true", at most QUIET_WRITE_MS)
 *   until -t         running jobs finish
 *   -t               the rest are requeued (basic) or left in the private lists (reliable)
 *   until -t + 2 s   Redis writes of the stop: requeues, stats, leaving `processes`, closing connections
 *
 * A step whose Redis is unreachable is given up when its time is over (at once when the connection is
 * already down) and the caller logs what could not be written. A worker's whole stop so ends within
 * `-t` + 3 s, before the supervisor's SIGKILL at `-t` + 5 s. A second TERM/INT (`hurry`) ends the wait
 * for running jobs at once and leaves their requeue at most HURRY_WRITE_MS.
 */
import { performance } from "node:perf_hooks";
import type { TsqRedis } from "../platform/redis/connection.js";
import { settlesWithin } from "../platform/util/sleep.js";

/** ms a stop's Redis writes may take after the job deadline. */
export const CLEANUP_GRACE_MS = 2000;
/** ms the Redis writes of a stop may take after a second signal (requeueing the running jobs). */
export const HURRY_WRITE_MS = 1000;
/** ms the quiet beat may take: it only updates what the Web UI shows. */
export const QUIET_WRITE_MS = 1000;

export class StopBudget {
  /** performance.now() ms by which running jobs must finish. */
  readonly jobsDeadline: number;
  /** performance.now() ms by which the stop's Redis writes must be done. */
  readonly cleanupBy: number;
  /** Aborted by a second signal: waits for running jobs end now. */
  private readonly cut = new AbortController();
  /** Aborted HURRY_WRITE_MS after a second signal: waits for Redis writes end too. */
  private readonly urgent = new AbortController();
  private hurryBy = Infinity;

  constructor(timeoutSeconds: number, now = performance.now()) {
    this.jobsDeadline = now + timeoutSeconds * 1000;
    this.cleanupBy = this.jobsDeadline + CLEANUP_GRACE_MS;
  }

  /**
   * A second stop signal: stop waiting for running jobs now, and give the Redis writes that follow
   * (requeueing those jobs) at most HURRY_WRITE_MS more.
   */
  hurry(): void {
    if (this.cut.signal.aborted) return;
    this.hurryBy = performance.now() + HURRY_WRITE_MS;
    this.cut.abort();
    setTimeout(() => this.urgent.abort(), HURRY_WRITE_MS).unref();
  }

  /** Aborted at once by `hurry`: for waits on running jobs. */
  get hurried(): AbortSignal {
    return this.cut.signal;
  }

  /**
   * Starts a Redis step on `redis` and waits for it until `by` (default: the cleanup deadline); false if
   * it did not settle in time. When the connection is already down the step is started (its in-memory
   * part, such as stopping a loop, still matters) but not waited for: its commands would wait for a
   * reconnect.
   */
  async within(redis: TsqRedis, step: () => Promise<unknown>, by = this.cleanupBy): Promise<boolean> {
    const ms = redis.status === "ready" ? Math.min(by, this.hurryBy) - performance.now() : 0;
    return settlesWithin(step(), ms, this.urgent.signal);
  }
}
