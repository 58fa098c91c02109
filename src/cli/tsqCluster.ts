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
import { configureLogger } from "../platform/logger.js";
import { redactText } from "../platform/secrets.js";
import { formatPlan, formatQueueList, type ChildPlan } from "../cluster/groups.js";
import { exitOnOptionError } from "../options/workerOptions.js";
import { resolveClusterOptions, type ClusterOptions } from "../options/clusterOptions.js";
import { Cluster, ResolvedCluster } from "../library/Cluster.js";
import { groupQueueLists } from "../cluster/plan.js";
import { builtinPlugins } from "../plugins.js";
import { pluginsFromEnv } from "./pluginsFromEnv.js";
import type { Plugin } from "../server/plugin.js";

/** `--dryrun` / `--list-queues`: prints the plan and exits, forking nothing. */
async function printPlan(cluster: Cluster, options: ClusterOptions): Promise<void> {
  let children: ChildPlan[];
  try {
    children = await cluster.dryRun();
  } catch (error) {
    process.stderr.write(redactText(`tsq-cluster: ${error instanceof Error ? error.message : String(error)}\n`));
    process.exit(2);
  }
  const text = options.listQueues ? formatQueueList(groupQueueLists(children)) : formatPlan(children);
  process.stdout.write(`${text}\n`);
}

export async function main(argv: string[]): Promise<void> {
  let options: ClusterOptions;
  let plugins: Plugin[];
  try {
    options = resolveClusterOptions(argv, process.env, process.cwd());
    // The children run the same plug-ins (src/cli/childMain.ts).
    plugins = pluginsFromEnv(builtinPlugins());
  } catch (error) {
    exitOnOptionError(error, process.stderr, "tsq-cluster");
  }
  const log = configureLogger({
    ...(options.worker.verbose ? { level: "debug" as const } : {}),
    base: { role: "supervisor" },
  });
  const cluster = new Cluster(new ResolvedCluster(options, log, plugins));
  if (options.listQueues || options.dryrun) return printPlan(cluster, options);
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
