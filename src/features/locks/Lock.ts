/**
 * The lock core: one primitive that deduplication (src/features/locks/gitlab-deduplication), Enterprise-style unique jobs and
 * concurrency limiters can all sit on. A lock is held by *holders* (jids), each with its own expiry,
 * up to a limit (1 for a mutex). Only a holder releases or refreshes its own hold; an expired hold
 * is dropped by the next acquire, so a holder that crashed blocks no one past its expiry.
 *
 * Redis layout (one HASH per lock, keys built in keys.ts; the key's own PEXPIREAT is the latest
 * holder's expiry, so an abandoned lock disappears by itself):
 *
 *   tsq:lock:<kind>:<id>   HASH   holder jid -> expiry, epoch ms
 *
 *   > HGETALL tsq:lock:dedup:default:9f2c4e0d4b6a1e35a0c2d7f3b8e91c64f2a1d0b7c3e5f6a7b8c9d0e1f2a3b4c5
 *   1) "5c8a9f0e1d2b3c4d5e6f7a8b"
 *   2) "1795425480123"
 *   > PTTL tsq:lock:dedup:default:9f2c…b4c5
 *   (integer) 599871
 *
 * Why a HASH rather than SET NX of a string: a limiter needs N holders per key, and "is this jid a
 * holder" (HEXISTS) is what makes a re-push of the same jid by the scheduled poller count as holding
 * the lock (flow-control.md §1.5, Sidekiq Enterprise #2499). SUJ v9 converged on the same shape.
 */
import type { TsqRedis } from "../../platform/redis/connection.js";
import { lockAcquireLua, lockRefreshLua } from "./scripts.js";

export interface AcquireOptions {
  /** Milliseconds the hold lasts unless released or refreshed. */
  ttlMs: number;
  /** Holders allowed at once (default 1). */
  limit?: number;
  /**
   * A key set to "1" (for ttlMs) when the lock is refused and deleted when it is taken, in the same
   * atomic step: GitLab's reschedule_once signal.
   */
  flagKey?: string;
}

export type AcquireResult = { acquired: true } | { acquired: false; holder: string };

export interface Hold {
  holder: string;
  /** Epoch ms. */
  expiresAt: number;
}

/** Takes `key` for `holder`, or says who holds it. A holder already holding it takes it again. */
export async function acquireLock(
  redis: TsqRedis,
  key: string,
  holder: string,
  options: AcquireOptions,
): Promise<AcquireResult> {
  const ttlMs = Math.max(1, Math.ceil(options.ttlMs));
  const [taken, current] = await lockAcquireLua.run(
    redis,
    key,
    options.flagKey ?? key,
    holder,
    ttlMs,
    options.limit ?? 1,
    Date.now(),
    options.flagKey === undefined ? "0" : "1",
  );
  return taken === 1 ? { acquired: true } : { acquired: false, holder: current };
}

/** Releases `holder`'s hold (HDEL: nobody else's hold can be touched). True if it held the lock. */
export async function releaseLock(redis: TsqRedis, key: string, holder: string): Promise<boolean> {
  return (await redis.hdel(key, holder)) === 1;
}

/** Extends `holder`'s hold to now + ttlMs. False if it no longer holds the lock. */
export async function refreshLock(redis: TsqRedis, key: string, holder: string, ttlMs: number): Promise<boolean> {
  return (await lockRefreshLua.run(redis, key, holder, Math.max(1, Math.ceil(ttlMs)), Date.now())) === 1;
}

/** The live holds of `key` (expired ones left for the next acquire to drop are not shown). */
export async function inspectLock(redis: TsqRedis, key: string): Promise<Hold[]> {
  const fields = await redis.hgetall(key);
  const now = Date.now();
  return Object.entries(fields)
    .map(([holder, value]) => ({ holder, expiresAt: Number(value) }))
    .filter((hold) => Number.isFinite(hold.expiresAt) && hold.expiresAt > now);
}
