/**
 * The run side of deduplication (GitLab's `DuplicateJobs::Server` strategies), a server middleware the
 * Launcher puts first in the chain, so a user middleware that skips a job cannot keep its lock:
 *
 *   until_executing   releases the lock as the job starts: a new push is accepted while it runs
 *   until_executed    releases it after the job, whatever the outcome (GitLab's `ensure`: done, retry
 *                     scheduled or dead); with reschedule_once, when a duplicate was dropped meanwhile
 *                     (the signal key), pushes the job once more with `rescheduled_once: true`
 *
 * Only the job's own hold is released (HDEL of its jid), so a stale or hostile `idempotency_key` cannot
 * free another job's lock. A job abandoned by a hard shutdown was requeued with its jid: it keeps the lock.
 */
import type { Client } from "../../../client/Client.js";
import { dedupSignalKey } from "../../../wire/keys.js";
import { releaseLock } from "../Lock.js";
import type { Next } from "../../../platform/Chain.js";
import type { JobPayload } from "../../../wire/payload.js";
import { logger } from "../../../platform/logger.js";
import type { TsqRedis } from "../../../platform/redis/connection.js";
import { dedupId, dedupIdOfPayload, dedupLockKey } from "./digest.js";
import { dedupPolicyOf, type DedupPolicy } from "./policy.js";

export class DeduplicationServerMiddleware {
  constructor(
    private readonly redis: TsqRedis,
    private readonly client: Client,
  ) {}

  /** Not async for a job this does not concern: an async wrapper costs every job promises. */
  call(instance: object, job: JobPayload, queue: string, next: Next): Promise<void> {
    const klass = instance.constructor;
    const policy = dedupPolicyOf(klass);
    if (policy === undefined) return next();
    return this.deduplicated(instance, job, queue, next, policy);
  }

  private async deduplicated(
    instance: object,
    job: JobPayload,
    queue: string,
    next: Next,
    policy: DedupPolicy,
  ): Promise<void> {
    const klass = instance.constructor;
    // The key the lock was taken under (the queue may have changed since: retry_queue).
    const id = dedupIdOfPayload(job) ?? dedupId(job, policy);
    if (policy.strategy === "until_executing") {
      // Sent before the job runs but not awaited: commands on this connection keep their order, so the
      // release reaches Redis before anything the job does, without a round trip per job (~20 µs, see
      // docs/deduplication.md). If it fails, the lock expires after its ttl; the job runs regardless.
      releaseLock(this.redis, dedupLockKey(id), job.jid).catch((error: unknown) =>
        logger().warn(
          { err: error, idempotency_key: job.idempotency_key },
          "could not release a dedup lock; it expires after its ttl",
        ),
      );
      return next();
    }
    let succeeded = false;
    try {
      await next();
      succeeded = true;
    } finally {
      const abandoned = (instance as { signal?: AbortSignal }).signal?.aborted === true;
      if (!abandoned) await this.afterRun(klass, job, queue, id, policy, succeeded);
    }
  }

  private async afterRun(
    klass: object,
    job: JobPayload,
    queue: string,
    id: string,
    policy: DedupPolicy,
    succeeded: boolean,
  ): Promise<void> {
    if (!(succeeded && policy.rescheduleOnce)) {
      await releaseLock(this.redis, dedupLockKey(id), job.jid);
      return;
    }
    // Read and clear the signal, then release, in one step, so a push that arrives between the two sees
    // either a held lock (and signals again) or a free one (and is enqueued).
    const results = (await this.redis.multi().del(dedupSignalKey(id)).hdel(dedupLockKey(id), job.jid).exec()) ?? [];
    if (results[0]?.[1] !== 1) return;
    logger().info(
      { idempotency_key: job.idempotency_key, "deduplication.type": policy.strategy },
      "rescheduled once: a duplicate was dropped while the job ran",
    );
    await this.client.push({
      class: klass as { name: string },
      args: job.args,
      queue: job.queue,
      rescheduled_once: true,
    });
  }
}
