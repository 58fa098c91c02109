/**
 * Which shard a worker process serves, and with which queues: `tsq --shard bulk` works the queues the
 * `bulk` shard lists (unless -q names some of them) against that shard's Redis. Without --shard a process
 * serves the default shard, the top-level Redis, as before shards existed.
 */
import type { CapsuleConfig, QueueSpec } from "../config/options.js";
import { ConfigError } from "../../wire/errors.js";
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
 * Every queue is checked to live on the served shard. On a Redis Cluster without --shard the process
 * serves the slot group of its queues (`served` is updated), which must be one group.
 */
export function shardCapsules(
  served: ServedShard,
  flagQueues: QueueSpec[] | undefined,
  concurrency: number,
  defaultShardCapsules: () => CapsuleConfig[],
  shardFlag?: string,
): CapsuleConfig[] {
  if (served.map.cluster && shardFlag === undefined) {
    const capsules = defaultShardCapsules();
    const group = clusterGroupOf(served.map, capsules);
    Object.assign(served, { shard: group, redisUrl: served.map.urlOf(group) });
    return capsules;
  }
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

/**
 * The one slot group every queue of `capsules` lives in; a ConfigError naming the groups otherwise: a
 * blocking fetch (BRPOP) waits on keys of one slot only, and every script of a job's life stays in one.
 */
function clusterGroupOf(map: ShardMap, capsules: CapsuleConfig[]): string {
  const groups = new Map<string, string[]>();
  for (const queue of capsules.flatMap((capsule) => capsule.queues.map((spec) => spec.name))) {
    const group = map.shardOf(queue);
    groups.set(group, [...(groups.get(group) ?? []), queue]);
  }
  if (groups.size <= 1) return [...groups.keys()][0] ?? DEFAULT_SHARD;
  const parts = [...groups].map(([group, queues]) => `${queues.join(", ")} (group ${group})`).join(" and ");
  throw new ConfigError(
    `on a Redis Cluster a process serves one slot group, and its queues are in ${groups.size}: ${parts}. ` +
      "A blocking fetch waits on the keys of one slot only, so there is no fetch order across groups: list " +
      "the queues under one shards: entry (one group, one slot: weighted and strict order work), or run a " +
      "process per group (--shard <group>, or one tsq-cluster group each)",
  );
}

/** The shard map of resolved worker options (a single default shard when no shards are configured). */
export function shardMapOf(options: { redisUrl: string; defaultRedisUrl?: string; shards?: ShardConfig[] }): ShardMap {
  return new ShardMap(options.defaultRedisUrl ?? options.redisUrl, options.shards ?? []);
}
