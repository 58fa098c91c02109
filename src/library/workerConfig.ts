/**
 * `new Worker({...})`'s settings, turned into the WorkerOptions a Launcher runs with. Every setting is
 * checked here with an error naming it; what is not given comes from the same defaults as the CLI
 * (platform/config/defaults.ts). `options` is the escape hatch for the rest (any config-file key,
 * camelCase).
 */
import { ArgumentError } from "../wire/errors.js";
import { refuseUnknownSettings, type ListsEveryKey } from "../platform/util/unknownKeys.js";
import { DEFAULTS } from "../platform/config/defaults.js";
import {
  BOUNDS,
  MAX_CONCURRENCY,
  MAX_QUEUE_WEIGHT,
  MAX_TIMEOUT,
  describeBound,
  showNumber,
  withinBound,
} from "../platform/config/bounds.js";
import type { QueueSpec, WorkerOptions } from "../platform/config/options.js";
import type { Logger } from "../platform/logger.js";
import type { Plugin } from "../server/plugin.js";
import type { Setting } from "../platform/config/settings.js";
import type { JobFactory } from "../server/context.js";
import type { ServerConfig } from "../server/serverConfig.js";
import { isRunnable, type RunnableClass } from "../server/Registry.js";
import { servedShard, shardCapsules } from "../platform/shards/serve.js";

export interface WorkerConfig {
  /** Redis URL (default: REDIS_URL, then redis://127.0.0.1:6379/0). */
  redis?: string;
  /** The job classes this worker runs: an array, or a module's exports (`import * as jobs from "./jobs.js"`). */
  jobs: readonly RunnableClass[] | Readonly<Record<string, unknown>>;
  /** Queues in strict order (names), or weighted (`["critical", 3]`). Default: ["default"]. */
  queues?: readonly (string | readonly [string, number])[];
  /** Jobs run at once (default 10). */
  concurrency?: number;
  /** "basic" (BRPOP, Sidekiq OSS) or "reliable" (nothing lost when the process dies). Default "basic". */
  fetch?: "basic" | "reliable";
  /** Seconds running jobs get to finish when the worker stops (default 25). */
  timeout?: number;
  /**
   * Seconds `start()` waits for Redis before it rejects (default 30; up to 86,400, or Infinity to wait
   * as long as it takes, as the `tsq` CLI does).
   */
  startTimeout?: number;
  /** Builds the instance a job runs on, e.g. `(Class) => moduleRef.get(Class)` (default `new Class()`). */
  jobFactory?: JobFactory;
  /**
   * This worker's own server middleware, client middleware, death and lifecycle handlers, registered as
   * with `configureServer` (which this replaces for this worker): `configure: (c) => c.middleware.add(M)`.
   */
  configure?: (config: ServerConfig) => void;
  /** Features, in chain order (default: every built-in one, `builtinPlugins()`); `[]`: plain Sidekiq OSS. */
  plugins?: readonly Plugin[];
  /** A pino (or pino-compatible) logger; default tsq's own. */
  logger?: Logger;
  /** Shown on the dashboard's Busy page beside the process. */
  tag?: string;
  /** Any other worker setting (config-file keys in camelCase, e.g. `{ heartbeatInterval: 5 }`). */
  options?: Partial<WorkerOptions>;
}

/** Every setting a Worker knows: anything else is a typo, refused by name. */
const KNOWN = [
  "redis",
  "jobs",
  "queues",
  "concurrency",
  "fetch",
  "timeout",
  "jobFactory",
  "configure",
  "plugins",
  "logger",
  "tag",
  "options",
  "startTimeout",
] as const satisfies readonly (keyof WorkerConfig)[];
// A WorkerConfig key missing from KNOWN fails to compile here.
const everySetting: ListsEveryKey<WorkerConfig, typeof KNOWN> = true;
void everySetting;

/** Throws ArgumentError naming the first key of `new Worker(config)` that is no setting (a typo from JavaScript). */
export function refuseUnknownWorkerSettings(config: object): void {
  refuseUnknownSettings("Worker", config, KNOWN);
}

export function jobClassesOf(jobs: WorkerConfig["jobs"]): RunnableClass[] {
  if (jobs === null || typeof jobs !== "object")
    throw new ArgumentError("Worker: `jobs` must be an array of job classes or a module's exports");
  const values = Array.isArray(jobs) ? (jobs as unknown[]) : Object.values(jobs);
  const classes = values.filter(isRunnable);
  if (Array.isArray(jobs) && classes.length !== values.length) {
    const bad = values.findIndex((value) => !isRunnable(value));
    throw new ArgumentError(`Worker: jobs[${bad}] is not a job class (a class with a perform() method)`);
  }
  if (classes.length === 0)
    throw new ArgumentError("Worker: `jobs` holds no job class (a class with a perform() method)");
  return classes;
}

function queueSpecs(queues: WorkerConfig["queues"], who: string): QueueSpec[] {
  if (queues === undefined) return [{ name: "default", weight: 0 }];
  if (!Array.isArray(queues) || queues.length === 0)
    throw new ArgumentError(`${who}: \`queues\` must be a non-empty array, e.g. ["critical", "default"]`);
  const weighted = queues.some((q) => typeof q !== "string");
  return queues.map((queue: string | readonly [string, number], i) => {
    const [name, weight]: readonly [unknown, unknown] = typeof queue === "string" ? [queue, weighted ? 1 : 0] : queue;
    if (typeof name !== "string" || name.trim() === "" || hasControlCharacter(name))
      throw new ArgumentError(`${who}: queues[${i}] must be a queue name without control characters`);
    if (typeof weight !== "number" || !Number.isInteger(weight) || weight < 0 || weight > MAX_QUEUE_WEIGHT)
      throw new ArgumentError(
        `${who}: queues[${i}] weight must be an integer from 0 to ${MAX_QUEUE_WEIGHT}, got ${showNumber(weight)}`,
      );
    return { name, weight };
  });
}

/** C0 controls and DEL: a queue name holding one is a templating mistake, never meant. */
function hasControlCharacter(name: string): boolean {
  return [...name].some((c) => c.charCodeAt(0) < 0x20 || c.charCodeAt(0) === 0x7f);
}

function bounded(
  who: string,
  name: string,
  value: number | undefined,
  min: number,
  max: number,
  integer: boolean,
): void {
  if (value === undefined) return;
  if (
    typeof value !== "number" ||
    !Number.isFinite(value) ||
    value < min ||
    value > max ||
    (integer && !Number.isInteger(value))
  )
    throw new ArgumentError(
      `${who}: \`${name}\` must be ${integer ? "an integer" : "a number"} from ${min} to ${max}, got ${showNumber(value)}`,
    );
}

/**
 * The `options` escape hatch gets the same bounds as the config file: a number past one, or a plug-in
 * setting (`features`) out of its own bounds or against another (a leader renewal not below the TTL),
 * is refused by name.
 */
function checkOptionBounds(
  options: Partial<WorkerOptions> | undefined,
  who: string,
  features: readonly Setting[],
): void {
  for (const [name, value] of Object.entries(options ?? {})) {
    const bound = Object.hasOwn(BOUNDS, name) ? BOUNDS[name as keyof typeof BOUNDS] : undefined;
    const feature = features.find((setting) => setting.key === name);
    if (value === undefined || (name === "pollIntervalAverage" && value === null)) continue;
    if (bound !== undefined && !withinBound(value, bound))
      throw new ArgumentError(`${who}: \`options.${name}\` must be ${describeBound(bound)}, got ${showNumber(value)}`);
    if (feature !== undefined && !feature.accepts(value))
      throw new ArgumentError(`${who}: \`options.${name}\` must be ${feature.expected}, got ${showNumber(value)}`);
    const problem = feature?.accepts(value) ? feature.check?.(value, options ?? {}) : undefined;
    if (problem !== undefined) throw new ArgumentError(`${who}: ${problem}`);
  }
}

/** The settings a Worker shares with a Cluster's children. */
export type WorkerSettings = Pick<
  WorkerConfig,
  "redis" | "queues" | "concurrency" | "fetch" | "timeout" | "tag" | "options"
>;

/**
 * The Launcher options of a Worker's settings; `who` names the caller in errors ("Worker", "Cluster");
 * `features`: the settings of the plug-ins it runs (`settingsOf`), checked in `options` as the core's.
 */
export function workerOptionsOf(
  config: WorkerSettings,
  who = "Worker",
  features: readonly Setting[] = [],
): WorkerOptions {
  bounded(who, "concurrency", config.concurrency, 1, MAX_CONCURRENCY, true);
  bounded(who, "timeout", config.timeout, 0, MAX_TIMEOUT, false);
  checkOptionBounds(config.options, who, features);
  if (config.fetch !== undefined && config.fetch !== "basic" && config.fetch !== "reliable")
    throw new ArgumentError(`${who}: \`fetch\` must be "basic" or "reliable", got ${JSON.stringify(config.fetch)}`);
  const concurrency = config.concurrency ?? DEFAULTS.concurrency;
  const url = config.redis ?? process.env.REDIS_URL ?? DEFAULTS.redisUrl;
  const capsules = [{ name: "default", concurrency, queues: queueSpecs(config.queues, who) }];
  // On a Redis Cluster the worker serves its queues' slot group (one group: refused otherwise).
  const served = servedShard(undefined, url, []);
  if (served.map.cluster) shardCapsules(served, undefined, concurrency, () => capsules);
  return {
    ...DEFAULTS,
    redisUrl: served.redisUrl,
    ...(served.map.cluster ? { shard: served.shard, defaultRedisUrl: url } : {}),
    require: undefined,
    capsules,
    tag: config.tag ?? "",
    labels: [],
    environment: process.env.NODE_ENV ?? "development",
    verbose: false,
    fetch: config.fetch ?? "basic",
    metricsPort: undefined,
    metricsHost: "127.0.0.1",
    configFile: undefined,
    timeout: config.timeout ?? DEFAULTS.timeout,
    ...config.options,
  };
}
