/**
 * The push side of unique jobs (Sidekiq Enterprise's client middleware), installed in every Client:
 *
 *   - a class without `uniqueFor`, or a push with `set({ uniqueFor: false })`: untouched, no Redis call;
 *   - the payload gets `tsq_unique_key` (the lock key), so the poller, a retry moved back and the removal
 *     paths find the lock without the class (src/features/locks/release.ts);
 *   - the lock is taken for the job's jid (lock-acquire-2.lua) until now + `unique_for`, or for a
 *     scheduled job until its time + `unique_for` (Enterprise: `perform_in(1.hour)` + 10 min = 70 min);
 *   - the same jid taking it again (the poller's re-push, a retry or a deferred job moved back, the API's
 *     retry) is not a duplicate (Ent #2499): its hold is extended;
 *   - another holder: the push is refused, logged and counted, and resolves to null as Enterprise's
 *     `push` returns nil.
 */
import type { ClientMiddlewareArgs } from "../../../client/Client.js";
import { jobClassOf } from "../../../client/jobClasses.js";
import { acquireLock } from "../Lock.js";
import { heldKey } from "../release.js";
import type { MiddlewareFunction, Next } from "../../../platform/Chain.js";
import type { ClientEventBus } from "../../../client/events.js";
import { uniqueLockKey } from "./digest.js";
import { reportRejected } from "./events.js";
import { uniquePolicyOf } from "./policy.js";

/** Seconds a lock lasts when a stored job names one but its `unique_for` is unreadable (Enterprise's usual 10 min). */
const FALLBACK_UNIQUE_FOR = 600;

/** The middleware for one Client: a refused push is announced on that client's `events`. */
export function uniqueOnPush(events: ClientEventBus): MiddlewareFunction<ClientMiddlewareArgs> {
  return (_className, job, _queue, redis, next) => lockOnPush(events, job, redis, next);
}

async function lockOnPush(
  events: ClientEventBus,
  job: ClientMiddlewareArgs[1],
  redis: ClientMiddlewareArgs[3],
  next: Next,
): Promise<void> {
  // A stored job (re-pushed by the poller or the API) keeps the lock it was pushed under, whatever its
  // queue is now (retry_queue): the class need not be loaded in this process.
  let key = heldKey(job, "unique");
  let uniqueFor = job.unique_for;
  if (key === undefined) {
    const policy = uniquePolicyOf(jobClassOf(job));
    if (policy === undefined || job.unique_for === false) return next();
    key = uniqueLockKey(job, policy);
    job.tsq_unique_key = key;
    if (!validSeconds(uniqueFor)) uniqueFor = policy.uniqueFor;
  }
  const seconds = validSeconds(uniqueFor) ? uniqueFor : FALLBACK_UNIQUE_FOR;
  const delay = job.at === undefined ? 0 : Math.max(job.at - Date.now() / 1000, 0); // seconds
  const result = await acquireLock(redis, key, job.jid, { ttlMs: (delay + seconds) * 1000 });
  if (result.acquired) return next();
  reportRejected(events, job, result.holder);
}

function validSeconds(value: unknown): value is number {
  return typeof value === "number" && Number.isFinite(value) && value > 0;
}
