/**
 * The run side of batches and workflows, around the whole server middleware chain of a job that carries
 * a tsq `bid` (the Processor calls it only for those: other jobs pay nothing):
 *
 *   before   `this.batch` is the job's batch (its `jobs` adds to it); a `new Batch()` in perform is a
 *            child; a workflow step gets `this.workflow` and its return value is kept
 *   success  `success` event: the jid leaves `pending` (SREM, so a re-run after a SIGKILL between this
 *            and the acknowledgement changes nothing)
 *   failure  `failure` event, then the error goes on to JobRetry; a death is reported by the death
 *            handler (install.ts); a timeout is a failure like any other
 *   cancel   `death` event: a cancelled member never runs again (JobCancelledError for its jid)
 *   pause    nothing: a suspended execution (JobSuspended: a durable job's sleep or wait) is not an end,
 *            the member reports once, at its real end
 *
 * A job the concurrency limiter parked or refused has not run: nothing is reported (it runs later). A
 * job another middleware skipped counts as done, as Sidekiq treats it. If Redis refuses the success
 * event (an outage longer than the client waits), the job fails and is retried: running it again is
 * safe for the batch, losing its success would leave the batch waiting. A job abandoned by a hard
 * shutdown reports nothing: it is back in its queue and will run again.
 */
import type { JobPayload } from "../../../wire/payload.js";
import { JobCancelledError, JobSuspended, TsqError } from "../../../wire/errors.js";
import type { ServerContext } from "../../../server/context.js";
import { toError } from "../../../server/JobRetry.js";
import { Batch } from "./Batch.js";
import { running } from "./context.js";
import { applyBatchEvent, failureInfo } from "./events.js";
import { captureResult, storeResult, type WorkflowStep } from "./workflow/results.js";

/** True for a job the hook must wrap: a member of a tsq batch (or of a Sidekiq Pro one: it checks). */
export function inBatch(job: JobPayload): boolean {
  return typeof job.bid === "string" && job.bid !== "";
}

export async function runInBatch(
  ctx: ServerContext,
  instance: object,
  job: JobPayload,
  invoke: () => Promise<unknown>,
): Promise<void> {
  const bid = job.bid as string;
  const { redis, timestampFormat: format } = ctx;
  Object.assign(instance, { batch: Batch.reopen(bid, ctx.client) });
  const step: WorkflowStep | undefined = captureResult(redis, instance, job);
  let limited = false;
  const onLimited = (limitedJob: JobPayload) => {
    if (limitedJob === job) limited = true;
  };
  // Parked by a concurrency limit, or rescheduled or parked by a rate limit: it has not run yet.
  ctx.events.on("limited", onLimited);
  ctx.events.on("rateLimited", onLimited);
  const attempt = typeof job.retry_count === "number" ? job.retry_count : -1;
  try {
    await running.run({ bid, jid: job.jid, attempt, children: 0 }, invoke);
  } catch (error) {
    if (error instanceof JobSuspended) throw error;
    const cancelled = error instanceof JobCancelledError && error.jid === job.jid;
    if (!requeued(instance) && !limited)
      await applyBatchEvent(redis, cancelled ? "death" : "failure", bid, job.jid, {
        info: failureInfo(job, toError(error)),
        format,
        events: ctx.client.events,
      }).catch((batchError: unknown) =>
        ctx.logger.error({ err: batchError, bid }, "could not record a failure in its batch"),
      );
    throw error;
  } finally {
    ctx.events.off("limited", onLimited);
    ctx.events.off("rateLimited", onLimited);
  }
  if (requeued(instance) || limited) return;
  // Stored before the success that may start the next stage, which reads it.
  if (step) await storeResult(redis, step);
  await applyBatchEvent(redis, "success", bid, job.jid, { format, events: ctx.client.events });
}

/**
 * Aborted by the worker's hard shutdown: the job is back in its queue and runs again. A cancel's or a
 * timeout's abort carries one of tsq's named errors; a hard shutdown's a plain Error.
 */
function requeued(instance: object): boolean {
  const signal = (instance as { signal?: AbortSignal }).signal;
  return signal?.aborted === true && !(signal.reason instanceof TsqError);
}
