/**
 * The push side of concurrency limits, a client middleware every Client installs after deduplication and
 * unique jobs (a dropped duplicate is never parked). Jobs fetched at the same moment by different
 * processes reach the fetch-time check (ServerMiddleware.ts) in either order; pushes reach Redis one at a
 * time. So the decision is taken at push, and slots are granted exactly in the order pushes reach Redis:
 *
 *   admitted      a job of a class whose `concurrencyLimit` is not 0, pushed by a tsq Client to run now:
 *                 one limit-slot-4.lua call ("admit") instead of the LPUSH appends it to the class's
 *                 parked list (`concurrency_limit_resume: true`, `concurrency_limit_buffered_at`) and hands
 *                 free slots to the oldest parked jobs, which go to their queue holding their slot. The
 *                 worker that fetches one finds the slot its own and runs it.
 *   fetch time    everything else, as before: scheduled jobs (the poller pushes them when due), payloads
 *                 parsed from stored text (re-pushes of jobs enqueued before: the poller's, the API's),
 *                 concurrency-limit resumes, pushes by name of a class this process has not loaded, and
 *                 jobs pushed by Ruby.
 *   list full     the job is not written: ConcurrencyLimitFullError naming it, its locks released.
 *
 * The middleware only marks the job (in this Client's own Admission). The client's writer (JobWriter)
 * makes the call through the plug-in's `alternateWrite` once strict args and serialization passed, so
 * later middleware still runs and reliable push can hold the job; a job built for another atomic write
 * (a periodic job's tick claim, a batch callback) is not admitted (Client.build).
 */
import type { ClientEventBus } from "../../../client/events.js";
import type { AlternateWrite, ClientMiddlewareArgs, PreparedJob } from "../../../client/plugin.js";
import { jobClassOf } from "../../../client/jobClasses.js";
import { DEFAULTS } from "../../../platform/config/defaults.js";
import { maxParked } from "./settings.js";
import { ConcurrencyLimitFullError } from "./errors.js";
import { limitParkedKey } from "../../../wire/keys.js";
import { limitSlot } from "./limitSlot.js";
import { releaseLocksOf } from "../release.js";
import { logger } from "../../../platform/logger.js";
import type { Next } from "../../../platform/Chain.js";
import { displayClass, wasStored, type JobPayload } from "../../../wire/payload.js";
import type { TsqRedis } from "../../../platform/redis/connection.js";
import { nowSeconds } from "../../../wire/timestamps.js";
import { concurrencyLimitOf } from "./policy.js";

export interface AdmissionSettings {
  /** Most jobs one class may have parked (the workers' `concurrency_limit_max_parked`). */
  maxParked: number;
  /** Seconds a slot granted at push lasts while its job waits in its queue (the heartbeat TTL). */
  slotTtl: number;
}

export const ADMISSION_DEFAULTS: Readonly<AdmissionSettings> = Object.freeze({
  maxParked: maxParked.default,
  slotTtl: DEFAULTS.heartbeatTtl,
});

/**
 * One Client's admissions: the jobs its middleware marked, with the limit read at push (a function
 * limit is read once per job). Per Client, so two clients with different bounds stay apart.
 */
export class Admission implements AlternateWrite {
  private readonly marked = new WeakMap<JobPayload, number>();

  constructor(
    private readonly settings: AdmissionSettings,
    /** The Client's events: parked and refused pushes are announced there (counted by the metrics). */
    private readonly events: ClientEventBus,
  ) {}

  readonly middleware = async (
    _className: ClientMiddlewareArgs[0],
    job: ClientMiddlewareArgs[1],
    _queue: ClientMiddlewareArgs[2],
    _redis: ClientMiddlewareArgs[3],
    next: Next,
  ): Promise<void> => {
    if (job.at === undefined && job.concurrency_limit_resume !== true && !wasStored(job)) {
      const limit = concurrencyLimitOf(jobClassOf(job));
      if (limit !== 0) this.marked.set(job, limit);
    }
    return next();
  };

  /**
   * Once the middleware chain ran, before serialization: a marked job about to be written gets
   * GitLab's resume fields; one built for another write, or scheduled by a later middleware, is written
   * as usual.
   */
  claim(job: JobPayload, writing: boolean): void {
    if (!this.marked.has(job)) return;
    if (!writing || job.at !== undefined) {
      this.marked.delete(job);
      return;
    }
    job.concurrency_limit_resume = true;
    job.concurrency_limit_buffered_at = nowSeconds();
  }

  owns(job: JobPayload): boolean {
    return this.marked.has(job);
  }

  /** A job admitted at push is parked if no slot was free. */
  landingLists(job: JobPayload): string[] {
    return [limitParkedKey(displayClass(job))];
  }

  /**
   * Admits marked jobs, in order: one limit-slot-4.lua call each, all sent before the first reply (one
   * connection runs commands in the order they were sent). Throws ConcurrencyLimitFullError naming the
   * jobs a full parked list refused, after releasing their locks; the others are written.
   */
  async write(redis: TsqRedis, entries: readonly PreparedJob[]): Promise<void> {
    const nowMs = Date.now();
    const { slotTtl, maxParked } = this.settings;
    const replies = await Promise.all(
      entries.map(({ job, json }) =>
        limitSlot(redis, {
          op: "admit",
          className: displayClass(job),
          jid: job.jid,
          slotTtl,
          limit: this.marked.get(job)!,
          nowMs,
          job: json,
          maxParked,
          resumed: false,
        }),
      ),
    );
    const refused: { job: JobPayload; parked: number }[] = [];
    replies.forEach(({ status, parked }, i) => {
      const { job } = entries[i]!;
      if (status === 0) this.reportParked(job, this.marked.get(job)!);
      else if (status === -1) refused.push({ job, parked });
    });
    if (refused.length === 0) return;
    for (const { job } of refused) this.events.emit("limited", job, job.queue, "refused");
    // Not enqueued: a dedup or unique lock taken for the job at push must not block its next push.
    await releaseLocksOf(
      redis,
      refused.map(({ job }) => job),
    ).catch((error: unknown) =>
      logger().warn({ err: error }, "could not release the locks of refused pushes; they expire by their ttl"),
    );
    throw refusal(refused, this.marked.get(refused[0]!.job)!);
  }

  /** Debug, not info as at fetch time: a push is a caller's hot path (a web request, `tsqctl push`'s stdout). */
  private reportParked(job: JobPayload, limit: number): void {
    const name = displayClass(job);
    logger().debug(
      { class: name, jid: job.jid, queue: job.queue, job_status: "concurrency_limit", concurrency_limit: limit },
      limit < 0
        ? `${name} is paused (concurrencyLimit < 0): job parked at push until the limit is raised`
        : `parked at push: all ${limit} slots of ${name} are taken; the job runs when one frees`,
    );
    this.events.emit("limited", job, job.queue, "parked");
  }
}

function refusal(refused: readonly { job: JobPayload; parked: number }[], limit: number): ConcurrencyLimitFullError {
  const { job, parked } = refused[0]!;
  const name = displayClass(job);
  const which =
    refused.length === 1
      ? `job ${job.jid} was`
      : `${refused.length} jobs (${refused.map((r) => r.job.jid).join(", ")}) were`;
  return new ConcurrencyLimitFullError(
    `${name}: ${parked} jobs are already parked waiting for ` +
      (limit < 0 ? "the class to be unpaused" : `one of its ${limit} slots`) +
      `; ${which} NOT enqueued. Push again later, raise the limit, add capacity, or raise ` +
      "concurrency_limit_max_parked (the Client option concurrencyLimits.maxParked)",
    refused.map((r) => r.job.jid),
  );
}
