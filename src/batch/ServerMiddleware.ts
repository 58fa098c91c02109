/**
 * The run side of batches, outermost in every worker's server chain (a job another middleware skips
 * counts as done, as Sidekiq does). For a job with a tsq `bid`:
 *
 *   before   `this.batch` is the job's batch (its `jobs` adds to it); a `new Batch()` in perform is a child
 *   success  `success` event: the jid leaves `pending` (SREM, so a re-run after a SIGKILL between
 *            this and the acknowledgement changes nothing)
 *   failure  `failure` event, then the error goes on to JobRetry; a death is reported by `batchDeath`
 *
 * If Redis refuses the success event (an outage longer than the client waits), the job fails and is
 * retried: running it again is safe for the batch, losing its success would leave the batch waiting.
 * A job abandoned by a hard shutdown reports nothing: it is back in its queue and will run again.
 */
import type { Next } from "../middleware/Chain.js";
import type { JobPayload } from "../payload.js";
import type { ServerContext } from "../server/context.js";
import { toError } from "../server/JobRetry.js";
import { Batch } from "./Batch.js";
import { running } from "./context.js";
import { applyBatchEvent, failureInfo } from "./events.js";

export class BatchServerMiddleware {
  constructor(private readonly ctx: ServerContext) {}

  async call(instance: object, job: JobPayload, _queue: string, next: Next): Promise<void> {
    const bid = job.bid;
    if (typeof bid !== "string" || bid === "") return next();
    const { redis, timestampFormat: format } = this.ctx;
    Object.assign(instance, { batch: Batch.reopen(bid, this.ctx.client) });
    const attempt = typeof job.retry_count === "number" ? job.retry_count : -1;
    try {
      await running.run({ bid, jid: job.jid, attempt, children: 0 }, next);
    } catch (error) {
      if (!aborted(instance))
        await applyBatchEvent(redis, "failure", bid, job.jid, { info: failureInfo(job, toError(error)), format }).catch(
          (batchError: unknown) =>
            this.ctx.logger.error({ err: batchError, bid }, "could not record a failure in its batch"),
        );
      throw error;
    }
    if (aborted(instance)) return;
    await applyBatchEvent(redis, "success", bid, job.jid, { format });
  }
}

function aborted(instance: object): boolean {
  return (instance as { signal?: AbortSignal }).signal?.aborted === true;
}

/** A death handler: a job that will not run again reports `death` to its batch (once per batch). */
export function batchDeathHandler(ctx: ServerContext): (job: JobPayload, error: Error) => Promise<void> {
  return async (job, error) => {
    const bid = job.bid;
    if (typeof bid !== "string" || bid === "") return;
    await applyBatchEvent(ctx.redis, "death", bid, job.jid, {
      info: failureInfo(job, error),
      format: ctx.timestampFormat,
    });
  };
}
