/**
 * Recovery for reliable fetch: puts a dead process's in-progress jobs back at the front of their queues
 * (recover-3.lua, atomic per list; a job orphaned again waits a few random seconds in `schedule`), and
 * sets poison pills aside in the dead set.
 *
 * Who recovers:
 * - the tsq-cluster supervisor, the moment a child exits or is killed (`recoverIdentity`);
 * - any reliable-fetch process at startup and every minute after (`sweepOrphans`), for identities in
 *   `super_processes` whose heartbeat hash has expired, under a per-identity lock;
 * - a process stopping gracefully requeues its own jobs through the fetcher, like BasicFetch.
 */
import { randomInt } from "node:crypto";
import {
  SUPER_PROCESSES,
  processKey,
  privateQueuePattern,
  queueOfPrivateKey,
  recoveryLockKey,
} from "../../wire/keys.js";
import type { Logger } from "../../platform/logger.js";
import { dumpPayload, parsePayload } from "../../wire/payload.js";
import type { TsqRedis } from "../../platform/redis/connection.js";
import { scanKeys } from "../../platform/redis/clusterConnection.js";
import { formatSeconds, nowSeconds } from "../../wire/timestamps.js";
import { addToMorgue, type MorgueLimits } from "../morgue.js";
import type { LockHooks } from "../context.js";
import { recoverList } from "./recoverList.js";

export interface RecoveryLimits extends MorgueLimits {
  poisonPillRecoveries: number;
  poisonPillWindow: number;
}

export interface Recovered {
  requeued: number;
  poisoned: string[];
}

/** Seconds over which jobs recovered a second time or more are scattered in `schedule`. */
const SUSPECT_SPREAD = 10;

/** Seconds a recovery lock is held; far longer than a recovery takes. */
const LOCK_TTL = 60;

function privateLists(redis: TsqRedis, identity: string): Promise<string[]> {
  return scanKeys(redis, privateQueuePattern(identity));
}

/** The job as it goes to the dead set: marked PoisonPillError, other fields as they were. */
function poisonPill(raw: Buffer, limits: RecoveryLimits): string | Buffer {
  try {
    const job = parsePayload(raw.toString());
    job.error_class = "PoisonPillError";
    job.error_message =
      `the process running this job died ${limits.poisonPillRecoveries + 1} times within ${limits.poisonPillWindow} s ` +
      "(killed, crashed, hung or out of memory while running it); it was moved to the dead set so it stops taking processes down";
    job.failed_at ??= nowSeconds();
    return dumpPayload(job);
  } catch {
    return raw;
  }
}

/**
 * Recovers every private list of `identity`; unregisters it once nothing is left. One recovery of an
 * identity at a time, whoever asks (the supervisor, a sweep, the process itself on its way out): a
 * poison pill stays in its list between recover-3.lua and the MULTI that moves it to the dead set, and
 * two recoveries at once would both count it and both bury it. A recovery already under way (the lock
 * is held) is left to finish: this one returns nothing recovered.
 */
export async function recoverIdentity(
  redis: TsqRedis,
  identity: string,
  limits: RecoveryLimits,
  logger: Logger,
  /** Frees the locks of poison pills (the lock plug-ins'); absent: they expire by their TTL. */
  locks?: Pick<LockHooks, "release">,
): Promise<Recovered> {
  const holder = `${identity}:${randomInt(2 ** 31)}`;
  if ((await redis.set(recoveryLockKey(identity), holder, "EX", LOCK_TTL, "NX")) !== "OK") {
    logger.debug({ identity }, "another process is recovering this identity's jobs");
    return { requeued: 0, poisoned: [] };
  }
  try {
    return await recoverLocked(redis, identity, limits, logger, locks);
  } finally {
    if ((await redis.get(recoveryLockKey(identity))) === holder) await redis.del(recoveryLockKey(identity));
  }
}

async function recoverLocked(
  redis: TsqRedis,
  identity: string,
  limits: RecoveryLimits,
  logger: Logger,
  locks?: Pick<LockHooks, "release">,
): Promise<Recovered> {
  const result: Recovered = { requeued: 0, poisoned: [] };
  for (const key of await privateLists(redis, identity)) {
    const queue = queueOfPrivateKey(identity, key);
    const { moved, poison } = await recoverList(redis, {
      privateList: key,
      queue,
      windowSeconds: limits.poisonPillWindow,
      maxRecoveries: limits.poisonPillRecoveries,
      nowSeconds: formatSeconds(nowSeconds()),
      spreadSeconds: SUSPECT_SPREAD,
      seed: randomInt(2 ** 31),
    });
    result.requeued += moved;
    for (const raw of poison) {
      // Removed by its exact bytes (it need not be UTF-8); the dead set gets the annotated job.
      const multi = addToMorgue(redis.multi().lrem(key, 1, raw), poisonPill(raw, limits), limits);
      await multi.exec();
      await locks?.release([raw]); // a poison pill will not run again: its lock goes
      result.poisoned.push(raw.toString());
    }
  }
  if ((await privateLists(redis, identity)).length === 0) await redis.srem(SUPER_PROCESSES, identity);
  if (result.requeued > 0 || result.poisoned.length > 0) {
    logger.warn(
      { identity, requeued: result.requeued, poison_pills: result.poisoned.length },
      "recovered the in-progress jobs of a dead process; they run next",
    );
  }
  return result;
}

/**
 * Recovers identities in `super_processes` whose heartbeat hash has expired (their process is gone),
 * except `self`. recoverIdentity's lock makes sure only one process recovers each.
 */
export async function sweepOrphans(
  redis: TsqRedis,
  self: string,
  limits: RecoveryLimits,
  logger: Logger,
  locks?: Pick<LockHooks, "release">,
): Promise<number> {
  let recovered = 0;
  for (const identity of await redis.smembers(SUPER_PROCESSES)) {
    if (identity === self || (await redis.exists(processKey(identity))) === 1) continue;
    const { requeued, poisoned } = await recoverIdentity(redis, identity, limits, logger, locks);
    recovered += requeued + poisoned.length;
  }
  return recovered;
}
