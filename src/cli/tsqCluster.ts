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
import {
  formatPlan,
  formatQueueList,
  planChildren,
  resolveGroups,
  splitShard,
  type ChildPlan,
  type GroupWorkers,
} from "../cluster/groups.js";
import { WorkerRouter } from "../client/attributes/WorkerRouter.js";
import type { QueueSpec } from "../platform/config/options.js";
import { exitOnOptionError } from "../options/workerOptions.js";
import { resolveClusterOptions, type ClusterOptions } from "../options/clusterOptions.js";
import { startClusterMetrics } from "../metrics/serve.js";
import { WebServer, WEB_REDIS_DEADLINE_MS } from "../admin/web/index.js";
import { ShardConnections } from "../platform/shards/ShardConnections.js";
import { resolveShardedGroups } from "../platform/shards/groupShards.js";
import { shardMapOf } from "../platform/shards/serve.js";
import { DEFAULT_SHARD } from "../platform/shards/ShardMap.js";

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
 * Known queues = the Redis `queues` set ∪ queues the job module's classes declare or are routed to
 * (a rule or a namespace; not the `default` fallback) ∪ queues the routing rules name, sorted.
 */
async function knownQueues(
  options: ClusterOptions,
  { workers, router }: GroupWorkers,
  shards: ShardConnections,
  log: Logger,
): Promise<string[]> {
  const known = new Set<string>(router.ruleQueues());
  for (const worker of workers) {
    const queue = router.queueOf(worker);
    if (worker.declaredQueue !== undefined || router.route(worker) !== undefined || queue !== "default")
      known.add(queue);
  }
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
    for (const q of fromRedis ?? []) known.add(q);
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
  let groups: { queues: QueueSpec[]; shard: string }[];
  let labels: string[];
  if (options.groups && options.groups.length > 0) {
    const workers = await loadWorkers(options);
    const known = await knownQueues(options, workers, shards, log);
    groups =
      shards.map.sharded || named
        ? resolveShardedGroups(options.groups, known, shards.map, own, workers)
        : resolveGroups(options.groups, known, workers).map((queues) => ({ queues, shard: own }));
    labels = options.groups;
  } else {
    groups = [{ queues: base.queues, shard: own }];
    labels = [base.queues.map((q) => q.name).join(",")];
  }
  const children = planChildren(
    groups.map((group) => group.queues),
    options.processes,
    base.concurrency,
    labels,
  );
  // Without shards the plan stays as before (no shard in --dryrun, every child on the one Redis).
  if (shards.map.sharded) for (const child of children) child.shard = groups[child.group]!.shard;
  return children;
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
    const text = options.listQueues
      ? formatQueueList([...new Set(children.flatMap((c) => c.queues.map((q) => q.name)))])
      : formatPlan(children);
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
