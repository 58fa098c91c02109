/**
 * The lock core (src/features/locks) and the features built on it: deduplication, concurrency limits,
 * unique jobs, sidekiq-unique-jobs' own layout, and the rate limiters. Reached through src/wire/keys.ts,
 * whose header maps every key.
 */

/** Prefix of every lock of the lock core (src/features/locks/Lock.ts). */
export const LOCK_PREFIX = "tsq:lock:";

/** The kinds of lock sharing the core: each API gets its own namespace, so their digests never collide. */
export type LockKind = "dedup" | "limit" | "unique" | "rate";

/** A lock's hash: `tsq:lock:<kind>:<id>`, e.g. `tsq:lock:dedup:default:<64 hex>`. */
export function lockKey(kind: LockKind, id: string): string {
  return `${LOCK_PREFIX}${kind}:${id}`;
}

/** The id part of a lock key of `kind`, or undefined if `key` is not such a key (a hostile payload field). */
export function lockIdOf(kind: LockKind, key: string): string | undefined {
  const prefix = `${LOCK_PREFIX}${kind}:`;
  return key.startsWith(prefix) && key.length > prefix.length ? key.slice(prefix.length) : undefined;
}

/** GitLab's `<idempotency_key>:checking_duplicate`: set when a push was dropped as a duplicate (reschedule_once). */
export function dedupSignalKey(id: string): string {
  return `tsq:dedup-signal:${id}`;
}

/** The concurrency-limit slots of a job class: a lock of the core with up to `limit` holders (jids). */
export function limitSlotsKey(className: string): string {
  return lockKey("limit", className);
}

/** Jobs of a class parked until a slot frees (src/features/locks/gitlab-concurrency-limits): RPUSH to park, LPOP the oldest to resume. */
export function limitParkedKey(className: string): string {
  return `tsq:limit-parked:${className}`;
}

/** Every concurrency-limited class a worker has seen, with the limit it last read: class -> limit. */
export const LIMITS = "tsq:limits";

/**
 * sidekiq-unique-jobs' keys for one lock digest, as the gem (v7/v8) names them: the digest is
 * `<lock_prefix>:<32 hex>` (default prefix `uniquejobs`), `…:RUN` for while_executing's run lock.
 *
 *   <digest>           STRING  the jid last queued for the digest
 *   <digest>:QUEUED    LIST    jids waiting to take the lock; "1" pushed on unlock wakes waiters (5 s)
 *   <digest>:PRIMED    LIST    jids moved from QUEUED while taking it
 *   <digest>:LOCKED    HASH    holder jid -> lock time (epoch seconds, a float); HLEN < lock_limit decides
 *   <digest>:INFO      STRING  optional lock info (JSON)
 */
export function sujKeys(digest: string): {
  digest: string;
  queued: string;
  primed: string;
  locked: string;
  info: string;
} {
  return {
    digest,
    queued: `${digest}:QUEUED`,
    primed: `${digest}:PRIMED`,
    locked: `${digest}:LOCKED`,
    info: `${digest}:INFO`,
  };
}

/** sidekiq-unique-jobs' index of live digests (digest -> lock time), read by its reaper and web UI. */
export const SUJ_DIGESTS = "uniquejobs:digests";
/** sidekiq-unique-jobs' index of until_expired digests (digest -> the gem's expiry score). */
export const SUJ_EXPIRING_DIGESTS = "uniquejobs:expiring_digests";

/** A `Limiter.concurrent` limiter's leases: a lock of the core with up to N holders. */
export function rateLeaseKey(name: string): string {
  return lockKey("rate", `c:${name}`);
}

/** A bucket limiter's current interval (its number since the epoch) and count. */
export function rateBucketKey(name: string): string {
  return `tsq:rl:b:${name}`;
}

/** A window limiter's admissions (ZSET scored by epoch ms). */
export function rateWindowKey(name: string): string {
  return `tsq:rl:w:${name}`;
}

/** A leaky-bucket or points limiter's state (HASH level, at). */
export function rateLeakyKey(name: string): string {
  return `tsq:rl:l:${name}`;
}

/** A points limiter's state (HASH level, at), as a leaky bucket's. */
export function ratePointsKey(name: string): string {
  return `tsq:rl:p:${name}`;
}

/** The running (or admitted) jids of one key of a class's `static limit`. */
export function keyedHoldersKey(className: string, key: string): string {
  return lockKey("rate", `k:${className}:${key}`);
}

/** Admissions of one key of a class's `static limit` rate (a window, as rateWindowKey). */
export function keyedWindowKey(className: string, key: string): string {
  return rateWindowKey(`k:${className}:${key}`);
}

/** Jobs of one key of a class's `static limit` waiting for it: RPUSH to park, LPOP the oldest. */
export function keyedParkedKey(className: string, key: string): string {
  return `tsq:rl-parked:${className}:${key}`;
}

/**
 * A `static limit` class's keys with parked jobs, scored by the epoch ms each may admit again. One set per
 * class, so a process serves only the classes it runs and another fleet's keys never crowd it out.
 */
export function keyedReadyKey(className: string): string {
  return `tsq:rl-ready:${className}`;
}
/** class -> jobs parked on its keyed limits. */
export const KEYED_WAITING = "tsq:rl-waiting";
/** Jobs rescheduled by a rate limiter's OverLimit (the payload's `overrated` counts them per job). */
export const STAT_OVERRATED = "tsq:stat:overrated";
