/**
 * The dead set ("morgue"): `ZADD dead <now> <job>` trimmed on every add by age (180 days) and size
 * (10,000), in one MULTI, as Sidekiq's `send_to_morgue` and `DeadSet#kill` do.
 */
import type { ChainableCommander } from "ioredis";
import { DEAD } from "../wire/keys.js";
import type { TsqRedis } from "../platform/redis/connection.js";
import { formatSeconds, nowSeconds } from "../wire/timestamps.js";

export interface MorgueLimits {
  /** Entries kept (Sidekiq `dead_max_jobs`). */
  deadMaxJobs: number;
  /** Seconds an entry is kept (Sidekiq `dead_timeout_in_seconds`). */
  deadTimeoutInSeconds: number;
}

/** Queues the add and both trims on `multi`, so callers can make them part of a larger transaction. */
export function addToMorgue(
  multi: ChainableCommander,
  json: string | Buffer,
  limits: MorgueLimits,
): ChainableCommander {
  const now = nowSeconds();
  return (
    multi
      .zadd(DEAD, formatSeconds(now), json)
      .zremrangebyscore(DEAD, "-inf", formatSeconds(now - limits.deadTimeoutInSeconds))
      // Keeps the newest deadMaxJobs - 1 entries, as Sidekiq's `ZREMRANGEBYRANK dead 0 -max` does.
      .zremrangebyrank(DEAD, 0, -limits.deadMaxJobs)
  );
}

/** Adds many jobs in one MULTI (one add, one pair of trims): bulk kills at one round trip per batch. */
export async function sendManyToMorgue(
  redis: TsqRedis,
  texts: readonly (string | Buffer)[],
  limits: MorgueLimits,
): Promise<void> {
  if (texts.length === 0) return;
  const now = formatSeconds(nowSeconds());
  const members = texts.flatMap((text) => [now, text]);
  const results = await redis
    .multi()
    .zadd(DEAD, ...members)
    .zremrangebyscore(DEAD, "-inf", formatSeconds(nowSeconds() - limits.deadTimeoutInSeconds))
    .zremrangebyrank(DEAD, 0, -limits.deadMaxJobs)
    .exec();
  for (const [error] of results ?? []) if (error) throw error;
}

export async function sendToMorgue(redis: TsqRedis, json: string | Buffer, limits: MorgueLimits): Promise<void> {
  const results = await addToMorgue(redis.multi(), json, limits).exec();
  for (const [error] of results ?? []) if (error) throw error;
}
