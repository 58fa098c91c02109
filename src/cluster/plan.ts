/**
 * What children a cluster forks: its queue groups resolved against the known queues (Redis's `queues`
 * set, the job module's classes, the routing rules), each child's queues and job slots. The same plan
 * for `tsq-cluster` (and its --dryrun / --list-queues) and `new Cluster({...})`.
 */
import type { Logger } from "../platform/logger.js";
import { redactUrl } from "../platform/redis/connection.js";
import { QUEUES } from "../wire/keys.js";
import { Registry } from "../server/Registry.js";
import { childConcurrency, type ConcurrencyRule } from "./concurrency.js";
import { controlCharacterIn, quoted } from "../platform/config/controlCharacters.js";
import { planChildren, queueEntries, resolveGroups, splitShard, type ChildPlan, type GroupWorkers } from "./groups.js";
import { WorkerRouter } from "../platform/attributes/WorkerRouter.js";
import type { WorkerOptions } from "../platform/config/options.js";
import type { ShardConnections } from "../platform/shards/ShardConnections.js";
import { resolveShardedGroups } from "./shardGroups.js";
import { DEFAULT_SHARD } from "../platform/shards/ShardMap.js";

/**
 * What planning reads of a cluster's resolved options (options/clusterOptions.ts builds them), declared
 * here so the cluster's room does not import the options' room, which imports it.
 */
export interface PlanOptions {
  worker: WorkerOptions;
  groups: string[] | undefined;
  negate: boolean;
  strictOrder: boolean;
  concurrency: ConcurrencyRule;
  processes: number;
}

/** Where a job that names no queue goes (Sidekiq's default). */
const DEFAULT_QUEUE = "default";

/** How long --dryrun / --list-queues wait for Redis's `queues` set before planning without it (ms). */
const PLAN_REDIS_TIMEOUT = 3000;

/** The job module's classes (attributes checked) and the config's routing rules, for query groups. */
async function loadWorkers(options: PlanOptions): Promise<GroupWorkers> {
  const router = new WorkerRouter(options.worker.routingRules);
  if (!options.worker.require) return { workers: [], router };
  const registry = new Registry();
  await registry.load(options.worker.require);
  return { workers: registry.names().map((name) => registry.attributes(name)!), router };
}

/**
 * Known queues = the Redis `queues` set ∪ the queues the job module's classes go to (declared, routed,
 * namespace, or the `default` fallback of a class that names none) ∪ queues the routing rules name ∪
 * `default`, sorted. `default` is always known: every push that names no queue lands there, so `*` and
 * `-n` must cover it even before any such job was pushed (GitLab's DEFAULT_QUEUES likewise).
 * A name from Redis with a control character is hostile or broken text: left out, with a warning.
 */
async function knownQueues(
  options: PlanOptions,
  { workers, router }: GroupWorkers,
  shards: ShardConnections,
  log: Logger,
): Promise<string[]> {
  const known = new Set<string>([DEFAULT_QUEUE, ...router.ruleQueues()]);
  for (const worker of workers) known.add(router.queueOf(worker));
  for (const { name: shard, queues } of shards.map.all()) {
    for (const queue of queues) known.add(queue);
    const timeout = new Promise<null>((resolve) => setTimeout(() => resolve(null), PLAN_REDIS_TIMEOUT).unref());
    const fromRedis = await Promise.race([
      shards
        .get(shard)
        .smembers(QUEUES)
        .catch(() => null),
      timeout,
    ]);
    if (fromRedis === null)
      log.warn(
        { redis: redactUrl(shards.map.urlOf(shard)), ...(shards.map.sharded ? { shard } : {}) },
        "could not read the Redis `queues` set; planning with the job module's queues only",
      );
    for (const q of fromRedis ?? []) {
      const control = controlCharacterIn(q);
      if (control === undefined) known.add(q);
      else
        log.warn({ queue: quoted(q) }, `the Redis "queues" set has a name with ${control}; leaving it out of the plan`);
    }
  }
  return [...known].sort();
}

/** Every child the cluster forks: its group's queues, its job slots and (sharded) its shard. */
export async function planCluster(options: PlanOptions, shards: ShardConnections, log: Logger): Promise<ChildPlan[]> {
  const base = options.worker.capsules[0]!;
  const own = options.worker.shard ?? DEFAULT_SHARD;
  const named = options.groups?.some((group) => splitShard(group).shard !== undefined) ?? false;
  if (!options.groups || options.groups.length === 0) {
    // Without groups (sidekiqswarm style) every child is a `tsq` with the -q queues and its concurrency.
    const label = base.queues.map((q) => q.name).join(",");
    return planChildren(
      [base.queues],
      {
        processesPerGroup: options.processes,
        concurrency: () => ({ slots: base.concurrency }),
        strictOrder: options.strictOrder,
      },
      [label],
    ).map((child) => (shards.map.sharded ? { ...child, shard: own } : child));
  }
  const workers = await loadWorkers(options);
  const known = await knownQueues(options, workers, shards, log);
  const resolve = { negate: options.negate };
  const groups =
    shards.map.sharded || named
      ? resolveShardedGroups(options.groups, known, shards.map, own, workers, resolve)
      : resolveGroups(options.groups, known, workers, resolve).map((queues) => ({ queues, shard: own }));
  const children = planChildren(
    groups.map((group) => group.queues),
    {
      processesPerGroup: options.processes,
      concurrency: (queues) => childConcurrency(queueEntries(queues), options.concurrency),
      strictOrder: options.strictOrder,
    },
    options.groups,
  );
  // Without shards the plan stays as before (no shard in --dryrun, every child on the one Redis).
  if (shards.map.sharded) for (const child of children) child.shard = groups[child.group]!.shard;
  return children;
}

/** `--list-queues`: each group's queues once (not each child's: --processes repeats a group). */
export function groupQueueLists(children: ChildPlan[]): string[][] {
  const byGroup = new Map<number, string[]>();
  for (const child of children)
    if (!byGroup.has(child.group))
      byGroup.set(
        child.group,
        child.queues.map((q) => q.name),
      );
  return [...byGroup.values()];
}
