/**
 * The run side of concurrency limits (GitLab's `ConcurrencyLimit::Server`), a server middleware the
 * Launcher puts ahead of deduplication, so a job parked here keeps its dedup lock as if it had not been
 * fetched (it has not started), and no user middleware can skip the release of a slot:
 *
 *   slot taken    the job runs; its slot is given back on every way out (done, retry, dead) and handed to
 *                 the oldest parked job in the same Lua step
 *   no slot       the job is parked (not failed), with GitLab's `concurrency_limit_resume: true` and
 *                 `concurrency_limit_buffered_at`; the processor acknowledges it like a finished job
 *   list full     ConcurrencyLimitFullError: the job goes through retries, loudly (docs/concurrency-limits.md)
 *
 * A job a tsq Client pushed was admitted at push (clientMiddleware.ts) and arrives holding its slot; the
 * rest (scheduled jobs, retries, re-pushes, Ruby's) are decided here, after any job already parked.
 * A class without a limit costs one property read and no Redis call.
 */
import { ConcurrencyLimitFullError } from "./errors.js";
import type { Next } from "../../../platform/Chain.js";
import { displayClass, dumpPayload, type JobPayload } from "../../../wire/payload.js";
import type { ServerContext } from "../../../server/context.js";
import { nowSeconds } from "../../../wire/timestamps.js";
import type { ConcurrencyLimiter } from "./ConcurrencyLimiter.js";
import { concurrencyLimitOf } from "./policy.js";
import { maxParked } from "./settings.js";

export class ConcurrencyLimitServerMiddleware {
  constructor(
    private readonly limiter: ConcurrencyLimiter,
    private readonly ctx: Pick<ServerContext, "logger" | "events" | "options">,
  ) {}

  /** Not async for a job this does not concern: an async wrapper costs every job promises. */
  call(instance: object, job: JobPayload, queue: string, next: Next): Promise<void> {
    const klass = instance.constructor;
    const limit = concurrencyLimitOf(klass);
    if (limit === 0) return next();
    return this.limited(instance, job, queue, next, limit);
  }

  private async limited(instance: object, job: JobPayload, queue: string, next: Next, limit: number): Promise<void> {
    const name = displayClass(job);
    const resumed = job.concurrency_limit_resume === true;
    const parked = dumpPayload({
      ...job,
      concurrency_limit_resume: true,
      concurrency_limit_buffered_at: resumed ? job.concurrency_limit_buffered_at : nowSeconds(),
    });
    const result = await this.limiter.enter(name, job.jid, limit, parked, resumed);
    if (result === "run") {
      try {
        await next();
      } finally {
        // A job abandoned by a hard shutdown was requeued with its jid: its copy keeps the slot, so that
        // giving it back now cannot let one more job in while the copy runs.
        if ((instance as { signal?: AbortSignal }).signal?.aborted === true) this.limiter.forget(job.jid);
        // Sent, not awaited: commands on the connection keep their order, and the next job need not wait
        // a round trip for this one's hand-over. If it fails, the slot expires after heartbeat_ttl.
        else
          this.limiter
            .leave(name, job.jid, limit)
            .catch((error: unknown) =>
              this.ctx.logger.warn(
                { err: error },
                "could not give back a concurrency-limit slot; it expires by itself",
              ),
            );
      }
      return;
    }
    this.ctx.events.emit("limited", job, queue, result);
    if (result === "parked") {
      this.ctx.logger.info(
        { job_status: "concurrency_limit", concurrency_limit: limit },
        limit < 0
          ? `${name} is paused (concurrencyLimit < 0): job parked until the limit is raised`
          : `parked: all ${limit} slots of ${name} are taken; the job resumes when one frees`,
      );
      return;
    }
    throw new ConcurrencyLimitFullError(
      `${name}: ${maxParked.read(this.ctx.options)} jobs are already parked waiting for ` +
        (limit < 0 ? "the class to be unpaused" : `one of its ${limit} slots`) +
        "; the job goes to the retry set. Raise the limit, add capacity, or raise concurrency_limit_max_parked",
    );
  }
}
