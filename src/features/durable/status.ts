/**
 * How many durable jobs are parked now, for the `tsq_durable_waiting` and `tsq_durable_sleeping` gauges:
 * one ZCOUNT per index, O(log n), whatever the size of `schedule`.
 *
 *   127.0.0.1:6379> ZRANGE tsq:durable:index:waiting 0 -1 WITHSCORES
 *   1) "3f9a0c1d2e4b5a6978c0d1e2"   2) "1764707400"
 *
 * Each index holds jid -> deadline or wake time (epoch s). A job leaves the waiting index when it is
 * signalled or cancelled, the sleeping one when it is cancelled; otherwise its entry goes stale when its
 * time passes (the poller then moves it), so only entries still in the future are counted. Stale entries
 * are pruned by the next park or sleep.
 */
import type { Redis } from "ioredis";
import { DURABLE_SLEEPING_INDEX, DURABLE_WAITING_INDEX } from "../../wire/keys.js";

export interface ParkedCounts {
  /** Jobs parked on an event (waitFor), before their deadline. */
  waiting: number;
  /** Jobs sleeping (sleep, sleepUntil), before their wake time. */
  sleeping: number;
}

/** One pipelined round trip. `nowMs`: epoch milliseconds. */
export async function countParked(redis: Redis, nowMs = Date.now()): Promise<ParkedCounts> {
  const after = `(${nowMs / 1000}`;
  const replies = await redis
    .pipeline()
    .zcount(DURABLE_WAITING_INDEX, after, "+inf")
    .zcount(DURABLE_SLEEPING_INDEX, after, "+inf")
    .exec();
  const [waiting, sleeping] = (replies ?? []).map(([error, value]) => {
    if (error) throw error;
    return Number(value);
  });
  return { waiting: waiting ?? 0, sleeping: sleeping ?? 0 };
}
