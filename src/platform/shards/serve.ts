/**
 * Which shard a worker process serves, and with which queues: `tsq --shard bulk` works the queues the
 * `bulk` shard lists (unless -q names some of them) against that shard's Redis. Without --shard a process
 * serves the default shard, the top-level Redis, as before shards existed.
 */
import type { CapsuleConfig, QueueSpec } from "../config/options.js";
import { DEFAULT_SHARD, ShardMap, type ShardConfig } from "./ShardMap.js";

export interface ServedShard {
  shard: string;
  /** The served shard's Redis. */
  redisUrl: string;
  map: ShardMap;
}

/** Builds the shard map (a ConfigError for overlaps or an unknown --shard) and picks the served shard. */
export function servedShard(flag: string | undefined, defaultUrl: string, shards: ShardConfig[]): ServedShard {
  const map = new ShardMap(defaultUrl, shards);
  const shard = flag ?? DEFAULT_SHARD;
  return { shard, redisUrl: map.urlOf(shard), map };
}

/**
 * The capsules of a process serving `served`: on a named shard, one capsule of the -q queues or else the
 * shard's own (the config's top-level queues and capsules describe the default shard's processes).
 * Every queue is checked to live on the served shard.
 */
export function shardCapsules(
  served: ServedShard,
  flagQueues: QueueSpec[] | undefined,
  concurrency: number,
  defaultShardCapsules: () => CapsuleConfig[],
): CapsuleConfig[] {
  const capsules =
    served.shard === DEFAULT_SHARD
      ? defaultShardCapsules()
      : [
          {
            name: "default",
            concurrency,
            queues: flagQueues ?? served.map.get(served.shard).queues.map((name) => ({ name, weight: 0 })),
          },
        ];
  for (const capsule of capsules)
    served.map.checkServes(
      served.shard,
      capsule.queues.map((queue) => queue.name),
    );
  return capsules;
}

/** The shard map of resolved worker options (a single default shard when no shards are configured). */
export function shardMapOf(options: { redisUrl: string; defaultRedisUrl?: string; shards?: ShardConfig[] }): ShardMap {
  return new ShardMap(options.defaultRedisUrl ?? options.redisUrl, options.shards ?? []);
}
