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
import { formatPlan, formatQueueList } from "../cluster/groups.js";
import { exitOnOptionError, optionErrorText } from "../options/workerOptions.js";
import { resolveClusterOptions, type ClusterOptions } from "../options/clusterOptions.js";
import { Cluster, ResolvedCluster } from "../library/Cluster.js";
import { groupQueueLists } from "../cluster/plan.js";
import { builtinPlugins } from "../plugins.js";
import { settingsOf } from "../server/plugin.js";
import { pluginsSwitch, settingsOfJobModule } from "../library/processPlugins.js";

/** What a command that ends by itself printed, and its exit status. */
export interface CommandRun {
  status: number;
  stdout: string;
  stderr: string;
}

/**
 * Options in two readings: the first knows the built-in features' keys and leaves others aside, to find
 * the job module (and set the logger before it is imported: the app may set its own); the second knows
 * its own plug-ins' keys too and refuses what none declares. The plug-in list itself is read from the
 * module at start.
 */
function resolveFirst(argv: string[], env: NodeJS.ProcessEnv, cwd: string): ClusterOptions {
  const options = resolveClusterOptions(argv, env, cwd, settingsOf(builtinPlugins()), "skip");
  pluginsSwitch(env);
  return options;
}

async function resolveWithModule(argv: string[], env: NodeJS.ProcessEnv, cwd: string, first: ClusterOptions) {
  return resolveClusterOptions(argv, env, cwd, await settingsOfJobModule(first.worker.require));
}

/** `--dryrun` / `--list-queues` for resolved options: the plan's text, forking nothing. */
async function planOutput(cluster: Cluster, options: ClusterOptions): Promise<CommandRun> {
  try {
    const children = await cluster.dryRun();
    const text = options.listQueues ? formatQueueList(groupQueueLists(children)) : formatPlan(children);
    return { status: 0, stdout: `${text}\n`, stderr: "" };
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    return { status: 2, stdout: "", stderr: redactText(`tsq-cluster: ${message}\n`) };
  }
}

/**
 * `tsq-cluster <argv>` with `--dryrun` or `--list-queues`, run to its end in this process: what it
 * prints and its exit status (main() writes it out; tests plan many command lines in one process).
 */
export async function dryRunCommand(
  argv: string[],
  env: NodeJS.ProcessEnv,
  cwd: string,
  logger: Logger,
): Promise<CommandRun> {
  let options: ClusterOptions;
  try {
    options = await resolveWithModule(argv, env, cwd, resolveFirst(argv, env, cwd));
  } catch (error) {
    const text = optionErrorText(error, "tsq-cluster");
    if (text === undefined) throw error;
    return { status: 2, stdout: "", stderr: text };
  }
  if (!options.listQueues && !options.dryrun) throw new Error("dryRunCommand: the command line has no --dryrun");
  return planOutput(new Cluster(new ResolvedCluster(options, logger, env)), options);
}

export async function main(argv: string[]): Promise<void> {
  const { env } = process;
  let options: ClusterOptions;
  try {
    options = resolveFirst(argv, env, process.cwd());
  } catch (error) {
    exitOnOptionError(error, process.stderr, "tsq-cluster");
  }
  const log = configureLogger({
    ...(options.worker.verbose ? { level: "debug" as const } : {}),
    base: { role: "supervisor" },
  });
  try {
    options = await resolveWithModule(argv, env, process.cwd(), options);
  } catch (error) {
    exitOnOptionError(error, process.stderr, "tsq-cluster");
  }
  const cluster = new Cluster(new ResolvedCluster(options, log, env));
  if (options.listQueues || options.dryrun) {
    const run = await planOutput(cluster, options);
    process.stdout.write(run.stdout);
    process.stderr.write(run.stderr);
    if (run.status !== 0) process.exit(run.status);
    return;
  }
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
