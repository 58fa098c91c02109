/**
 * The `tsq-cluster` command line. Every `tsq` flag keeps its meaning and is merged exactly as `tsq` does
 * (flag > config file > environment > DEFAULTS, via resolveWorkerFlags); the supervisor's own settings
 * come from a flag, then the config file's `cluster:` section, then CLUSTER_DEFAULTS. Errors are the
 * same UsageError / ConfigError, which exitOnOptionError(error, stderr, "tsq-cluster") turns into exit 2.
 */
import { availableParallelism } from "node:os";
import { relative } from "node:path";
import { Command, Option } from "commander";
import { checkGroup } from "../cluster/groups.js";
import { CONCURRENCY_DEFAULTS, type ConcurrencyRule } from "../cluster/concurrency.js";
import { DEFAULTS } from "../platform/config/defaults.js";
import type { ClusterFileConfig, UnknownKeys } from "../platform/config/loadConfig.js";
import type { WorkerOptions } from "../platform/config/options.js";
import { ConfigError } from "../wire/errors.js";
import type { Setting } from "../platform/config/settings.js";
import { VERSION } from "../wire/version.js";
import {
  addWorkerFlags,
  boundedFlag,
  parseWorkerCommandLine,
  portFlag,
  UsageError,
  type WorkerFlags,
} from "./workerFlags.js";
import { resolveWorkerFlags } from "./workerOptions.js";

export interface ClusterOptions {
  /**
   * What every child runs with, resolved as for `tsq`; the supervisor replaces the default capsule's
   * queues with the child's plan. `metricsPort` is always undefined: the supervisor serves /metrics for
   * the whole cluster, and children binding the same port would fail.
   */
  worker: WorkerOptions;
  /** GROUP arguments, else `cluster.groups`; undefined: one group of the -q (or config `queues`) queues. */
  groups: string[] | undefined;
  /** `-n/--negate`: each group becomes every known queue it does not select. */
  negate: boolean;
  /** `--strict-order`: children work their queues in the listed order instead of GitLab's weight-1 random order. */
  strictOrder: boolean;
  /**
   * How children of groups are sized (src/cluster/concurrency.ts). `fixed` is the resolved concurrency
   * when -c, config `concurrency` or TSQ_CONCURRENCY gave one; without groups every child has
   * `worker.capsules[0].concurrency`, as `tsq` would.
   */
  concurrency: ConcurrencyRule;
  /** Children per group. */
  processes: number;
  dryrun: boolean;
  listQueues: boolean;
  /** MB of resident memory above which a child is replaced; undefined = no limit. */
  maxMemoryMb: number | undefined;
  /** Seconds without a heartbeat after which a child counts as hung and is replaced. */
  hangThreshold: number;
  /** Abandoned jobs still running at which a child is replaced gracefully; 0 = never. */
  maxAbandoned: number;
  /** TCP port for GET /metrics, /healthz, /readyz; 0 = off. */
  metricsPort: number;
  metricsHost: string;
  /** TCP port of the web dashboard, on `metricsHost`; 0 = off. */
  webPort: number;
}

export interface ClusterDefaults {
  /**
   * Seconds without a heartbeat before a child counts as hung: the heartbeat TTL, so a hung child is
   * replaced about when its process entry expires from Redis and the Web UI stops showing it.
   */
  readonly hangThreshold: number;
  /**
   * Jobs abandoned after their timeout or cancel (they ignored their abort signal) that still run in a
   * child: at this many the child is replaced gracefully, as for --max-memory, so promises nobody awaits
   * cannot pile up for ever. 0 = never.
   */
  readonly maxAbandoned: number;
  /** TCP port of the supervisor's /metrics, /healthz and /readyz (PRODUCT.md); 0 = off. */
  readonly metricsPort: number;
  /** Loopback only: metrics are not exposed beyond the host unless asked. */
  readonly metricsHost: string;
}

/** `processes` has no entry: its default, the number of CPUs, is read when options are resolved. */
export const CLUSTER_DEFAULTS = Object.freeze({
  hangThreshold: DEFAULTS.heartbeatTtl,
  maxAbandoned: 10,
  metricsPort: 9394,
  metricsHost: "127.0.0.1",
} satisfies ClusterDefaults) as ClusterDefaults;

interface ClusterFlags extends WorkerFlags {
  negate?: boolean;
  strictOrder?: boolean;
  maxConcurrency?: number;
  minConcurrency?: number;
  processes?: number;
  dryrun?: boolean;
  listQueues?: boolean;
  maxMemory?: number;
  hangThreshold?: number;
  maxAbandoned?: number;
  webPort?: number;
}

/** `features`: the settings of the plug-ins the children run; those with a `flag` become flags too. */
export function buildClusterCommand(features: readonly Setting[] = []): Command {
  const command = new Command("tsq-cluster")
    .description(
      "Run and supervise worker processes, --processes of them per queue group (like sidekiqswarm and GitLab sidekiq-cluster).",
    )
    .version(VERSION, "-V, --version", "print the tsq version and exit")
    .argument(
      "[groups...]",
      'queue groups, each one comma-separated list: "*" = every known queue, a bare name also selects its ' +
        '"name:*" queues, every queue has weight 1 (random order per fetch), a name given twice weight 2; ' +
        'a group with = & | is a worker query such as "urgency=high&resource_boundary!=cpu" ' +
        "(default: config cluster.groups, else one group of the -q queues)",
    );
  return addWorkerFlags(command, features)
    .option("-n, --negate", "run each group on every known queue except the ones it selects (GitLab --negate)")
    .option(
      "--strict-order",
      "work each group's queues in the listed order, weights ignored (default: weight 1 each, random order per fetch)",
    )
    .option(
      "-m, --max-concurrency <n>",
      `most job slots per child sized from its group (queues + 1), 0 = no maximum (default: config cluster.max_concurrency, else ${CONCURRENCY_DEFAULTS.maxConcurrency}; ignored with -c)`,
      boundedFlag("maxConcurrency"),
    )
    .option(
      "--min-concurrency <n>",
      `fewest job slots per child sized from its group; no effect with -m 0, as in GitLab (default: config cluster.min_concurrency, else ${CONCURRENCY_DEFAULTS.minConcurrency})`,
      boundedFlag("minConcurrency"),
    )
    .option(
      "--processes <n>",
      `children per group (default: config cluster.processes, else 1 per group, or the number of CPUs, ${availableParallelism()} here, without groups)`,
      boundedFlag("processes"),
    )
    .addOption(
      new Option("-d, --dryrun", "print each planned child (queues, weights, concurrency) and exit").conflicts(
        "listQueues",
      ),
    )
    .option("--list-queues", "print each group's resolved queues, a blank line between groups, and exit")
    .option(
      "--max-memory <MB>",
      "replace a child whose resident memory exceeds this many MB (default: config cluster.max_memory_mb, else no limit)",
      boundedFlag("maxMemoryMb"),
    )
    .option(
      "--max-abandoned <n>",
      `replace a child once this many jobs it abandoned (timed out or cancelled, ignoring their abort signal) still run; 0 = never (default: config cluster.max_abandoned, else ${CLUSTER_DEFAULTS.maxAbandoned})`,
      boundedFlag("maxAbandoned"),
    )
    .option(
      "--hang-threshold <seconds>",
      `replace a child that has not heartbeaten for this long (default: config cluster.hang_threshold, else ${CLUSTER_DEFAULTS.hangThreshold})`,
      boundedFlag("hangThreshold"),
    )
    .option(
      "--metrics-port <port>",
      `TCP port for GET /metrics, /healthz and /readyz, 0 = off (default: config cluster.metrics.port, else ${CLUSTER_DEFAULTS.metricsPort})`,
      portFlag,
    )
    .option(
      "--web-port <port>",
      "TCP port for the web dashboard on the metrics host, 0 = off (default 0; TSQ_WEB_PASSWORD / TSQ_WEB_TOKEN turn auth on)",
      portFlag,
    )
    .option(
      "--metrics-host <host>",
      `interface for the metrics port (default: config cluster.metrics.host, else ${CLUSTER_DEFAULTS.metricsHost})`,
    );
}

/** Parses `argv` (`process.argv.slice(2)`), reads the config file and the environment, and merges them. */
export function resolveClusterOptions(
  argv: string[],
  env: NodeJS.ProcessEnv,
  cwd: string,
  features: readonly Setting[] = [],
  unknownKeys: UnknownKeys = "refuse",
): ClusterOptions {
  const command = buildClusterCommand(features);
  const flags = parseWorkerCommandLine<ClusterFlags>(command, argv);
  const {
    negate,
    strictOrder,
    maxConcurrency,
    minConcurrency,
    processes,
    dryrun,
    listQueues,
    maxMemory,
    hangThreshold,
    maxAbandoned,
    metricsPort,
    metricsHost,
    webPort,
    ...workerFlags
  } = flags;
  const positional = (command.processedArgs[0] as string[] | undefined) ?? [];
  if (positional.length > 0 && workerFlags.queue !== undefined) {
    throw new UsageError(
      "give queue groups or -q, not both: with groups, each group lists its own queues",
      command.helpInformation(),
    );
  }
  const { options, cluster = {}, concurrencyGiven } = resolveWorkerFlags(workerFlags, env, cwd, features, unknownKeys);
  const groups =
    positional.length > 0 ? checkGroups(positional) : fileGroups(cluster, workerFlags, options.configFile, cwd);
  if (negate && groups === undefined) {
    throw new UsageError(
      "-n/--negate needs queue groups: give the queues to leave out, e.g. tsq-cluster -n cronjob",
      command.helpInformation(),
    );
  }
  return {
    worker: { ...options, metricsPort: undefined },
    groups,
    negate: negate ?? false,
    strictOrder: strictOrder ?? false,
    concurrency: {
      fixed: concurrencyGiven ? options.capsules[0]!.concurrency : undefined,
      max: maxConcurrency ?? cluster.maxConcurrency ?? CONCURRENCY_DEFAULTS.maxConcurrency,
      min: minConcurrency ?? cluster.minConcurrency ?? CONCURRENCY_DEFAULTS.minConcurrency,
    },
    // Each group is one child, as in GitLab's sidekiq-cluster; without groups, one child per CPU (sidekiqswarm).
    processes: processes ?? cluster.processes ?? (groups ? 1 : availableParallelism()),
    dryrun: dryrun ?? false,
    listQueues: listQueues ?? false,
    maxMemoryMb: maxMemory ?? cluster.maxMemoryMb,
    hangThreshold: hangThreshold ?? cluster.hangThreshold ?? CLUSTER_DEFAULTS.hangThreshold,
    maxAbandoned: maxAbandoned ?? cluster.maxAbandoned ?? CLUSTER_DEFAULTS.maxAbandoned,
    metricsPort: metricsPort ?? cluster.metrics?.port ?? CLUSTER_DEFAULTS.metricsPort,
    metricsHost: metricsHost ?? cluster.metrics?.host ?? CLUSTER_DEFAULTS.metricsHost,
    webPort: webPort ?? 0,
  };
}

/** Syntax is checked now, so a bad group exits 2 before Redis is asked for the known queues. */
function checkGroups(groups: string[]): string[] {
  groups.forEach((group, index) => checkGroup(group, index));
  return groups;
}

/** `cluster.groups`, unless -q was given: a flag beats the file, and -q means one group of those queues. */
function fileGroups(
  cluster: ClusterFileConfig,
  flags: WorkerFlags,
  configFile: string | undefined,
  cwd: string,
): string[] | undefined {
  if (cluster.groups === undefined || flags.queue !== undefined) return undefined;
  try {
    return checkGroups(cluster.groups);
  } catch (error) {
    if (!(error instanceof ConfigError) || configFile === undefined) throw error;
    throw new ConfigError(`${relative(cwd, configFile)}: cluster.groups: ${error.message}`);
  }
}
