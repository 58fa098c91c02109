/**
 * GitLab's LimitedCapacity pattern (`LimitedCapacity::Worker`, flow-control.md §2.3): "keep N jobs busy
 * while there is work". A subclass says how much work is left and how many may run, and does one unit
 * of work per run:
 *
 *   class ExportJob extends LimitedCapacityJob {
 *     async performWork(): Promise<void> { ... one unit of work ... }
 *     async remainingWorkCount(): Promise<number> { ... units left ... }
 *     maxRunningJobs(): number { return 5; }
 *   }
 *   await ExportJob.performWithCapacity();   // e.g. from a periodic job: pushes 5 copies
 *
 * Each copy takes one of `maxRunningJobs` slots of the class on the lock core (the concurrency-limit
 * slots, `tsq:lock:limit:<Class>`, so `tsqctl limits` shows them), skips the work when all are taken,
 * and after a successful unit pushes itself again while work remains. A failed unit is not retried
 * (`retry: 0`, as GitLab): the next performWithCapacity is the retry and back-off.
 *
 * Do not also give such a class a `static concurrencyLimit`: both would count the same slots.
 */
import { Job } from "../../../client/Job.js";
import { defaultClient } from "../../../client/defaultClient.js";
import type { JobOptions } from "../../../client/options.js";
import { jobNameOf } from "../../../client/options.js";
import { LIMITS, limitSlotsKey } from "../../../wire/keys.js";
import { acquireLock, refreshLock, releaseLock } from "../Lock.js";
import { newJid } from "../../../wire/payload.js";

export abstract class LimitedCapacityJob extends Job {
  static override options: JobOptions = { retry: 0 };
  /**
   * Seconds a slot lives unless refreshed (60, the heartbeat TTL); refreshed every third of that while
   * the work runs, so a copy lost with its process frees its slot within this time.
   */
  static capacitySlotTtl = 60;

  /** One unit of work, with the arguments given to performWithCapacity. */
  abstract performWork(...args: unknown[]): unknown;
  /** Units of work left; copies keep re-enqueuing themselves while it is above 0. */
  abstract remainingWorkCount(...args: unknown[]): number | Promise<number>;
  /** How many copies may run at once, cluster-wide. */
  abstract maxRunningJobs(): number | Promise<number>;

  /** Pushes `maxRunningJobs` copies (GitLab's `perform_with_capacity`); the jids, null where refused. */
  static async performWithCapacity(this: typeof LimitedCapacityJob, ...args: unknown[]): Promise<(string | null)[]> {
    const probe = new (this as unknown as new () => LimitedCapacityJob)();
    const copies = Math.max(0, Math.floor(await probe.maxRunningJobs()));
    if (copies === 0) return [];
    return defaultClient().pushBulk({ class: this, args: Array.from({ length: copies }, () => args) });
  }

  async perform(...args: unknown[]): Promise<void> {
    const klass = this.constructor as typeof LimitedCapacityJob;
    const name = jobNameOf(klass);
    const { redis } = defaultClient();
    const max = Math.floor(await this.maxRunningJobs());
    await redis.hset(LIMITS, name, String(max));
    if (max <= 0) return;
    const key = limitSlotsKey(name);
    const holder = this.jid || newJid();
    const ttlMs = klass.capacitySlotTtl * 1000;
    if (!(await acquireLock(redis, key, holder, { ttlMs, limit: max })).acquired) return; // full: nothing to do
    const timer = setInterval(() => void refreshLock(redis, key, holder, ttlMs).catch(() => undefined), ttlMs / 3);
    timer.unref();
    try {
      await this.performWork(...args);
    } finally {
      clearInterval(timer);
      await releaseLock(redis, key, holder);
    }
    // Reached only when the work succeeded; after the slot is free, so the copy pushed here can take it.
    if (!this.signal.aborted && (await this.remainingWorkCount(...args)) > 0)
      await defaultClient().push({ class: klass, args });
  }
}
