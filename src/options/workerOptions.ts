/**
 * The `tsq` options: the flags (parsed in workerFlags.ts) merged with the config file, the environment
 * and DEFAULTS into one WorkerOptions. Precedence is flag > config file > environment > default, as in
 * Sidekiq's CLI. Bad flags are a UsageError and bad settings a ConfigError; the CLI turns both into
 * exit status 2.
 */
import { existsSync } from "node:fs";
import { basename, join, resolve } from "node:path";
import { DEFAULTS } from "../platform/config/defaults.js";
import { BOUNDS, describeBound, type BoundName } from "../platform/config/bounds.js";
import {
  loadConfig,
  type ClusterFileConfig,
  type FileSettings,
  type UnknownKeys,
} from "../platform/config/loadConfig.js";
import type { CapsuleConfig, QueueSpec, WorkerOptions } from "../platform/config/options.js";
import { ConfigError } from "../wire/errors.js";
import { parseSettingText, type Setting, type SettingValue } from "../platform/config/settings.js";
import { redactUrl } from "../platform/redis/connection.js";
import { isRedisUrl, REDIS_URL_FORMAT } from "../platform/redis/redisUrl.js";
import { registerUrlSecrets } from "../platform/secrets.js";
import { servedShard, shardCapsules } from "../platform/shards/serve.js";
import { sizeLimitsFromEnv, type SizeLimits } from "../client/compression/settings.js";
import {
  buildWorkerCommand,
  DEFAULT_CONFIG,
  featureFlagValue,
  DEFAULT_ENVIRONMENT,
  DEFAULT_METRICS_HOST,
  parseBounded,
  parseWorkerCommandLine,
  type WorkerFlags,
} from "./workerFlags.js";

// The command line's errors and its exit, for the entry points that resolve their options here.
export { exitOnOptionError, optionErrorText, UsageError, type WorkerFlags } from "./workerFlags.js";

/** The settings the environment may give (REDIS_URL, TSQ_CONCURRENCY, TSQ_TIMEOUT). */
interface EnvSettings extends Partial<SizeLimits> {
  redisUrl?: string;
  concurrency?: number;
  timeout?: number;
}

/** Weight 0: no weight, so a single queue is simply worked in order. */
const DEFAULT_QUEUES: readonly QueueSpec[] = [{ name: "default", weight: 0 }];

/**
 * Parses `argv` (without node and the script: `process.argv.slice(2)`), reads the config file and the
 * environment, and returns the merged options plus the file's `cluster:` section for the supervisor.
 */
export function resolveWorkerOptions(
  argv: string[],
  env: NodeJS.ProcessEnv,
  cwd: string,
  features: readonly Setting[] = [],
  unknownKeys: UnknownKeys = "refuse",
): ResolvedWorkerOptions {
  const flags = parseWorkerCommandLine<WorkerFlags>(buildWorkerCommand(features), argv);
  return resolveWorkerFlags(flags, env, cwd, features, unknownKeys);
}

export interface ResolvedWorkerOptions {
  options: WorkerOptions;
  cluster: ClusterFileConfig | undefined;
  /** True when -c, the config file or TSQ_CONCURRENCY set the concurrency (false: DEFAULTS). */
  concurrencyGiven: boolean;
}

/**
 * resolveWorkerOptions for flags already parsed by parseWorkerCommandLine (as `tsq-cluster` does).
 * `features`: the settings of the plug-ins the process runs (`settingsOf`), which the config file, the
 * environment and the flags may set besides the core's.
 */
export function resolveWorkerFlags(
  flags: WorkerFlags,
  env: NodeJS.ProcessEnv,
  cwd: string,
  features: readonly Setting[] = [],
  unknownKeys: UnknownKeys = "refuse",
): ResolvedWorkerOptions {
  const environment = flags.environment ?? environmentName(env);
  const config = locateConfig(flags.config, cwd);
  const file = config ? loadConfig(config.path, environment, config.label, features, unknownKeys) : {};
  const fromEnv = readEnvironment(env);
  const options = {
    ...merge(flags, file, fromEnv, { cwd, environment, configFile: config?.path }),
    ...featureOptions(features, flags, file, env, config?.label),
  };
  for (const url of [options.redisUrl, ...(options.shards ?? []).map((shard) => shard.url)]) registerUrlSecrets(url);
  registerUrlSecrets(options.defaultRedisUrl);
  const concurrencyGiven = (flags.concurrency ?? file.concurrency ?? fromEnv.concurrency) !== undefined;
  return { options, cluster: file.cluster, concurrencyGiven };
}

function environmentName(env: NodeJS.ProcessEnv): string {
  return env["TSQ_ENV"] || env["APP_ENV"] || env["NODE_ENV"] || DEFAULT_ENVIRONMENT;
}

/** The explicit -C file (must exist), else config/tsq.yml when present. `label` is what messages show. */
function locateConfig(flag: string | undefined, cwd: string): { path: string; label: string } | undefined {
  if (flag !== undefined) {
    const path = resolve(cwd, flag);
    if (!existsSync(path))
      throw new ConfigError(`${flag}: config file not found (given with -C, looked in ${cwd}); check the path`);
    return { path, label: flag };
  }
  const path = join(cwd, DEFAULT_CONFIG);
  return existsSync(path) ? { path, label: DEFAULT_CONFIG } : undefined;
}

/** Empty variables count as unset, as shells and dotenv files often leave them. */
function readEnvironment(env: NodeJS.ProcessEnv): EnvSettings {
  const settings: EnvSettings = { ...sizeLimitsFromEnv(env) };
  const redisUrl = env["REDIS_URL"];
  if (redisUrl) {
    if (!isRedisUrl(redisUrl))
      throw new ConfigError(`REDIS_URL must be ${REDIS_URL_FORMAT}, got ${redactUrl(redisUrl)}; fix or unset it`);
    settings.redisUrl = redisUrl;
  }
  const concurrency = env["TSQ_CONCURRENCY"];
  if (concurrency) settings.concurrency = envNumber("TSQ_CONCURRENCY", concurrency, "concurrency");
  const timeout = env["TSQ_TIMEOUT"];
  if (timeout) settings.timeout = envNumber("TSQ_TIMEOUT", timeout, "timeout");
  return settings;
}

function envNumber(variable: string, text: string, name: BoundName): number {
  const value = parseBounded(text, name);
  if (value === undefined)
    throw new ConfigError(
      `${variable} must be ${describeBound(BOUNDS[name])}, got ${JSON.stringify(text)}; fix or unset it`,
    );
  return value;
}

interface MergeContext {
  cwd: string;
  environment: string;
  configFile: string | undefined;
}

function merge(flags: WorkerFlags, file: FileSettings, fromEnv: EnvSettings, context: MergeContext): WorkerOptions {
  // Concurrency is per capsule in WorkerOptions, so the DEFAULTS entry is not copied as such.
  const { concurrency: defaultConcurrency, ...defaults } = DEFAULTS;
  const concurrency = flags.concurrency ?? file.concurrency ?? fromEnv.concurrency ?? defaultConcurrency;
  const requirePath = flags.require ?? file.require;
  const defaultRedisUrl = flags.redisUrl ?? file.redisUrl ?? file.redis ?? fromEnv.redisUrl ?? defaults.redisUrl;
  const served = servedShard(flags.shard, defaultRedisUrl, file.shards ?? []);
  // Before redisUrl and shard are read: on a Redis Cluster the queues pick the served slot group.
  const capsules = shardCapsules(
    served,
    flags.queue,
    concurrency,
    () => capsulesOf(flags, file, concurrency),
    flags.shard,
  );
  return {
    ...defaults,
    redisUrl: served.redisUrl,
    shard: served.shard,
    defaultRedisUrl,
    shards: served.map.toConfig(),
    timeout: flags.timeout ?? file.timeout ?? fromEnv.timeout ?? defaults.timeout,
    heartbeatInterval: file.heartbeatInterval ?? defaults.heartbeatInterval,
    heartbeatTtl: file.heartbeatTtl ?? defaults.heartbeatTtl,
    poisonPillRecoveries: file.poisonPillRecoveries ?? defaults.poisonPillRecoveries,
    poisonPillWindow: file.poisonPillWindow ?? defaults.poisonPillWindow,
    averageScheduledPollInterval: file.averageScheduledPollInterval ?? defaults.averageScheduledPollInterval,
    pollIntervalAverage: file.pollIntervalAverage ?? defaults.pollIntervalAverage,
    maxRetries: file.maxRetries ?? defaults.maxRetries,
    deadMaxJobs: file.deadMaxJobs ?? defaults.deadMaxJobs,
    deadTimeoutInSeconds: file.deadTimeoutInSeconds ?? defaults.deadTimeoutInSeconds,
    maxPayloadBytes: file.maxPayloadBytes ?? fromEnv.maxPayloadBytes ?? defaults.maxPayloadBytes,
    compressThresholdBytes:
      file.compressThresholdBytes ?? fromEnv.compressThresholdBytes ?? defaults.compressThresholdBytes,
    maxInflatedBytes: file.maxInflatedBytes ?? fromEnv.maxInflatedBytes ?? defaults.maxInflatedBytes,
    sidekiqVersion: file.sidekiqVersion ?? defaults.sidekiqVersion,
    cron: file.cron ?? defaults.cron,
    routingRules: file.routingRules ?? defaults.routingRules,
    executionMetrics: flags.executionMetrics ?? file.executionMetrics ?? defaults.executionMetrics,
    metricsMaxLabelValues: file.metricsMaxLabelValues ?? defaults.metricsMaxLabelValues,
    // Relative to the working directory whether given as a flag or in the file, as Sidekiq's `-r`.
    require: requirePath === undefined ? undefined : resolve(context.cwd, requirePath),
    capsules,
    tag: flags.tag ?? file.tag ?? basename(resolve(context.cwd)),
    labels: file.labels ?? [],
    environment: context.environment,
    verbose: flags.verbose ?? false,
    fetch: flags.fetch ?? file.fetch ?? "basic",
    metricsPort: flags.metricsPort ?? file.metrics?.port,
    metricsHost: flags.metricsHost ?? file.metrics?.host ?? DEFAULT_METRICS_HOST,
    configFile: context.configFile,
  };
}

/**
 * The plug-ins' settings that a flag, the file or the environment gives (in that precedence), by option
 * key; one given nowhere stays absent and its plug-in reads the default. Then each setting's check
 * against the others (a leader renewal not below the TTL), naming the file.
 */
function featureOptions(
  features: readonly Setting[],
  flags: WorkerFlags,
  file: FileSettings,
  env: NodeJS.ProcessEnv,
  label: string | undefined,
): Record<string, SettingValue> {
  const given: Record<string, SettingValue> = {};
  for (const setting of features) {
    const value = featureFlagValue(flags, setting) ?? file.features?.[setting.key] ?? featureEnv(setting, env);
    if (value !== undefined) given[setting.key] = value;
  }
  for (const setting of features) {
    const value = given[setting.key];
    const problem = value === undefined ? undefined : setting.check?.(value, given);
    if (problem !== undefined) throw new ConfigError(`${label ?? "config"}: ${problem}`);
  }
  return given;
}

/** A setting's environment variable; empty counts as unset, as for the core's. */
function featureEnv(setting: Setting, env: NodeJS.ProcessEnv): SettingValue | undefined {
  const text = setting.env === undefined ? undefined : env[setting.env];
  if (!text) return undefined;
  const value = parseSettingText(setting, text);
  if (value === undefined)
    throw new ConfigError(`${setting.env} must be ${setting.expected}, got ${JSON.stringify(text)}; fix or unset it`);
  return value;
}

/** The "default" capsule from -q/queues and the resolved concurrency, then the file's extra capsules. */
function capsulesOf(flags: WorkerFlags, file: FileSettings, concurrency: number): CapsuleConfig[] {
  const queues = flags.queue ?? file.queues ?? DEFAULT_QUEUES.map((queue) => ({ ...queue }));
  const extra = (file.capsules ?? []).map((capsule) => ({
    name: capsule.name,
    concurrency: capsule.concurrency ?? concurrency,
    queues: capsule.queues,
  }));
  return [{ name: "default", concurrency, queues }, ...extra];
}
