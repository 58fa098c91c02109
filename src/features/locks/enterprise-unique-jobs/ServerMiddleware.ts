/**
 * The run side of unique jobs (Sidekiq Enterprise's server middleware), first in the chain so a user
 * middleware that skips a job cannot keep its lock:
 *
 *   unique_until "start"     releases the lock as the job starts: a push is accepted while it runs
 *   unique_until "success"   (default) releases it when the job succeeds. A failure keeps it: JobRetry
 *                            extends it to the retry time + unique_for (or releases it with
 *                            `uniqueRetries: false`), and releases it when the job dies, is dropped
 *                            or discarded (src/features/locks/release.ts)
 *
 * Acts on the payload alone (`tsq_unique_key`, `unique_until`), so a job pushed by another process's
 * class version still releases its lock; only the job's own hold is released (HDEL of its jid). A job
 * abandoned by a hard shutdown was requeued with its jid: it keeps the lock.
 */
import { releaseLock } from "../Lock.js";
import { heldKey } from "../release.js";
import { logger } from "../../../platform/logger.js";
import type { Next } from "../../../platform/Chain.js";
import type { JobPayload } from "../../../wire/payload.js";
import type { TsqRedis } from "../../../platform/redis/connection.js";

export class UniqueServerMiddleware {
  constructor(private readonly redis: TsqRedis) {}

  /** Not async for a job this does not concern: an async wrapper costs every job promises. */
  call(instance: object, job: JobPayload, _queue: string, next: Next): Promise<void> {
    const key = heldKey(job, "unique");
    if (key === undefined) return next();
    return this.locked(instance, job, _queue, next, key);
  }

  private async locked(instance: object, job: JobPayload, _queue: string, next: Next, key: string): Promise<void> {
    if (job.unique_until === "start") {
      // Sent before the job runs but not awaited: commands on this connection keep their order, so the
      // release reaches Redis before anything the job does (as deduplication's until_executing). If it
      // fails, the lock expires after unique_for; the job runs regardless.
      releaseLock(this.redis, key, job.jid).catch((error: unknown) =>
        logger().warn({ err: error, tsq_unique_key: key }, "could not release a unique lock; it expires by itself"),
      );
      return next();
    }
    await next();
    // Succeeded. A job abandoned by a hard shutdown is back in its queue with its jid: it keeps the lock.
    if ((instance as { signal?: AbortSignal }).signal?.aborted === true) return;
    await releaseLock(this.redis, key, job.jid);
  }
}
