/**
 * OverLimitError out of a job's perform: the job is rescheduled, not failed (Sidekiq Enterprise's
 * limiter middleware, flow-control.md §2.1). The same payload (same jid) goes to the schedule set with
 * `overrated` + 1, after the limiter's back-off; `tsq:stat:overrated` counts the reschedules. Past the
 * limiter's cap (`reschedule`, default 20) the error goes to the job's ordinary retries, with `overrated`
 * cleared so the retry gets its own reschedules rather than failing at its first OverLimit (Ent #6010).
 * A job with `retry: false` is rescheduled too (it has not failed); past the cap it is dropped as usual.
 *
 * The Processor wraps perform itself in this (not a middleware: any job may use a limiter, and a worker
 * whose classes need no middleware keeps an empty chain). So every middleware sees a job that ended
 * normally, as it did: it runs again later, under the same jid.
 */
import { SCHEDULE, STAT_OVERRATED } from "../../../wire/keys.js";
import { displayClass, dumpPayload, type JobPayload } from "../../../wire/payload.js";
import type { ServerContext } from "../../../server/context.js";
import { nowSeconds } from "../../../wire/timestamps.js";
import { OverLimitError } from "./OverLimitError.js";
import { limiterDefaults } from "./settings.js";

type Ctx = Pick<ServerContext, "logger" | "events" | "redis">;

/**
 * Runs `perform`; an OverLimitError under the cap reschedules the job and resolves. Not async: every job
 * passes here, and an async wrapper costs each one two more promises under its log context.
 */
export function performOrReschedule(
  ctx: Ctx,
  job: JobPayload,
  queue: string,
  perform: () => unknown,
): Promise<unknown> {
  const rescheduled = (error: unknown): Promise<void> => {
    if (!(error instanceof OverLimitError)) throw error;
    return reschedule(ctx, job, queue, error);
  };
  try {
    return Promise.resolve(perform()).catch(rescheduled);
  } catch (error) {
    return Promise.reject(error as Error).catch(rescheduled);
  }
}

async function reschedule(ctx: Ctx, job: JobPayload, queue: string, error: OverLimitError): Promise<void> {
  const overrated = (typeof job.overrated === "number" ? job.overrated : 0) + 1;
  if (overrated > error.reschedule) {
    delete job.overrated;
    throw error;
  }
  const delay = (error.backoff ?? limiterDefaults().backoff)(overrated, error); // seconds
  const at = nowSeconds() + (Number.isFinite(delay) && delay > 0 ? delay : 1);
  await ctx.redis
    .multi()
    .zadd(SCHEDULE, String(at), dumpPayload({ ...job, overrated }))
    .incr(STAT_OVERRATED)
    .exec();
  ctx.events.emit("rateLimited", job, queue, "rescheduled");
  ctx.logger.info(
    { job_status: "overrated", overrated, limiter: error.limiter, delay_s: Math.round(delay * 10) / 10 },
    `${displayClass(job)} rescheduled: ${error.message}`,
  );
}
