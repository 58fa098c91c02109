/**
 * FetchAhead: reliable fetch's next batch, fetched while the current one runs.
 *
 * A capsule fetches only for free slots, so with short jobs it runs a batch, finds every slot free at
 * once, and then waits a round trip (plus reliable-fetch.lua's time in Redis) with nothing to run. When
 * a fetch filled every free slot (there is a backlog), the next batch of the same size is fetched at
 * once and handed out as slots free, so the worker does not wait for Redis between batches.
 *
 * Only reliable fetch does this: a job fetched ahead sits in the process's private list like a running
 * one, so a crash loses nothing (recovery puts it back); with basic fetch it would exist only in memory.
 *
 * Jobs fetched ahead must not wait behind long jobs while other processes could run them: those not
 * taken within WAIT_MS go back to the front of their queue, and fetching ahead then stays off for
 * BACKOFF_MS (a workload of long jobs gives back one batch every few seconds, not one per job). A stop
 * gives them back too (`release`), before the process's acks drain.
 */
import { performance } from "node:perf_hooks";
import type { Logger } from "../../platform/logger.js";
import type { UnitOfWork } from "./unitOfWork.js";

/** ms a job fetched ahead may wait for a slot before it goes back to its queue. */
const WAIT_MS = 100;
/** ms without fetching ahead after a batch had to be given back. */
const BACKOFF_MS = 5000;

export class FetchAhead<U extends UnitOfWork> {
  /** Fetched ahead and not yet handed out, oldest first. */
  private ready: U[] = [];
  private inFlight: Promise<void> | undefined;
  private timer: NodeJS.Timeout | undefined;
  /** performance.now() before which no fetch goes ahead. */
  private offUntil = 0;
  private stopped = false;

  /**
   * @param fetch    a fetch that never blocks in Redis (an empty queue answers [] at once)
   * @param giveBack puts jobs back at the front of their queues, newest first
   */
  constructor(
    private readonly fetch: (max: number) => Promise<U[]>,
    private readonly giveBack: (units: U[]) => Promise<void>,
    private readonly logger: Logger,
  ) {}

  /** Up to `max` jobs fetched ahead (waiting for one fetch ahead in flight); [] when there are none. */
  async take(max: number): Promise<U[]> {
    if (this.inFlight) await this.inFlight;
    if (this.ready.length === 0) return [];
    const units = this.ready.splice(0, max);
    if (this.ready.length === 0) this.clearTimer();
    return units;
  }

  /** The last fetch filled every free slot: fetch as many again now, unless backing off or stopped. */
  start(max: number): void {
    if (this.stopped || this.inFlight || this.ready.length > 0 || performance.now() < this.offUntil) return;
    this.inFlight = this.fetch(max)
      .then((units) => {
        if (units.length === 0) return;
        this.ready = units;
        if (this.stopped) return void this.returnAll();
        this.timer = setTimeout(() => void this.returnAll(BACKOFF_MS), WAIT_MS);
        this.timer.unref();
      })
      // A failed fetch ahead is only a missed head start: the next fetch for free slots reports errors.
      .catch((error: unknown) => this.logger.debug({ err: error }, "fetch ahead failed"))
      .finally(() => (this.inFlight = undefined));
  }

  /** Stop fetching ahead and give back what is waiting. Idempotent. */
  async release(): Promise<void> {
    this.stopped = true;
    if (this.inFlight) await this.inFlight;
    await this.returnAll();
  }

  private async returnAll(backoffMs = 0): Promise<void> {
    this.clearTimer();
    if (backoffMs > 0) this.offUntil = performance.now() + backoffMs;
    const units = this.ready;
    this.ready = [];
    if (units.length === 0) return;
    try {
      await this.giveBack([...units].reverse()); // newest first: the oldest is again the next popped
    } catch (error) {
      // They stay in the private list: the stop's leftover requeue or a recovery puts them back.
      this.logger.warn({ err: error, jobs: units.length }, "could not give back jobs fetched ahead");
    }
  }

  private clearTimer(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }
}
