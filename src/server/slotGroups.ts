/**
 * On a Redis Cluster a worker adds the slot group it serves to `tsq:slot-groups`, kept in the group of
 * the queue `default`, once at start: tools find groups by scanning the masters, and this set names the
 * groups of a master that no longer answers (docs/redis-connections.md). Nothing on a single server.
 */
import { connect } from "../platform/redis/connection.js";
import { isCluster } from "../platform/redis/clusterConnection.js";
import { shardMapOf } from "../platform/shards/serve.js";
import { DEFAULT_SHARD } from "../platform/shards/ShardMap.js";
import { SLOT_GROUPS } from "../wire/keys.js";
import type { ServerContext } from "./context.js";

/** ms the registration may take: a registry whose master is down must not hold the worker. */
const REGISTER_DEADLINE_MS = 5000;

/** Not awaited by the start: best effort on a connection of its own, closed when the SADD settles. */
export function registerSlotGroup(ctx: ServerContext): void {
  if (!isCluster(ctx.redis)) return;
  const group = ctx.options.shard ?? DEFAULT_SHARD;
  const map = shardMapOf(ctx.options);
  const registry = connect(map.urlOf(map.shardOf("default")), {
    name: "tsq-register",
    commandTimeoutMs: REGISTER_DEADLINE_MS,
  });
  registry
    .sadd(SLOT_GROUPS, group)
    .catch((error: unknown) => ctx.logger.warn({ err: error }, "could not record this slot group in tsq:slot-groups"))
    .finally(() => registry.disconnect());
}
