/**
 * A job's sidekiq-unique-jobs settings, read from its payload alone (as the gem's LockConfig does), so
 * a job pushed by Ruby with the gem and a job pushed by tsq are handled alike; and the push-time
 * preparation that writes them (the gem's `Job.prepare`).
 */
import { jobClassOf } from "../../../client/jobClasses.js";
import type { JobPayload } from "../../../wire/payload.js";
import { lockDigest, DEFAULT_LOCK_PREFIX } from "./digest.js";
import { RUN_SUFFIX, type SujLock } from "./Locksmith.js";
import { badPush, lockTypeOf, payloadOptions, sujPolicyOf, validateSujOptions, type SujLockType } from "./policy.js";
import { plainJson } from "./rubyJson.js";

/** The lock a payload describes, or undefined when it names no lock type tsq implements. */
export function lockOf(job: JobPayload): SujLock | undefined {
  const type = lockTypeOf(job.lock);
  if (type === undefined || typeof job.lock_digest !== "string") return undefined;
  const ttlSeconds = typeof job.lock_ttl === "number" && job.lock_ttl > 0 ? job.lock_ttl : 0;
  const limit = typeof job.lock_limit === "number" && job.lock_limit >= 1 ? Math.floor(job.lock_limit) : 1;
  return { digest: job.lock_digest, jid: job.jid, type, ttlSeconds, limit };
}

/** Seconds a job waits for while_executing's run lock (the gem's `lock_timeout`, default 0). */
export function lockTimeoutOf(job: JobPayload): number {
  return typeof job.lock_timeout === "number" && job.lock_timeout > 0 ? job.lock_timeout : 0;
}

/**
 * Adds the gem's fields to a new push naming a `lock`: `lock_timeout`, `lock_ttl` (plus the seconds
 * until a scheduled job's time, whole seconds as the gem counts them), `lock_prefix`, `lock_args` (the
 * class's `lockArgs(args)`, else the args) and `lock_digest` (`…:RUN` for while_executing, as the gem
 * names its run lock). A payload that already has `lock_digest` (re-pushed, or written by Ruby) is
 * left as it is, as the gem does.
 */
export function prepareLock(job: JobPayload): SujLockType | undefined {
  if (typeof job.lock_digest === "string") return lockTypeOf(job.lock);
  const policy = sujPolicyOf(jobClassOf(job)); // validates the class's declaration once
  validateSujOptions(payloadOptions(job), badPush(job.class));
  const type = lockTypeOf(job.lock)!;
  job.lock_timeout ??= 0;
  const ttl = typeof job.lock_ttl === "number" ? job.lock_ttl : null;
  const untilAt = typeof job.at === "number" ? Math.trunc(job.at) - Math.trunc(Date.now() / 1000) : 0;
  job.lock_ttl = ttl === null ? null : Math.trunc(ttl) + untilAt;
  job.lock_prefix ??= DEFAULT_LOCK_PREFIX;
  const lockArgs = job.lock_args ?? (policy?.lockArgs ? policy.lockArgs(job.args) : job.args);
  const digest = lockDigest(
    {
      class: job.class,
      queue: job.queue,
      lock_args: lockArgs,
      apartment: job.apartment,
      unique_across_queues: job.unique_across_queues,
      unique_across_workers: job.unique_across_workers,
    },
    String(job.lock_prefix),
  );
  job.lock_args = plainJson(lockArgs);
  job.lock_digest = type === "while_executing" ? digest + RUN_SUFFIX : digest;
  return type;
}
