/**
 * `tsq-cluster`: the supervisor, like `sidekiqswarm` + GitLab's `sidekiq-cluster`.
 *
 *   TERM, INT  stop every child within -t (SIGKILL after -t + 5 s); exit 0 if all exited cleanly.
 *              A second INT/TERM makes every child requeue its running jobs at once.
 *   TSTP       quiet every child          TTIN  every child logs its busy jobs
 *   USR2       rolling restart: each child replaced once its successor heartbeats
 */
import { releaseLocksOf } from "../features/locks/release.js";
import { configureLogger, type Logger } from "../platform/logger.js";
import { redactText } from "../platform/secrets.js";
import { connect, redactUrl } from "../platform/redis/connection.js";
import { QUEUES } from "../wire/keys.js";
import { Registry } from "../server/Registry.js";
import { Supervisor } from "../cluster/Supervisor.js";
import { childConcurrency } from "../cluster/concurrency.js";
import { controlCharacterIn, quoted } from "../platform/config/controlCharacters.js";
import {
  formatPlan,
  formatQueueList,
  planChildren,
  queueEntries,
  resolveGroups,
  splitShard,
  type ChildPlan,
  type GroupWorkers,
} from "../cluster/groups.js";
import { WorkerRouter } from "../platform/attributes/WorkerRouter.js";
import { exitOnOptionError } from "../options/workerOptions.js";
import { resolveClusterOptions, type ClusterOptions } from "../options/clusterOptions.js";
import { startClusterMetrics } from "../metrics/serve.js";
import { WebServer, WEB_REDIS_DEADLINE_MS } from "../admin/web/index.js";
import { ShardConnections } from "../platform/shards/ShardConnections.js";
import { resolveShardedGroups } from "../cluster/shardGroups.js";
import { shardMapOf } from "../platform/shards/serve.js";
import { DEFAULT_SHARD } from "../platform/shards/ShardMap.js";

/** Where a job that names no queue goes (Sidekiq's default). */
const DEFAULT_QUEUE = "default";

/** How long --dryrun / --list-queues wait for Redis's `queues` set before planning without it (ms). */
const PLAN_REDIS_TIMEOUT = 3000;

/** The job module's classes (attributes checked) and the config's routing rules, for query groups. */
async function loadWorkers(options: ClusterOptions): Promise<GroupWorkers> {
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
  options: ClusterOptions,
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

/**
 * The web dashboard beside /metrics (`--web-port`), on its own connection. A port already taken is
 * logged and the cluster runs without it, as for /metrics.
 */
async function startClusterWeb(options: ClusterOptions, log: Logger): Promise<{ stop(): Promise<void> } | undefined> {
  if (!options.webPort) return undefined;
  const redis = connect(options.worker.redisUrl, { name: "tsq-web", commandTimeoutMs: WEB_REDIS_DEADLINE_MS });
  // A sharded Redis: every other shard under /shards/<name>/, on connections of the dashboard's own.
  const map = shardMapOf(options.worker);
  const others = map
    .names()
    .filter((name) => name !== DEFAULT_SHARD)
    .map((name) => ({
      name,
      redis: connect(map.urlOf(name), { name: "tsq-web", commandTimeoutMs: WEB_REDIS_DEADLINE_MS }),
    }));
  const disconnect = () => {
    redis.disconnect();
    for (const shard of others) shard.redis.disconnect();
  };
  const password = process.env.TSQ_WEB_PASSWORD || undefined;
  const token = process.env.TSQ_WEB_TOKEN || undefined;
  const server = new WebServer({
    redis,
    shards: others,
    port: options.webPort,
    host: options.metricsHost,
    auth: password !== undefined || token !== undefined ? { password, token } : undefined,
    logger: log,
  });
  try {
    const { url } = await server.start();
    log.info({ url }, "web dashboard listening");
  } catch (error) {
    log.error({ err: error }, `could not serve the web dashboard on port ${options.webPort}; running without it`);
    disconnect();
    return undefined;
  }
  return {
    async stop() {
      await server.stop();
      disconnect();
    },
  };
}

async function plan(options: ClusterOptions, shards: ShardConnections, log: Logger): Promise<ChildPlan[]> {
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
function groupQueueLists(children: ChildPlan[]): string[][] {
  const byGroup = new Map<number, string[]>();
  for (const child of children)
    if (!byGroup.has(child.group))
      byGroup.set(
        child.group,
        child.queues.map((q) => q.name),
      );
  return [...byGroup.values()];
}

export async function main(argv: string[]): Promise<void> {
  let options: ClusterOptions;
  try {
    options = resolveClusterOptions(argv, process.env, process.cwd());
  } catch (error) {
    exitOnOptionError(error, process.stderr, "tsq-cluster");
  }
  const log = configureLogger({
    ...(options.worker.verbose ? { level: "debug" as const } : {}),
    base: { role: "supervisor" },
  });
  const redis = connect(options.worker.redisUrl, { name: "tsq-supervisor" });
  // The supervisor's own Redis is its shard's; it reaches the others' for planning, pruning and /metrics.
  const shards = new ShardConnections(shardMapOf(options.worker), "tsq-supervisor", {
    shard: options.worker.shard ?? DEFAULT_SHARD,
    redis,
  });
  const disconnectAll = () => {
    shards.disconnect();
    redis.disconnect();
  };
  let children: ChildPlan[];
  try {
    children = await plan(options, shards, log);
  } catch (error) {
    process.stderr.write(redactText(`tsq-cluster: ${error instanceof Error ? error.message : String(error)}\n`));
    disconnectAll();
    process.exit(2);
  }
  if (options.listQueues || options.dryrun) {
    const text = options.listQueues ? formatQueueList(groupQueueLists(children)) : formatPlan(children);
    process.stdout.write(`${text}\n`);
    disconnectAll();
    return;
  }

  const supervisor = new Supervisor({
    worker: options.worker,
    plan: children,
    hangThreshold: options.hangThreshold,
    maxMemoryMb: options.maxMemoryMb,
    logger: log,
    redis,
    redisOf: (shard) => (shard === undefined ? redis : shards.get(shard)),
    releaseLocks: (conn, stored) => releaseLocksOf(conn, stored),
  });
  let stopSignals = 0;
  const stop = (signal: string) => {
    stopSignals++;
    if (stopSignals === 1) {
      log.info({ signal }, "stopping the cluster");
      void supervisor.stop();
    } else {
      log.warn({ signal }, "second stop signal: children requeue running jobs now");
      supervisor.stopNow();
    }
  };
  process.on("SIGTERM", () => stop("TERM"));
  process.on("SIGINT", () => stop("INT"));
  process.on("SIGTSTP", () => supervisor.quiet());
  process.on("SIGTTIN", () => supervisor.dumpBusy());
  process.on("SIGUSR2", () => void supervisor.rollingRestart());
  log.info(
    {
      redis: redactUrl(options.worker.redisUrl),
      children: children.map((c) => ({
        child: c.index,
        group: c.groupLabel,
        queues: c.queues,
        concurrency: c.concurrency,
        ...(c.concurrencyWhy === undefined ? {} : { concurrency_from: c.concurrencyWhy }),
      })),
    },
    "starting tsq-cluster",
  );
  supervisor.start();
  // Subscribes before any child can report (children take a while to boot), then listens.
  const metrics = await startClusterMetrics(supervisor, {
    plan: children,
    worker: options.worker,
    redis,
    otherShards: shards.others(),
    port: options.metricsPort,
    host: options.metricsHost,
    logger: log,
  });
  const web = await startClusterWeb(options, log);
  const code = await supervisor.finished;
  await web?.stop();
  await metrics?.stop();
  log.info({ code }, "tsq-cluster stopped");
  disconnectAll();
  process.exit(code);
}
