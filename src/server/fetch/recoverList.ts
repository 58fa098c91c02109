/**
 * The one typed call of recover-3.lua: named arguments, the keys built here from keys.ts, the reply as a
 * record. `recoverIdentity` (recovery.ts) calls it once per private list of a dead process.
 */
import { RECOVERY_COUNTER_PREFIX, SCHEDULE, queueKey } from "../../wire/keys.js";
import type { TsqRedis } from "../../platform/redis/connection.js";
import { tagged } from "../../platform/redis/clusterConnection.js";
import { recoverLua } from "./scripts.js";

export interface RecoverListCall {
  /** The dead process's private list (`queue:sq|<identity>|<queue>`). */
  privateList: string;
  /** The queue's name; its jobs go back to `queue:<queue>`. */
  queue: string;
  /** Seconds a job's recovery counter lives: the poison-pill window. */
  windowSeconds: number;
  /** Recoveries allowed; a job found orphaned once more than this is a poison pill. */
  maxRecoveries: number;
  /** Epoch seconds as float text (`formatSeconds`). */
  nowSeconds: string;
  /** Seconds over which a job recovered again is scattered in `schedule` (now + rand * spread). */
  spreadSeconds: number;
  /** Seed of that random spread (an integer). */
  seed: number;
}

export interface RecoverListReply {
  /** Jobs put back in the queue or scattered in `schedule`. */
  moved: number;
  /** Poison pills as their exact bytes, still in the private list: the caller moves them to the dead set. */
  poison: Buffer[];
}

export async function recoverList(redis: TsqRedis, call: RecoverListCall): Promise<RecoverListReply> {
  const [moved, ...poison] = await recoverLua.runBuffer(
    redis,
    call.privateList,
    queueKey(call.queue),
    SCHEDULE,
    tagged(redis, RECOVERY_COUNTER_PREFIX),
    call.windowSeconds,
    call.maxRecoveries,
    call.nowSeconds,
    call.spreadSeconds,
    call.seed,
  );
  return { moved, poison };
}
