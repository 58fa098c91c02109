/**
 * An iterable job's saved state in Redis, Sidekiq 7.3's layout so its Web UI (Busy and Retries pages)
 * and `Client#cancel!` work on tsq jobs too:
 *
 *   it-<jid>  HASH  ex         executions: how many times perform started (integer)
 *                   c          the cursor to resume from, JSON ("null" before the first item)
 *                   rt         seconds spent iterating over all executions (float)
 *                   cancelled  epoch seconds of the first cancel (HSETNX, so a second cancel keeps it)
 *             EXPIRE 30 days, NX: set once, so the state outlives every retry of the job
 *
 *   127.0.0.1:6379> HGETALL it-3f9a0c1d2e4b5a6978c0d1e2
 *   1) "ex"  2) "3"  3) "c"  4) "412500"  5) "rt"  6) "7.412"
 *
 * `EXPIRE ... NX` needs Redis 7.0 or later (as Sidekiq's iterable jobs do). What each field may hold,
 * read and written alike, is stateCodec.ts.
 */
import { iterationKey } from "../../wire/keys.js";
import { decodeState, encodeState, type IterationState } from "./stateCodec.js";
import type { Redis } from "ioredis";
import type { TsqRedis } from "../../platform/redis/connection.js";

/** Seconds the state lives (Sidekiq's STATE_TTL: it must outlast the job's retries). */
export const STATE_TTL = 30 * 24 * 60 * 60;

export type { IterationState } from "./stateCodec.js";

/** The saved state, or undefined when the job has none yet (its first run). */
export async function loadState(redis: TsqRedis, jid: string): Promise<IterationState | undefined> {
  const key = iterationKey(jid);
  return decodeState(key, await redis.hgetall(key));
}

/**
 * Writes executions, cursor and runtime in one MULTI and reads `cancelled` back, as Sidekiq's
 * `flush_state`. Resolves to the cancel time, or undefined when the job was not cancelled.
 */
export async function flushState(
  redis: TsqRedis,
  jid: string,
  state: Omit<IterationState, "cancelled">,
): Promise<string | undefined> {
  const key = iterationKey(jid);
  // Encoded first: a value the next run could not read is refused here, and nothing is written.
  const fields = encodeState(key, state);
  const results = await redis.multi().hset(key, fields).expire(key, STATE_TTL, "NX").hget(key, "cancelled").exec();
  for (const [error] of results ?? []) if (error) throw error;
  const cancelled = results?.[2]?.[1];
  return typeof cancelled === "string" ? cancelled : undefined;
}

/** The job finished (or was cancelled): its state goes. */
export async function clearState(redis: TsqRedis, jid: string): Promise<void> {
  await redis.unlink(iterationKey(jid));
}

/**
 * Marks an iterable job cancelled, Ruby's `Sidekiq::Client#cancel!`: `HSETNX it-<jid> cancelled <now>`,
 * then the 30-day expiry if the key had none. The job notices at its next state flush (within 5 s) and
 * stops. Resolves to the cancel time in epoch seconds (the first cancel's, when called twice).
 */
export async function cancelIterable(redis: Redis, jid: string): Promise<number> {
  const key = iterationKey(jid);
  const results = await redis
    .pipeline()
    .hsetnx(key, "cancelled", Math.floor(Date.now() / 1000))
    .hget(key, "cancelled")
    .expire(key, STATE_TTL, "NX")
    .exec();
  for (const [error] of results ?? []) if (error) throw error;
  return Number(results?.[1]?.[1]);
}

/** What a dashboard shows of a job's state: the raw fields, never an error (Sidekiq's IterableJobQuery). */
export interface IterationProgress {
  executions: number;
  /** Seconds. */
  runtime: number;
  /** The stored cursor text (JSON), as is. */
  cursor: string;
  cancelled?: number;
}

/** The state of each of `jids` that has one, in one pipeline (one round trip for a whole page). */
export async function iterationProgress(
  redis: Redis,
  jids: readonly string[],
): Promise<Map<string, IterationProgress>> {
  const unique = [...new Set(jids)];
  const found = new Map<string, IterationProgress>();
  if (unique.length === 0) return found;
  const pipeline = redis.pipeline();
  for (const jid of unique) pipeline.hgetall(iterationKey(jid));
  const results = (await pipeline.exec()) ?? [];
  unique.forEach((jid, i) => {
    const raw = results[i]?.[1] as Record<string, string> | undefined;
    if (!raw || Object.keys(raw).length === 0) return;
    const progress: IterationProgress = {
      // Lenient: a page shows what is there ("1e+21" is 1e21, not 1), never an error.
      executions: Number(raw.ex ?? "0") || 0,
      runtime: Number.parseFloat(raw.rt ?? "0") || 0,
      cursor: raw.c ?? "null",
    };
    if (raw.cancelled !== undefined) progress.cancelled = Number(raw.cancelled) || 0;
    found.set(jid, progress);
  });
  return found;
}
