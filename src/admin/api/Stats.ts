/**
 * Cluster-wide numbers, as `Sidekiq::Stats` and `Stats::History`: lifetime and daily counters flushed by
 * every process's heartbeat, set sizes, and the queues.
 */
import type { Redis } from "ioredis";
import { ArgumentError } from "../../wire/errors.js";
import {
  DEAD,
  PROCESSES,
  RETRY,
  SCHEDULE,
  STAT_FAILED,
  STAT_PROCESSED,
  dailyStatKey,
  processKey,
  queueKey,
} from "../../wire/keys.js";
import { nowSeconds } from "../../wire/timestamps.js";
import { JobRecord } from "./JobRecord.js";
import { processIdentities, queueNames } from "./scan.js";

export interface StatsSnapshot {
  /** Jobs run, failed or not (`stat:processed`). */
  processed: number;
  /** Jobs that raised, including those retried (`stat:failed`). */
  failed: number;
  scheduledSize: number;
  retrySize: number;
  deadSize: number;
  /** Members of `processes` (may include a process that died within the last minute). */
  processesSize: number;
  /** Jobs running now: the sum of every process's `busy`, as of its last heartbeat. */
  workersSize: number;
  /** Jobs waiting in all known queues. */
  enqueued: number;
  /** Seconds the oldest job in `default` has waited. */
  defaultQueueLatency: number;
  /** Queue name → size, largest first (Sidekiq `Stats#queues`). */
  queues: Map<string, number>;
}

export type StatName = "processed" | "failed";

/** Counts per UTC day (`YYYY-MM-DD`), newest first. */
export interface StatsHistory {
  processed: Record<string, number>;
  failed: Record<string, number>;
}

/** Daily keys live five years (Sidekiq STATS_TTL), so that is as far back as history goes. */
const MAX_HISTORY_DAYS = 5 * 365;

function count(value: unknown): number {
  const n = Number(value ?? 0);
  return Number.isFinite(n) ? n : 0;
}

function pipelineResults(results: [Error | null, unknown][] | null): unknown[] {
  return (results ?? []).map(([error, value]) => {
    if (error) throw error;
    return value;
  });
}

export class Stats {
  constructor(private readonly redis: Redis) {}

  /** Everything in two round trips plus the SSCANs of `processes` and `queues`. */
  async fetch(): Promise<StatsSnapshot> {
    const fast = pipelineResults(
      await this.redis
        .pipeline()
        .get(STAT_PROCESSED)
        .get(STAT_FAILED)
        .zcard(SCHEDULE)
        .zcard(RETRY)
        .zcard(DEAD)
        .scard(PROCESSES)
        .lrange(queueKey("default"), -1, -1)
        .exec(),
    );
    const [oldestDefault] = fast[6] as string[];
    const [processes, queues] = await Promise.all([processIdentities(this.redis), queueNames(this.redis)]);
    const slow = pipelineResults(
      await this.redis
        .pipeline([
          ...processes.map((id) => ["hget", processKey(id), "busy"]),
          ...queues.map((q) => ["llen", queueKey(q)]),
        ])
        .exec(),
    );
    const sizes = queues.map((name, i) => [name, count(slow[processes.length + i])] as const);
    return {
      processed: count(fast[0]),
      failed: count(fast[1]),
      scheduledSize: count(fast[2]),
      retrySize: count(fast[3]),
      deadSize: count(fast[4]),
      processesSize: count(fast[5]),
      workersSize: slow.slice(0, processes.length).reduce<number>((sum, busy) => sum + count(busy), 0),
      enqueued: sizes.reduce((sum, [, size]) => sum + size, 0),
      defaultQueueLatency:
        oldestDefault === undefined ? 0 : new JobRecord(oldestDefault, "default").latency(nowSeconds()),
      queues: sortBySize(sizes),
    };
  }

  /** Queue name → size, largest first. */
  async queues(): Promise<Map<string, number>> {
    const names = await queueNames(this.redis);
    const sizes = pipelineResults(await this.redis.pipeline(names.map((q) => ["llen", queueKey(q)])).exec());
    return sortBySize(names.map((name, i) => [name, count(sizes[i])] as const));
  }

  /** Daily processed and failed counts for `days` UTC days ending with `start` (default today). */
  async history(days: number, start: Date = new Date()): Promise<StatsHistory> {
    if (!Number.isInteger(days) || days < 1 || days > MAX_HISTORY_DAYS) {
      throw new ArgumentError(`history: days must be a whole number from 1 to ${MAX_HISTORY_DAYS}, got ${days}`);
    }
    const dates = Array.from({ length: days }, (_, i) => new Date(start.getTime() - i * 86_400_000));
    const result: StatsHistory = { processed: {}, failed: {} };
    for (const [name, base] of [
      ["processed", STAT_PROCESSED],
      ["failed", STAT_FAILED],
    ] as const) {
      const keys = dates.map((date) => dailyStatKey(base, date));
      const values = await this.redis.mget(keys);
      keys.forEach((key, i) => (result[name][key.slice(base.length + 1)] = count(values[i])));
    }
    return result;
  }

  /**
   * The Redis `INFO` fields the Web UI shows, as Sidekiq's `redis_info` (keys such as `redis_version`,
   * `uptime_in_days`, `connected_clients`, `used_memory_human`, `used_memory_peak_human`).
   */
  async redisInfo(): Promise<Record<string, string>> {
    const info: Record<string, string> = {};
    for (const line of (await this.redis.info()).split("\r\n")) {
      const colon = line.indexOf(":");
      if (colon > 0 && !line.startsWith("#")) info[line.slice(0, colon)] = line.slice(colon + 1);
    }
    return info;
  }

  /** Sets the lifetime counters to 0 (both when none are named), as `Stats#reset`. Daily counts stay. */
  async reset(...stats: StatName[]): Promise<void> {
    const chosen = stats.length === 0 ? (["processed", "failed"] as const) : stats;
    const args = [...new Set(chosen)].flatMap((stat) => [stat === "processed" ? STAT_PROCESSED : STAT_FAILED, "0"]);
    await this.redis.mset(...args);
  }
}

function sortBySize(sizes: readonly (readonly [string, number])[]): Map<string, number> {
  return new Map([...sizes].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0])));
}
