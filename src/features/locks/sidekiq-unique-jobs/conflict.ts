/**
 * What a duplicate does (`on_conflict`), on the push side (the lock is held by another job) and on the
 * run side (a while_executing job finds another running; an until_* job finds its lock taken by another):
 *
 *   log         drop it, logged ("Skipping job with id (…) because lock_digest: (…) already exists",
 *               the gem's line). The default, as the gem's. A push resolves to null.
 *   raise       throw SujConflictError: a push rejects; a job run fails and goes the retry way.
 *   reject      add it to the dead set instead (the gem's Reject), where it can be retried by hand.
 *   replace     push side: remove the queued or scheduled job holding the lock (the gem's
 *               delete_job_by_digest over the queue, `schedule`, `retry`, but only the holder), release
 *               its hold, push this one. A running holder is not removable: the push is dropped,
 *               logged. Run side: as log.
 *   reschedule  try again in 5 s (the gem's `perform_in(5, *args)`): on the push side the job is
 *               scheduled without the lock and takes it when it runs; on the run side a copy with a new
 *               jid is pushed for 5 s later. It never recurses at push time (SUJ#940).
 */
import type { Client } from "../../../client/Client.js";
import { TsqError } from "../../../wire/errors.js";
import { logger } from "../../../platform/logger.js";
import { DEFAULTS } from "../../../platform/config/defaults.js";
import { RETRY, SCHEDULE, queueKey } from "../../../wire/keys.js";
import { dumpPayload, type JobPayload } from "../../../wire/payload.js";
import type { TsqRedis } from "../../../platform/redis/connection.js";
import { sendToMorgue } from "../../../server/morgue.js";
import { releaseSujLock, takeLock, type SujLock } from "./Locksmith.js";
import type { SujStrategy } from "./policy.js";
import { sujDeleteJobLua } from "./scripts.js";

/** Seconds a rescheduled duplicate waits (the gem's fixed `perform_in(5, …)`). */
export const RESCHEDULE_IN = 5;

export class SujConflictError extends TsqError {
  override name = "SujConflictError";

  constructor(job: JobPayload, holder: string) {
    super(
      `${job.class} JID-${job.jid} is a duplicate: lock ${String(job.lock_digest)} is held by JID ${holder} ` +
        `(on_conflict: raise). Retry later, or choose another onConflict (docs/sidekiq-unique-jobs.md)`,
    );
  }
}

/** The gem's payload fields a rescheduled copy keeps (with class, queue, args, retry). */
const KEPT = [
  "retry",
  "lock",
  "lock_ttl",
  "lock_timeout",
  "lock_limit",
  "lock_prefix",
  "lock_args",
  "lock_digest",
  "on_conflict",
  "unique_across_queues",
  "unique_across_workers",
];

function logSkip(job: JobPayload, holder: string, side: "client" | "server", strategy: string): void {
  logger().info(
    { class: job.class, jid: job.jid, lock_digest: job.lock_digest, lock_holder: holder, on_conflict: strategy, side },
    `Skipping job with id (${job.jid}) because lock_digest: (${String(job.lock_digest)}) already exists`,
  );
}

async function reject(redis: TsqRedis, job: JobPayload): Promise<void> {
  logger().info(
    { class: job.class, jid: job.jid, lock_digest: job.lock_digest },
    `Adding dead ${job.class} job ${job.jid}`,
  );
  await sendToMorgue(redis, dumpPayload(job), DEFAULTS);
}

/** A push found the lock held by `holder`. Calls `push` when the job is to be written after all. */
export async function onClientConflict(
  redis: TsqRedis,
  job: JobPayload,
  lock: SujLock,
  holder: string,
  strategy: SujStrategy | undefined,
  push: () => Promise<void>,
): Promise<void> {
  switch (strategy) {
    case "raise":
      throw new SujConflictError(job, holder);
    case "reject":
      return reject(redis, job);
    case "reschedule":
      job.at = Date.now() / 1000 + RESCHEDULE_IN;
      logger().info({ class: job.class, jid: job.jid, lock_digest: job.lock_digest }, "duplicate rescheduled in 5 s");
      return push();
    case "replace": {
      const digestNeedle = `"lock_digest":${JSON.stringify(lock.digest)}`;
      const jidNeedle = `"jid":${JSON.stringify(holder)}`;
      const removed = await sujDeleteJobLua.run(redis, queueKey(job.queue), SCHEDULE, RETRY, digestNeedle, jidNeedle);
      const removedJid = removed === null ? undefined : jidOf(removed);
      if (removedJid !== undefined) {
        logger().info({ class: job.class, jid: job.jid, replaced: removedJid }, `Deleted job: ${removedJid}`);
        await releaseSujLock(redis, { ...lock, jid: removedJid });
        const again = await takeLock(redis, lock);
        if (again.taken) return push();
        holder = again.holder;
      }
      return logSkip(job, holder, "client", "replace");
    }
    default:
      return logSkip(job, holder, "client", strategy ?? "log");
  }
}

/** A job about to run found its lock held by `holder`. Resolves when the job is dealt with. */
export async function onServerConflict(
  redis: TsqRedis,
  client: Client,
  job: JobPayload,
  holder: string,
  strategy: SujStrategy | undefined,
): Promise<void> {
  switch (strategy) {
    case "raise":
      throw new SujConflictError(job, holder);
    case "reject":
      return reject(redis, job);
    case "reschedule": {
      const copy: Record<string, unknown> = { class: job.class, queue: job.queue, args: job.args };
      for (const field of KEPT) if (job[field] !== undefined) copy[field] = job[field];
      const jid = await client.push({
        ...copy,
        class: job.class,
        args: job.args,
        at: Date.now() / 1000 + RESCHEDULE_IN,
      });
      logger().info({ class: job.class, jid: job.jid, rescheduled_as: jid }, "duplicate rescheduled in 5 s");
      return;
    }
    default:
      return logSkip(job, holder, "server", strategy ?? "log");
  }
}

function jidOf(json: string): string | undefined {
  try {
    const job = JSON.parse(json) as { jid?: unknown };
    return typeof job.jid === "string" ? job.jid : undefined;
  } catch {
    return undefined;
  }
}
