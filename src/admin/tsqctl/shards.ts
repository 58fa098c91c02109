/**
 * tsqctl on a sharded Redis (src/platform/shards, docs/shards.md). Two global options:
 *
 *   -C, --config <file>   where the shards are listed (default: config/tsq.yml when present)
 *   --shard <name>        run the command against that shard's Redis
 *
 * `stats` and `queues` cover every shard when the config lists shards and neither --shard nor
 * --redis-url picks one Redis; every other command works on one Redis (--shard, else the default one).
 */
import type { Command } from "commander";
import { resolveWorkerFlags } from "../../options/workerOptions.js";
import { packagePlugins } from "../../packagePlugins.js";
import { settingsOf } from "../../server/plugin.js";
import { shardMapOf } from "../../platform/shards/serve.js";
import { discoverGroups } from "../../platform/shards/discoverGroups.js";
import { groupOfUrl, isClusterUrl } from "../../platform/redis/clusterUrl.js";
import type { ShardMap } from "../../platform/shards/ShardMap.js";
import { resolveRedisUrl, UsageError, type CliIO } from "./common.js";
import type { StatsJson } from "./views.js";

export interface ShardFlags {
  redisUrl?: string;
  shard?: string;
  config?: string;
}

export function addShardOptions(command: Command): Command {
  return command
    .option("-C, --config <file>", "config file listing the shards (default: config/tsq.yml when present)")
    .option("--shard <name>", "work on this shard of the config's shards: (default: the top-level Redis)");
}

/** A Redis Cluster URL without a group is the whole cluster: every group, as a config naming it. */
function wholeCluster(url: string): boolean {
  return isClusterUrl(url) && groupOfUrl(url) === undefined;
}

/** The config's shard map, with the default shard's URL from --redis-url / the file / REDIS_URL. */
export function shardMap(flags: ShardFlags, io: CliIO): ShardMap {
  const { options } = resolveWorkerFlags(
    { ...(flags.config === undefined ? {} : { config: flags.config }), redisUrl: flags.redisUrl },
    io.env,
    process.cwd(),
    settingsOf(packagePlugins()),
  );
  return shardMapOf(options);
}

/**
 * Before any command runs: `--shard NAME` becomes that shard's --redis-url. Giving both is a usage
 * error (they would disagree about which Redis is meant).
 */
export function applyShardOption(action: Command, io: CliIO): void {
  const { shard, redisUrl, config } = action.opts<ShardFlags>();
  if (shard === undefined) return;
  if (redisUrl !== undefined)
    throw new UsageError("give --shard or --redis-url, not both: --shard picks the Redis from the config's shards:");
  action.setOptionValue("redisUrl", shardMap({ config }, io).urlOf(shard));
}

/**
 * The Redis URLs a cross-shard overview reads: every shard's when the config lists shards and no
 * --redis-url or --shard chose one; else undefined (one Redis, as without shards).
 */
export async function everyShard(flags: ShardFlags, io: CliIO): Promise<{ shard: string; url: string }[] | undefined> {
  if (flags.shard !== undefined) return undefined;
  if (flags.redisUrl !== undefined && !wholeCluster(flags.redisUrl)) return undefined;
  const map = shardMap(flags, io);
  if (map.cluster) {
    const { unreachable } = await discoverGroups(map);
    for (const node of unreachable)
      io.err(
        `tsqctl: Redis Cluster master ${node} does not answer; of its slot groups only those in tsq:slot-groups are read (and reported unreachable)\n`,
      );
  }
  return map.sharded ? map.all().map(({ name, url }) => ({ shard: name, url })) : undefined;
}

/** Counters and sizes added up across shards; the latency is the default queue's, from its own shard. */
export function sumStats(perShard: { shard: string; stats: StatsJson }[], defaultQueueShard: string): StatsJson {
  const total: StatsJson = {
    processed: 0,
    failed: 0,
    enqueued: 0,
    scheduled_size: 0,
    retry_size: 0,
    dead_size: 0,
    processes_size: 0,
    workers_size: 0,
    default_queue_latency: 0,
    queues: {},
    history: { processed: {}, failed: {} },
  };
  const add = (into: Record<string, number>, from: Record<string, number>) => {
    // Queue names come from Redis: `constructor` must not read Object.prototype's, `__proto__` must stay a key.
    for (const [key, value] of Object.entries(from)) {
      const sum = (Object.hasOwn(into, key) ? (into[key] ?? 0) : 0) + value;
      Object.defineProperty(into, key, { value: sum, enumerable: true, writable: true, configurable: true });
    }
  };
  for (const { shard, stats } of perShard) {
    for (const field of COUNTS) total[field] += stats[field];
    add(total.queues, stats.queues);
    add(total.history.processed, stats.history.processed);
    add(total.history.failed, stats.history.failed);
    if (shard === defaultQueueShard) total.default_queue_latency = stats.default_queue_latency;
  }
  return total;
}

const COUNTS = [
  "processed",
  "failed",
  "enqueued",
  "scheduled_size",
  "retry_size",
  "dead_size",
  "processes_size",
  "workers_size",
] as const;

/** The Redis of `queue`: --redis-url / --shard when given, else the shard the config says owns it. */
export function queueUrl(flags: ShardFlags, io: CliIO, queue: string): string {
  if (flags.shard !== undefined || (flags.redisUrl !== undefined && !wholeCluster(flags.redisUrl)))
    return resolveRedisUrl(flags.redisUrl, io);
  const map = shardMap(flags, io);
  return map.sharded ? map.urlOf(map.shardOf(queue)) : resolveRedisUrl(flags.redisUrl, io);
}

/** Where a fleet-wide setting (a kill switch) is written: every shard, unless one Redis was chosen. */
export async function settingUrls(flags: ShardFlags, io: CliIO): Promise<string[]> {
  return (await everyShard(flags, io))?.map(({ url }) => url) ?? [resolveRedisUrl(flags.redisUrl, io)];
}
