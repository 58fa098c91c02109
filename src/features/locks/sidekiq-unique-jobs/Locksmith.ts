/**
 * Takes, releases and checks sidekiq-unique-jobs locks in the gem's own layout (keys.ts `sujKeys`), so
 * a Ruby app running the gem and tsq exclude each other. This is the lock core's model (src/features/locks/Lock.ts:
 * a HASH of holder jids, a holder taking it again succeeds, only a holder releases its own hold) in
 * the gem's encoding: the hash's values are lock times, not expiries, and the whole key expires after
 * `lock_ttl` (never, when the job has none), because that is what the gem writes and reads.
 *
 *   > HGETALL uniquejobs:0e1f1c3c6d2c1a9b4d1e8b3c6f4a7d2e:LOCKED
 *   1) "5c8a9f0e1d2b3c4d5e6f7a8b"
 *   2) "1795425480.123"
 *   > ZSCORE uniquejobs:digests uniquejobs:0e1f1c3c6d2c1a9b4d1e8b3c6f4a7d2e
 *   "1795425480.123"
 */
import { SUJ_DIGESTS, SUJ_EXPIRING_DIGESTS, sujKeys } from "../../../wire/keys.js";
import type { TsqRedis } from "../../../platform/redis/connection.js";
import type { SujLockType } from "./policy.js";
import { sujLockLua, sujUnlockLua } from "./scripts.js";

/** The run lock of while_executing lives beside the push lock's digest (the gem's RUN_SUFFIX). */
export const RUN_SUFFIX = ":RUN";

/** One job's lock: the whole argument of suj-lock-7.lua's and suj-unlock-6.lua's typed calls below. */
export interface SujLock {
  /** The gem's `lock_digest` (`uniquejobs:<hex>`, `…:RUN` for a run lock); its keys come from `sujKeys`. */
  digest: string;
  /** The holder. */
  jid: string;
  type: SujLockType;
  /** The gem's `lock_ttl`, seconds (sent as ms); 0: the lock never expires. */
  ttlSeconds: number;
  /** Most jids holding the lock at once (the gem's `lock_limit`, default 1). */
  limit: number;
}

export type TakeResult = { taken: true } | { taken: false; holder: string };

/** Takes the lock for `lock.jid`, or says who holds it. The same jid taking it again succeeds. */
export async function takeLock(redis: TsqRedis, lock: SujLock): Promise<TakeResult> {
  const keys = sujKeys(lock.digest);
  const [taken, holder] = await sujLockLua.run(
    redis,
    keys.digest,
    keys.queued,
    keys.primed,
    keys.locked,
    keys.info,
    SUJ_DIGESTS,
    SUJ_EXPIRING_DIGESTS,
    lock.jid,
    Math.round(lock.ttlSeconds * 1000), // ms
    lock.type,
    lock.limit,
    String(Date.now() / 1000),
  );
  return taken === 1 ? { taken: true } : { taken: false, holder };
}

/** Releases `lock.jid`'s hold as the gem's unlock does. False when it did not hold it. */
export async function releaseSujLock(redis: TsqRedis, lock: Omit<SujLock, "ttlSeconds">): Promise<boolean> {
  const keys = sujKeys(lock.digest);
  const released = await sujUnlockLua.run(
    redis,
    keys.digest,
    keys.queued,
    keys.primed,
    keys.locked,
    keys.info,
    SUJ_DIGESTS,
    lock.jid,
    lock.type,
    lock.limit,
  );
  return released === 1;
}

/** The jids holding the digest's lock (the gem's `HKEYS <digest>:LOCKED`). */
export async function holdersOf(redis: TsqRedis, digest: string): Promise<string[]> {
  return redis.hkeys(sujKeys(digest).locked);
}
