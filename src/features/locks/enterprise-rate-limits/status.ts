/**
 * What `tsqctl ratelimits` shows: the rate limiters with state in Redis (found with SCAN, as Enterprise's
 * Web UI finds its limiters: idle ones have expired and are not listed), the classes with jobs parked on
 * their keyed `static limit`, and the all-time count of OverLimit reschedules.
 */
import type { Redis } from "ioredis";
import { KEYED_WAITING, STAT_OVERRATED, keyedReadyKey, LOCK_PREFIX } from "../../../wire/keys.js";

export interface LimiterStatus {
  kind: "concurrent" | "bucket" | "window" | "leaky" | "points";
  name: string;
  /** Leases held (concurrent), count this interval (bucket), admissions in the window, or the level. */
  used: number;
}

export interface KeyedStatus {
  class: string;
  /** Jobs parked on the class's keys. */
  parked: number;
  /** Keys with parked jobs. */
  keys: number;
}

export interface RateLimitStatus {
  limiters: LimiterStatus[];
  keyed: KeyedStatus[];
  overrated: number;
}

const KINDS: [prefix: string, kind: LimiterStatus["kind"]][] = [
  [`${LOCK_PREFIX}rate:c:`, "concurrent"],
  ["tsq:rl:b:", "bucket"],
  ["tsq:rl:w:", "window"],
  ["tsq:rl:l:", "leaky"],
  ["tsq:rl:p:", "points"],
];

/** Reads at most `max` limiters (SCAN stops there; thousands of dynamic names would drown the table). */
export async function readRateLimits(redis: Redis, max = 500): Promise<RateLimitStatus> {
  const limiters: LimiterStatus[] = [];
  for (const [prefix, kind] of KINDS) {
    let cursor = "0";
    do {
      const [next, keys] = await redis.scan(cursor, "MATCH", `${prefix}*`, "COUNT", 1000);
      cursor = next;
      for (const key of keys) {
        const name = key.slice(prefix.length);
        // Windows of keyed class limits (`k:<Class>:<key>`) are shown per class below.
        if (kind === "window" && name.startsWith("k:")) continue;
        if (limiters.length < max) limiters.push({ kind, name, used: await usedOf(redis, kind, key) });
      }
    } while (cursor !== "0" && limiters.length < max);
  }
  const waiting = await redis.hgetall(KEYED_WAITING);
  const keyed = await Promise.all(
    Object.entries(waiting).map(async ([klass, parked]) => ({
      class: klass,
      parked: Number(parked),
      keys: await redis.zcard(keyedReadyKey(klass)),
    })),
  );
  const overrated = Number((await redis.get(STAT_OVERRATED)) ?? 0);
  limiters.sort((a, b) => a.kind.localeCompare(b.kind) || a.name.localeCompare(b.name));
  keyed.sort((a, b) => a.class.localeCompare(b.class));
  return { limiters, keyed, overrated };
}

async function usedOf(redis: Redis, kind: LimiterStatus["kind"], key: string): Promise<number> {
  if (kind === "concurrent") return redis.hlen(key);
  if (kind === "window") return redis.zcard(key);
  const field = kind === "bucket" ? "used" : "level";
  const value = Number(await redis.hget(key, field));
  return Number.isFinite(value) ? Math.round(value * 100) / 100 : 0;
}
