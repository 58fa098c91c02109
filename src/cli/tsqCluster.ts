/**
 * `tsq-cluster`: the supervisor, like `sidekiqswarm` + GitLab's `sidekiq-cluster`. A thin wrapper over
 * `Cluster` (src/library/Cluster.ts): it resolves the flags, config file and environment, then runs
 * the same code path an application gets from `new Cluster({...})`.
 *
 *   TERM, INT  stop every child within -t (SIGKILL after -t + 5 s); exit 0 if all exited cleanly.
 *              A second INT/TERM makes every child requeue its running jobs at once.
 *   TSTP       quiet every child          TTIN  every child logs its busy jobs
 *   USR2       rolling restart: each child replaced once its successor heartbeats
 */
import { configureLogger, type Logger } from "../platform/logger.js";
import { redactText } from "../platform/secrets.js";
import { connect } from "../platform/redis/connection.js";
import { formatPlan, formatQueueList, type ChildPlan } from "../cluster/groups.js";
import { exitOnOptionError } from "../options/workerOptions.js";
import { resolveClusterOptions, type ClusterOptions } from "../options/clusterOptions.js";
import { ShardConnections } from "../platform/shards/ShardConnections.js";
import { shardMapOf } from "../platform/shards/serve.js";
import { withClusterGroups } from "../platform/shards/discoverGroups.js";
import { DEFAULT_SHARD } from "../platform/shards/ShardMap.js";
import { Cluster } from "../library/Cluster.js";
import { groupQueueLists, planCluster } from "../cluster/plan.js";

/** `--dryrun` / `--list-queues`: prints the plan and exits, forking nothing. */
async function printPlan(options: ClusterOptions, log: Logger): Promise<void> {
  const redis = connect(options.worker.redisUrl, { name: "tsq-supervisor" });
  const shards = new ShardConnections(shardMapOf(options.worker), "tsq-supervisor", {
    shard: options.worker.shard ?? DEFAULT_SHARD,
    redis,
  });
  let children: ChildPlan[];
  try {
    children = await planCluster(options, await withClusterGroups(shards), log);
  } catch (error) {
    process.stderr.write(redactText(`tsq-cluster: ${error instanceof Error ? error.message : String(error)}\n`));
    process.exit(2);
  } finally {
    shards.disconnect();
    redis.disconnect();
  }
  const text = options.listQueues ? formatQueueList(groupQueueLists(children)) : formatPlan(children);
  process.stdout.write(`${text}\n`);
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
  if (options.listQueues || options.dryrun) return printPlan(options, log);

  const cluster = Cluster.fromResolved(options, log);
  let stopSignals = 0;
  const stop = (signal: string) => {
    stopSignals++;
    if (stopSignals === 1) {
      log.info({ signal }, "stopping the cluster");
      void cluster.stop();
    } else {
      log.warn({ signal }, "second stop signal: children requeue running jobs now");
      cluster.stopNow();
    }
  };
  process.on("SIGTERM", () => stop("TERM"));
  process.on("SIGINT", () => stop("INT"));
  process.on("SIGTSTP", () => cluster.quiet());
  process.on("SIGTTIN", () => cluster.dumpBusy());
  process.on("SIGUSR2", () => void cluster.rollingRestart());
  try {
    await cluster.start();
  } catch (error) {
    // A plan that cannot be made is a usage error (exit 2, as before anything forks); every child
    // failing to boot was logged by the supervisor and exits 1 below.
    if (cluster.plan.length === 0) {
      process.stderr.write(redactText(`tsq-cluster: ${error instanceof Error ? error.message : String(error)}\n`));
      process.exit(2);
    }
  }
  process.exit(await cluster.finished);
}
