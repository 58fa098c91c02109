/**
 * OverLimitError out of a job's perform: the job is rescheduled, not failed (Sidekiq Enterprise's
 * limiter middleware, flow-control.md §2.1). The same payload (same jid) goes to the schedule set with
 * `overrated` + 1, after the limiter's back-off; `tsq:stat:overrated` counts the reschedules. Past the
 * limiter's cap (`reschedule`, default 20) the error goes to the job's ordinary retries, with `overrated`
 * cleared so the retry gets its own reschedules rather than failing at its first OverLimit (Ent #6010).
 * A job with `retry: false` is rescheduled too (it has not failed); past the cap it is dropped as usual.
 *
 * Innermost in the chain, so the middleware around it (deduplication, unique jobs, concurrency limits)
 * sees a job that ended normally, as it did: it will run again later, under the same jid.
 */
import { SCHEDULE, STAT_OVERRATED } from "../keys.js";
import type { Next } from "../middleware/Chain.js";
import { displayClass, dumpPayload, type JobPayload } from "../payload.js";
import type { ServerContext } from "../server/context.js";
import { nowSeconds } from "../timestamps.js";
import { OverLimitError } from "./OverLimitError.js";
import { limiterDefaults } from "./settings.js";

export class RescheduleMiddleware {
  constructor(private readonly ctx: Pick<ServerContext, "logger" | "events" | "redis">) {}

  async call(_instance: object, job: JobPayload, queue: string, next: Next): Promise<void> {
    try {
      await next();
    } catch (error) {
      if (!(error instanceof OverLimitError)) throw error;
      const overrated = (typeof job.overrated === "number" ? job.overrated : 0) + 1;
      if (overrated > error.reschedule) {
        delete job.overrated;
        throw error;
      }
      const delay = (error.backoff ?? limiterDefaults().backoff)(overrated, error); // seconds
      const at = nowSeconds() + (Number.isFinite(delay) && delay > 0 ? delay : 1);
      await this.ctx.redis
        .multi()
        .zadd(SCHEDULE, String(at), dumpPayload({ ...job, overrated }))
        .incr(STAT_OVERRATED)
        .exec();
      this.ctx.events.emit("rateLimited", job, queue, "rescheduled");
      this.ctx.logger.info(
        { job_status: "overrated", overrated, limiter: error.limiter, delay_s: Math.round(delay * 10) / 10 },
        `${displayClass(job)} rescheduled: ${error.message}`,
      );
    }
  }
}
