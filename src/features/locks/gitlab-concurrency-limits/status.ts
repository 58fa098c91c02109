/**
 * What `tsqctl limits` and the metrics show for each concurrency-limited class a worker has seen: its
 * limit (as a worker last read it), the jobs holding a live slot, and the jobs parked. Read-only; values
 * read from Redis are checked, since anything in Redis may have been written by someone else.
 */
import type { Redis } from "ioredis";
import { LIMITS, limitParkedKey, limitSlotsKey } from "../../../wire/keys.js";

export interface LimitStatus {
  class: string;
  /** > 0 slots, 0 no limit, < 0 paused; NaN if what is stored is not a number. */
  limit: number;
  /** Slots held and not expired: jobs running, or resumed and on their way to a worker. */
  running: number;
  parked: number;
}

/** Every limited class, sorted by name, in one pipelined round trip after the first read. */
export async function readLimits(redis: Redis, now = Date.now()): Promise<LimitStatus[]> {
  const limits = Object.entries(await redis.hgetall(LIMITS)).sort(([a], [b]) => a.localeCompare(b));
  if (limits.length === 0) return [];
  const pipeline = redis.pipeline();
  for (const [name] of limits) pipeline.hvals(limitSlotsKey(name)).llen(limitParkedKey(name));
  const replies = (await pipeline.exec()) ?? [];
  return limits.map(([name, stored], i) => {
    const [slotsError, expiries] = replies[2 * i] ?? [];
    const [parkedError, parked] = replies[2 * i + 1] ?? [];
    const live = slotsError || !Array.isArray(expiries) ? [] : expiries.filter((e) => Number(e) > now);
    return {
      class: name,
      limit: Number.isInteger(Number(stored)) ? Number(stored) : NaN,
      running: live.length,
      parked: parkedError || typeof parked !== "number" ? 0 : parked,
    };
  });
}
