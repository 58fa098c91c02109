/**
 * `new Cluster({...})`'s settings, turned into the ClusterOptions `tsq-cluster` resolves from its flags
 * and config file: the one place the two shapes meet. Children's worker settings are checked as a
 * Worker's (workerConfig.ts), the supervisor's numbers against the same bounds as the flags
 * (platform/config/bounds.ts), and queue groups by the same parser as the command line.
 */
import { existsSync } from "node:fs";
import { availableParallelism } from "node:os";
import { resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { ArgumentError, ConfigError } from "../wire/errors.js";
import { refuseUnknownSettings } from "../platform/util/unknownKeys.js";
import { BOUNDS, describeBound, showNumber, withinBound, type BoundName } from "../platform/config/bounds.js";
import { checkGroup } from "../cluster/groups.js";
import { CONCURRENCY_DEFAULTS } from "../cluster/concurrency.js";
import { CLUSTER_DEFAULTS, type ClusterOptions } from "../options/clusterOptions.js";
import type { Logger } from "../platform/logger.js";
import { workerOptionsOf, type WorkerSettings } from "./workerConfig.js";
import type { Setting } from "../platform/config/settings.js";

export interface ClusterConfig extends WorkerSettings {
  /**
   * The job module every child loads: a path (relative to the working directory) or a `file:` URL,
   * e.g. `new URL("./jobs.js", import.meta.url)`. Children are separate processes, so classes cannot
   * be handed over; they import the module themselves.
   */
  require: string | URL;
  /** Children per group (default: 1 per group with `groups`, else one per CPU). */
  processes?: number;
  /** Queue groups, as `tsq-cluster`'s GROUP arguments (`"mailers,default"`, `"*"`, a worker query). */
  groups?: readonly string[];
  /** Each group runs every known queue it does not select (`-n`). */
  negate?: boolean;
  /** Children work their group's queues in the listed order instead of weight-1 random order. */
  strictOrder?: boolean;
  /** Most / fewest job slots of a child sized from its group (`-m`, `--min-concurrency`); ignored with `concurrency`. */
  maxConcurrency?: number;
  minConcurrency?: number;
  /** MB of resident memory above which a child is replaced (default: no limit). */
  maxMemoryMb?: number;
  /** Seconds without a heartbeat after which a child counts as hung and is replaced (default: the heartbeat TTL, 60). */
  hangThreshold?: number;
  /** Abandoned jobs still running at which a child is replaced gracefully (default 10); 0 = never. */
  maxAbandoned?: number;
  /** TCP port of the cluster's /metrics, /healthz and /readyz; 0 = off (the default from code). */
  metricsPort?: number;
  /** Interface for `metricsPort` and `webPort` (default 127.0.0.1). */
  metricsHost?: string;
  /** TCP port of the web dashboard; 0 = off (the default). */
  webPort?: number;
  /** A pino (or pino-compatible) logger for the supervisor; default tsq's own. Children log on their own. */
  logger?: Logger;
}

/** Every setting a Cluster knows: anything else is a typo, refused by name. */
const KNOWN = [
  "redis",
  "queues",
  "concurrency",
  "fetch",
  "timeout",
  "tag",
  "options",
  "require",
  "processes",
  "groups",
  "negate",
  "strictOrder",
  "maxConcurrency",
  "minConcurrency",
  "maxMemoryMb",
  "hangThreshold",
  "maxAbandoned",
  "metricsPort",
  "metricsHost",
  "webPort",
  "logger",
] as const satisfies readonly (keyof ClusterConfig)[];

/** The ClusterOptions of `new Cluster(config)`; throws ArgumentError naming the first bad setting. */
export function clusterOptionsOf(config: ClusterConfig, features: readonly Setting[] = []): ClusterOptions {
  if (config === null || typeof config !== "object" || Array.isArray(config))
    throw new ArgumentError("new Cluster(config): config must be an object");
  refuseUnknown(config);
  const require = jobModulePath(config.require);
  for (const name of [
    "processes",
    "maxConcurrency",
    "minConcurrency",
    "maxMemoryMb",
    "hangThreshold",
    "maxAbandoned",
  ] as const)
    bounded(name, config[name]);
  for (const name of ["metricsPort", "webPort"] as const) port(name, config[name]);
  for (const name of ["negate", "strictOrder"] as const)
    if (config[name] !== undefined && typeof config[name] !== "boolean")
      throw new ArgumentError(`Cluster: \`${name}\` must be true or false, got ${showNumber(config[name])}`);
  const groups = groupsOf(config);
  const worker = workerOptionsOf(config, "Cluster", features);
  return {
    worker: { ...worker, require, metricsPort: undefined },
    groups,
    negate: config.negate ?? false,
    strictOrder: config.strictOrder ?? false,
    concurrency: {
      fixed: config.concurrency,
      max: config.maxConcurrency ?? CONCURRENCY_DEFAULTS.maxConcurrency,
      min: config.minConcurrency ?? CONCURRENCY_DEFAULTS.minConcurrency,
    },
    // As tsq-cluster: each group is one child; without groups, one child per CPU (sidekiqswarm).
    processes: config.processes ?? (groups ? 1 : availableParallelism()),
    dryrun: false,
    listQueues: false,
    maxMemoryMb: config.maxMemoryMb,
    hangThreshold: config.hangThreshold ?? CLUSTER_DEFAULTS.hangThreshold,
    maxAbandoned: config.maxAbandoned ?? CLUSTER_DEFAULTS.maxAbandoned,
    // Off unless asked: an application embedding a cluster may already serve that port itself.
    metricsPort: config.metricsPort ?? 0,
    metricsHost: config.metricsHost ?? CLUSTER_DEFAULTS.metricsHost,
    webPort: config.webPort ?? 0,
  };
}

function refuseUnknown(config: object): void {
  if (Object.hasOwn(config, "jobs"))
    throw new ArgumentError(
      "Cluster: `jobs` is not a Cluster setting: children are separate processes and load the job module " +
        'themselves; give its path as `require` (e.g. require: new URL("./jobs.js", import.meta.url))',
    );
  if (Object.hasOwn(config, "plugins"))
    throw new ArgumentError(
      "Cluster: `plugins` is not a Cluster setting: children are separate processes and cannot be handed " +
        "plug-in objects; export them from the job module instead " +
        "(`export const plugins = [...builtinPlugins(), myPlugin()]`), which every child and the supervisor read",
    );
  refuseUnknownSettings("Cluster", config, KNOWN);
}

/** The job module's absolute path; classes are refused with the reason, a missing file by its path. */
function jobModulePath(value: unknown): string {
  if (value === undefined)
    throw new ArgumentError(
      'Cluster: `require` is missing: give the path of the job module each child loads (e.g. new URL("./jobs.js", import.meta.url))',
    );
  if (typeof value === "function" || Array.isArray(value) || (typeof value === "object" && !(value instanceof URL)))
    throw new ArgumentError(
      "Cluster: `require` must be the job module's path (a string or a file: URL), not classes: children are " +
        "separate processes and import the module themselves; put the classes in a module and give its path",
    );
  if (value instanceof URL && value.protocol !== "file:")
    throw new ArgumentError(`Cluster: \`require\` must be a file: URL or a path, got ${value.protocol} URL`);
  if (typeof value !== "string" && !(value instanceof URL))
    throw new ArgumentError(`Cluster: \`require\` must be the job module's path, got ${typeof value}`);
  const path = value instanceof URL ? fileURLToPath(value) : resolve(value);
  if (!existsSync(path))
    throw new ArgumentError(`Cluster: \`require\`: no job module at ${path}; check the path (and build it first)`);
  return path;
}

function bounded(name: BoundName, value: unknown): void {
  if (value !== undefined && !withinBound(value, BOUNDS[name]))
    throw new ArgumentError(`Cluster: \`${name}\` must be ${describeBound(BOUNDS[name])}, got ${showNumber(value)}`);
}

function port(name: string, value: unknown): void {
  if (value !== undefined && !(typeof value === "number" && Number.isInteger(value) && value >= 0 && value <= 65_535))
    throw new ArgumentError(
      `Cluster: \`${name}\` must be a TCP port from 0 to 65535 (0 = off), got ${showNumber(value)}`,
    );
}

/** Groups checked by tsq-cluster's own parser; with groups, `queues` has no meaning and is refused. */
function groupsOf(config: ClusterConfig): string[] | undefined {
  const { groups } = config;
  if (groups === undefined) {
    if (config.negate)
      throw new ArgumentError(
        'Cluster: `negate` needs `groups`: list the queues to leave out, e.g. groups: ["cronjob"]',
      );
    return undefined;
  }
  // Checked as unknown: a caller without types may pass anything here.
  const given: unknown = groups;
  if (!Array.isArray(given) || given.length === 0 || given.some((group) => typeof group !== "string"))
    throw new ArgumentError('Cluster: `groups` must be a non-empty array of strings, e.g. ["mailers,default", "*"]');
  if (config.queues !== undefined)
    throw new ArgumentError(
      "Cluster: give `groups` or `queues`, not both: with groups, each group lists its own queues",
    );
  const names = given as string[];
  names.forEach((group, index) => {
    try {
      checkGroup(group, index);
    } catch (error) {
      if (error instanceof ConfigError) throw new ArgumentError(`Cluster: groups[${index}]: ${error.message}`);
      throw error;
    }
  });
  return [...names];
}
