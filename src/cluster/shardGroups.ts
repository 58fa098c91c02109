/**
 * `tsq-cluster` groups on a sharded Redis (src/platform/shards): each group's children serve one shard.
 *
 *   tsq-cluster "critical,default" "bulk,export" "*@bulk"
 *
 * - A group may name its shard with an `@<shard>` suffix: `"*@bulk"` is every known queue of shard bulk.
 * - Without one, the shard is the one owning the group's queues; a group whose queues live on two
 *   shards is an error (split it, one group per shard). A `*` in such a group means every known queue
 *   of the cluster's own shard (--shard, else the default one).
 */
import type { QueueSpec } from "../platform/config/options.js";
import { ConfigError } from "../wire/errors.js";
import { resolveGroupAt, splitShard, type GroupWorkers, type ResolveOptions } from "./groups.js";
import { looksLikeQuery } from "../platform/attributes/query.js";
import type { ShardMap } from "../platform/shards/ShardMap.js";

export interface ShardedGroup {
  queues: QueueSpec[];
  shard: string;
}

/** Resolves each group to its queues and shard; `known` are the known queues of every shard together. */
export function resolveShardedGroups(
  groups: string[],
  known: string[],
  map: ShardMap,
  fallback: string,
  workers?: GroupWorkers,
  options: ResolveOptions = {},
): ShardedGroup[] {
  return groups.map((group, index) => {
    const { body, shard: named } = splitShard(group);
    const where = `queue group ${index} (${JSON.stringify(group)})`;
    if (named !== undefined && !map.has(named)) {
      throw new ConfigError(`${where} names shard "${named}", which is not one of ${map.names().join(", ")}`);
    }
    const wildcard = !looksLikeQuery(body) && body.split(",").some((entry) => entry.trim() === "*");
    const home = named ?? (wildcard ? fallback : undefined);
    const candidates = home === undefined ? known : known.filter((queue) => map.shardOf(queue) === home);
    const queues = resolveGroupAt(body, index, candidates, workers, options);
    if (home !== undefined) {
      map.checkServes(
        home,
        queues.map((queue) => queue.name),
        where,
      );
      return { queues, shard: home };
    }
    const shards = new Map<string, string[]>();
    for (const { name } of queues) {
      const shard = map.shardOf(name);
      shards.set(shard, [...(shards.get(shard) ?? []), name]);
    }
    if (shards.size > 1) {
      const parts = [...shards].map(([shard, names]) => `${shard} (${names.join(", ")})`).join(" and ");
      throw new ConfigError(
        `${where} has queues on shards ${parts}; a child serves one shard: split the group, or add @<shard>`,
      );
    }
    return { queues, shard: [...shards.keys()][0]! };
  });
}
