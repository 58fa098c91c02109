/**
 * The push side of deduplication (GitLab's `DuplicateJobs::Client` with `DeduplicatesWhenScheduling`),
 * a client middleware every Client installs:
 *
 *   - a class that is not idempotent, or strategy none: untouched, no Redis call;
 *   - the payload gets `idempotency_key` (the lock key), so the poller re-checks a scheduled job when it
 *     is due and the removal paths can release the lock without the class;
 *   - a scheduled job is only locked with `includingScheduled`, for its delay plus ttl; deferred
 *     re-pushes and concurrency-limit resumes are never deduplicated (GitLab #435602);
 *   - the lock is taken for the job's jid (lock-acquire-2.lua). The same jid taking it again (the
 *     poller's re-push, a retry moved back) is not a duplicate. Another holder: the push is dropped,
 *     `duplicate-of` names the holder and Client.push resolves to that jid.
 */
import type { ClientMiddlewareArgs } from "../../../client/Client.js";
import { jobClassOf } from "../../../client/jobClasses.js";
import { dedupSignalKey } from "../../../wire/keys.js";
import { acquireLock } from "../Lock.js";
import type { MiddlewareFunction, Next } from "../../../platform/Chain.js";
import type { ClientEventBus } from "../../../client/events.js";
import { dedupId, dedupLockKey } from "./digest.js";
import { reportDeduplicated } from "./events.js";
import { dedupPolicyOf } from "./policy.js";

/** The middleware for one Client: a dropped duplicate is announced on that client's `events`. */
export function deduplicationOnPush(events: ClientEventBus): MiddlewareFunction<ClientMiddlewareArgs> {
  return (_className, job, _queue, redis, next) => deduplicateOnPush(events, job, redis, next);
}

async function deduplicateOnPush(
  events: ClientEventBus,
  job: ClientMiddlewareArgs[1],
  redis: ClientMiddlewareArgs[3],
  next: Next,
): Promise<void> {
  const policy = dedupPolicyOf(jobClassOf(job));
  if (policy === undefined || job.concurrency_limit_resume) return next();
  const scheduled = job.at !== undefined;
  if (scheduled && job.deferred) return next();
  const id = dedupId(job, policy);
  job.idempotency_key = dedupLockKey(id);
  if (scheduled && !policy.includingScheduled) return next();
  const delay = scheduled ? Math.max((job.at as number) - Date.now() / 1000, 0) : 0; // seconds
  const signal =
    policy.strategy === "until_executed" && policy.rescheduleOnce && !scheduled && job.rescheduled_once === undefined;
  const result = await acquireLock(redis, dedupLockKey(id), job.jid, {
    ttlMs: (delay + policy.ttl) * 1000,
    ...(signal ? { flagKey: dedupSignalKey(id) } : {}),
  });
  if (result.acquired) return next();
  job["duplicate-of"] = result.holder;
  reportDeduplicated(events, job, policy, result.holder);
}
