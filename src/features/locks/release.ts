/**
 * The locks a stored job holds, and releasing them on every path a job leaves Redis by without running
 * again: deleted or cleared through the API or `tsqctl` (queues, `schedule`, `retry`), killed to the dead
 * set, set aside as a poison pill by recovery, dead after its retries, dropped (`retry: false`) or
 * discarded. Sidekiq Enterprise and SUJ leave those locks until their TTL (Ent #5002, #5576); tsq frees
 * them at once. Only each job's own hold is released (HDEL of its jid).
 *
 * A payload names its locks in one field per API (HOLD_FIELDS), each holding the whole lock key, so the
 * removal paths need no job class. Every lock key starts with `tsq:lock:` (keys.ts), which is what the
 * cheap filters match (`LOCK_MARKER`): a job that holds no lock is never parsed.
 */
import type { Redis } from "ioredis";
import type { TsqRedis } from "../../platform/redis/connection.js";
import { lockIdOf, lockKey, LOCK_PREFIX, type LockKind } from "../../wire/keys.js";
import type { JobPayload } from "../../wire/payload.js";
import { refreshLock } from "./Lock.js";

/**
 * The payload field each lock kind records its key in. Concurrency-limit slots are not here: a slot is
 * held only while a job runs, handed to the next parked job by the limiter, and expires after the
 * heartbeat TTL (docs/concurrency-limits.md); rate-limiter leases likewise (docs/rate-limits.md).
 */
type HoldKind = Exclude<LockKind, "limit" | "rate">;
export const HOLD_FIELDS: Readonly<Record<HoldKind, string>> = {
  dedup: "idempotency_key", // GitLab's name (docs/deduplication.md)
  unique: "tsq_unique_key", // tsq's own: Enterprise's lock fields are private (docs/unique-jobs.md)
};

/** Text every payload holding a lock contains: the opening of a lock key as a JSON string. */
export const LOCK_MARKER = `"${LOCK_PREFIX}`;
/** Text a payload holding a sidekiq-unique-jobs lock contains (tsq and Ruby both write it so, no spaces). */
export const SUJ_MARKER = `"lock_digest":"`;
/** Every marker: a stored job containing none of them holds no lock. */
export const LOCK_MARKERS = [LOCK_MARKER, SUJ_MARKER] as const;

/** True when a stored job's text may name a lock (cheap: no parsing). */
export function namesLock(text: string | Buffer): boolean {
  return LOCK_MARKERS.some((marker) => text.includes(marker));
}

/**
 * A sidekiq-unique-jobs digest a payload may name (`<prefix>:<32 hex>`), so a hostile field cannot
 * make a removal touch another key.
 */
const SUJ_DIGEST = /^[\w.-]+:[0-9a-f]{32}$/;

export interface HeldLock {
  kind: LockKind | "suj";
  key: string;
  jid: string;
}

type Stored = string | Buffer | JobPayload;

function parsed(stored: Stored): Record<string, unknown> | undefined {
  if (typeof stored === "object" && !Buffer.isBuffer(stored)) return stored;
  const json = typeof stored === "string" ? stored : stored.toString();
  if (!namesLock(json)) return undefined;
  try {
    const job: unknown = JSON.parse(json);
    return typeof job === "object" && job !== null ? (job as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** The lock key of `kind` a payload names, if the field names such a lock (a hostile field names none). */
export function heldKey(job: Record<string, unknown>, kind: HoldKind): string | undefined {
  const value = job[HOLD_FIELDS[kind]];
  if (typeof value !== "string") return undefined;
  const id = lockIdOf(kind, value);
  return id === undefined ? undefined : lockKey(kind, id);
}

/** Every lock a stored job names, with its jid (cheap for jobs that name none). */
export function locksHeldBy(stored: Stored): HeldLock[] {
  const job = parsed(stored);
  if (job === undefined || typeof job.jid !== "string") return [];
  const held: HeldLock[] = [];
  for (const kind of Object.keys(HOLD_FIELDS) as HoldKind[]) {
    const key = heldKey(job, kind);
    if (key !== undefined) held.push({ kind, key, jid: job.jid });
  }
  // A sidekiq-unique-jobs push lock (docs/sidekiq-unique-jobs.md): the gem keeps it until its TTL or its
  // reaper; tsq releases the job's own hold at once. until_expired is a TTL by design and stays;
  // while_executing holds nothing while the job waits (its `…:RUN` digest does not match).
  const digest = job.lock_digest;
  const type = job.lock;
  if (typeof digest === "string" && SUJ_DIGEST.test(digest) && typeof type === "string" && SUJ_RELEASED.has(type))
    held.push({ kind: "suj", key: `${digest}:LOCKED`, jid: job.jid });
  return held;
}

/** The gem's names (and aliases) of the lock types held from push to run. */
const SUJ_RELEASED = new Set([
  "until_executing",
  "while_enqueued",
  "until_executed",
  "until_completed",
  "until_performed",
  "until_processed",
  "until_successfully_completed",
]);

/** Releases the locks held by these stored jobs, in one pipeline. Resolves to how many were released. */
export async function releaseLocksOf(redis: Redis, stored: Iterable<Stored>): Promise<number> {
  const pipeline = redis.pipeline();
  let count = 0;
  for (const job of stored) {
    for (const hold of locksHeldBy(job)) {
      pipeline.hdel(hold.key, hold.jid);
      count++;
    }
  }
  if (count === 0) return 0;
  const results = (await pipeline.exec()) ?? [];
  return results.filter(([error, removed]) => error === null && removed === 1).length;
}

/**
 * A failed job was scheduled to retry at `retryAt` (epoch seconds). Deduplication released its lock when
 * the job failed (GitLab's `ensure`); a unique job keeps its lock while it waits, until its retry time
 * plus `unique_for`, unless the class says `uniqueRetries: false` (payload `unique_retries: false`): then
 * it is released now. A lock that expired or passed to another job meanwhile is left alone.
 */
export async function keepLocksForRetry(redis: TsqRedis, job: JobPayload, retryAt: number): Promise<void> {
  const key = heldKey(job, "unique");
  if (key === undefined) return;
  if (job.unique_retries === false) {
    await redis.hdel(key, job.jid);
    return;
  }
  const uniqueFor = typeof job.unique_for === "number" && job.unique_for > 0 ? job.unique_for : 0; // seconds
  const waitMs = Math.max(retryAt * 1000 - Date.now(), 0);
  await refreshLock(redis, key, job.jid, waitMs + uniqueFor * 1000);
}
