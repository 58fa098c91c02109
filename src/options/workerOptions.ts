/**
 * The `tsq` command line: its flags, and the merge of flags, config file, environment and DEFAULTS into
 * one WorkerOptions. Precedence is flag > config file > environment > default, as in Sidekiq's CLI.
 * Bad flags are a UsageError and bad settings a ConfigError; the CLI turns both into exit status 2.
 */
import { existsSync } from "node:fs";
import { basename, join, resolve } from "node:path";
import { Command, CommanderError, InvalidArgumentError, Option } from "commander";
import { DEFAULTS } from "../platform/config/defaults.js";
import { BOUNDS, describeBound, withinBound, type BoundName } from "../platform/config/bounds.js";
import { isRedisUrl, loadConfig, type ClusterFileConfig, type FileSettings } from "../platform/config/loadConfig.js";
import { duplicateQueue, parseQueueText, QUEUE_FORMAT } from "../platform/config/queueList.js";
import type { CapsuleConfig, FetchMode, QueueSpec, WorkerOptions } from "../platform/config/options.js";
import { ConfigError } from "../wire/errors.js";
import { quoted, refuseControlCharacters } from "../platform/config/controlCharacters.js";
import { redactUrl } from "../platform/redis/connection.js";
import { REDIS_URL_FORMAT } from "../platform/redis/redisUrl.js";
import { redactText, registerArgvSecrets, registerUrlSecrets } from "../platform/secrets.js";
import { VERSION } from "../wire/version.js";
import { servedShard, shardCapsules } from "../platform/shards/serve.js";
import { sizeLimitsFromEnv, type SizeLimits } from "../client/compression/settings.js";

/** A bad command line (unknown flag, missing or malformed value). `usage` is the help text to show. */
export class UsageError extends Error {
  override name = "UsageError";
  constructor(
    message: string,
    readonly usage: string,
  ) {
    super(message);
  }
}

/** The flags as commander parses them; every one is optional so an absent flag falls through. */
export interface WorkerFlags {
  require?: string;
  queue?: QueueSpec[];
  concurrency?: number;
  timeout?: number;
  config?: string;
  tag?: string;
  environment?: string;
  verbose?: boolean;
  redisUrl?: string;
  fetch?: FetchMode;
  metricsPort?: number;
  metricsHost?: string;
  shard?: string;
  /** `--no-execution-metrics` gives false; absent, undefined. */
  executionMetrics?: boolean;
}

/** The settings the environment may give (REDIS_URL, TSQ_CONCURRENCY, TSQ_TIMEOUT). */
interface EnvSettings extends Partial<SizeLimits> {
  redisUrl?: string;
  concurrency?: number;
  timeout?: number;
}

/** Read when there is no -C and the file exists, relative to the working directory (Sidekiq: config/sidekiq.yml). */
const DEFAULT_CONFIG = "config/tsq.yml";
/** Weight 0: no weight, so a single queue is simply worked in order. */
const DEFAULT_QUEUES: readonly QueueSpec[] = [{ name: "default", weight: 0 }];
/** Loopback only: metrics are not exposed beyond the host unless asked. */
const DEFAULT_METRICS_HOST = "127.0.0.1";
const DEFAULT_ENVIRONMENT = "development";

export function buildWorkerCommand(): Command {
  const command = new Command("tsq")
    .description("Run one worker process that executes jobs from Redis (Sidekiq-compatible).")
    .version(VERSION, "-V, --version", "print the tsq version and exit");
  return addWorkerFlags(command)
    .option("--metrics-port <port>", "TCP port for GET /metrics, 0 = off (default: off)", portFlag)
    .option("--metrics-host <host>", `interface for GET /metrics (default: ${DEFAULT_METRICS_HOST})`);
}

/**
 * Adds the flags `tsq` and `tsq-cluster` share (all but the metrics ones, whose defaults differ) and makes
 * a parse error throw instead of exiting, so parseWorkerCommandLine can turn it into a UsageError.
 */
export function addWorkerFlags(command: Command): Command {
  return (
    command
      .option(
        "-r, --require <path>",
        "job module to load, relative to the current directory (default: config `require`)",
      )
      .option(
        "-q, --queue <name[,weight]>",
        "queue to work, with an optional positive integer weight; repeat for more (default: default)",
        collectQueue,
      )
      .option(
        "-c, --concurrency <n>",
        `job slots of the default capsule, 1 to ${BOUNDS.concurrency.max} (default: TSQ_CONCURRENCY or ${DEFAULTS.concurrency})`,
        boundedFlag("concurrency"),
      )
      .option(
        "-t, --timeout <seconds>",
        `seconds a graceful stop waits for running jobs, at most ${BOUNDS.timeout.max} (default: TSQ_TIMEOUT or ${DEFAULTS.timeout})`,
        boundedFlag("timeout"),
      )
      .option("-C, --config <file>", `YAML config file (default: ${DEFAULT_CONFIG} when present)`)
      .option("-g, --tag <tag>", "process tag shown in the Web UI (default: name of the current directory)")
      .option(
        "-e, --environment <env>",
        `config file section to merge over the top level (default: TSQ_ENV, APP_ENV, NODE_ENV or ${DEFAULT_ENVIRONMENT})`,
      )
      .option("-v, --verbose", "log at debug level (default: info)")
      // Both forms, so an absent flag stays undefined and the config file decides (a lone --no- flag defaults to true).
      .option(
        "--execution-metrics",
        "write Sidekiq's per-class metrics keys, in the layout of sidekiq_version (default: config `execution_metrics` or on)",
      )
      .option("--no-execution-metrics", "do not write them")
      .option("--redis-url <url>", `Redis URL, rediss:// for TLS (default: REDIS_URL or ${DEFAULTS.redisUrl})`)
      .option(
        "--shard <name>",
        "serve this shard of the config's shards: (its Redis and queues; default: the top-level Redis)",
      )
      .addOption(
        new Option(
          "--fetch <basic|reliable>",
          "basic: BRPOP, a crash loses running jobs; reliable: they survive a crash (default: basic)",
        ).choices(["basic", "reliable"]),
      )
      .exitOverride(exitOnlyForHelpOrVersion)
      // Errors are reported by exitOnOptionError as `<program>: <message>` plus usage; commander stays silent.
      .configureOutput({ outputError: () => {} })
  );
}

/**
 * Parses `argv` (without node and the script: `process.argv.slice(2)`), reads the config file and the
 * environment, and returns the merged options plus the file's `cluster:` section for the supervisor.
 */
export function resolveWorkerOptions(argv: string[], env: NodeJS.ProcessEnv, cwd: string): ResolvedWorkerOptions {
  return resolveWorkerFlags(parseWorkerCommandLine<WorkerFlags>(buildWorkerCommand(), argv), env, cwd);
}

export interface ResolvedWorkerOptions {
  options: WorkerOptions;
  cluster: ClusterFileConfig | undefined;
  /** True when -c, the config file or TSQ_CONCURRENCY set the concurrency (false: DEFAULTS). */
  concurrencyGiven: boolean;
}

/** resolveWorkerOptions for flags already parsed by parseWorkerCommandLine (as `tsq-cluster` does). */
export function resolveWorkerFlags(flags: WorkerFlags, env: NodeJS.ProcessEnv, cwd: string): ResolvedWorkerOptions {
  const environment = flags.environment ?? environmentName(env);
  const config = locateConfig(flags.config, cwd);
  const file = config ? loadConfig(config.path, environment, config.label) : {};
  const fromEnv = readEnvironment(env);
  const options = merge(flags, file, fromEnv, { cwd, environment, configFile: config?.path });
  for (const url of [options.redisUrl, ...(options.shards ?? []).map((shard) => shard.url)]) registerUrlSecrets(url);
  registerUrlSecrets(options.defaultRedisUrl);
  const concurrencyGiven = (flags.concurrency ?? file.concurrency ?? fromEnv.concurrency) !== undefined;
  return { options, cluster: file.cluster, concurrencyGiven };
}

/** Prints a UsageError or ConfigError as `<program>: <message>` (plus usage) and exits 2; rethrows anything else. */
export function exitOnOptionError(error: unknown, stderr: NodeJS.WritableStream, program = "tsq"): never {
  if (error instanceof UsageError) {
    stderr.write(redactText(`${program}: ${error.message}\n\n${error.usage}`));
    process.exit(2);
  }
  if (error instanceof ConfigError) {
    stderr.write(redactText(`${program}: ${error.message}\n`));
    process.exit(2);
  }
  throw error;
}

/**
 * Parses `argv` with a command built on addWorkerFlags; every bad command line, including a queue given
 * twice or a malformed Redis URL, is a UsageError carrying the command's help.
 */
export function parseWorkerCommandLine<T extends WorkerFlags>(command: Command, argv: string[]): T {
  registerArgvSecrets(argv);
  try {
    command.parse(argv, { from: "user" });
  } catch (error) {
    if (!(error instanceof CommanderError)) throw error;
    // Commander echoes what it could not parse (`--redis_url=redis://:pw@host`); never show a password.
    throw new UsageError(redactText(error.message.replace(/^error: /, "")), command.helpInformation());
  }
  const flags = command.opts<T>();
  const twice = flags.queue ? duplicateQueue(flags.queue) : undefined;
  if (twice !== undefined) {
    throw new UsageError(
      `queue "${twice}" is given twice with -q; give it once, with a weight`,
      command.helpInformation(),
    );
  }
  // Checked here rather than in an argParser, whose message would echo the URL with its password.
  if (flags.redisUrl !== undefined && !isRedisUrl(flags.redisUrl)) {
    throw new UsageError(
      `--redis-url must be ${REDIS_URL_FORMAT}, got ${redactUrl(flags.redisUrl)}`,
      command.helpInformation(),
    );
  }
  return flags;
}

/** Help and version exit 0 as usual; every parse error is thrown so the caller decides (status 2). */
function exitOnlyForHelpOrVersion(error: CommanderError): never {
  if (error.exitCode === 0) process.exit(0);
  throw error;
}

function collectQueue(text: string, previous: QueueSpec[] | undefined): QueueSpec[] {
  // Before parseQueueText trims: "critical\n" from a template is a mistake to report, not to tidy.
  refuseControlCharacters(text, `-q ${quoted(text)}`);
  const queue = parseQueueText(text);
  if (queue === undefined) throw new InvalidArgumentError(`Expected ${QUEUE_FORMAT}.`);
  return [...(previous ?? []), queue];
}

/** A flag's number within its entry of BOUNDS; commander's message names the flag, this one the range. */
export function boundedFlag(name: BoundName): (text: string) => number {
  return (text) => {
    const value = parseBounded(text, name);
    if (value === undefined) throw new InvalidArgumentError(`Expected ${describeBound(BOUNDS[name])}.`);
    return value;
  };
}

export function portFlag(text: string): number {
  const value = /^\d+$/.test(text) ? Number(text) : NaN;
  if (!(value <= 65_535)) throw new InvalidArgumentError("Expected a TCP port from 0 to 65535 (0 = off).");
  return value;
}

/** Plain decimal digits only (no "1e9", "0x10" or "Infinity"), then the bound. */
function parseBounded(text: string, name: BoundName): number | undefined {
  const value = /^\d+(\.\d+)?$/.test(text.trim()) ? Number(text) : NaN;
  return withinBound(value, BOUNDS[name]) ? value : undefined;
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
    killSwitchRefreshInterval: file.killSwitchRefreshInterval ?? defaults.killSwitchRefreshInterval,
    concurrencyLimitMaxParked: file.concurrencyLimitMaxParked ?? defaults.concurrencyLimitMaxParked,
    sidekiqVersion: file.sidekiqVersion ?? defaults.sidekiqVersion,
    ...leaderTiming(file, context.configFile),
    cron: file.cron ?? defaults.cron,
    sidekiqCron: file.sidekiqCron ?? defaults.sidekiqCron,
    sidekiqCronPollInterval: file.sidekiqCronPollInterval ?? defaults.sidekiqCronPollInterval,
    routingRules: file.routingRules ?? defaults.routingRules,
    executionMetrics: flags.executionMetrics ?? file.executionMetrics ?? defaults.executionMetrics,
    metricsMaxLabelValues: file.metricsMaxLabelValues ?? defaults.metricsMaxLabelValues,
    // Relative to the working directory whether given as a flag or in the file, as Sidekiq's `-r`.
    require: requirePath === undefined ? undefined : resolve(context.cwd, requirePath),
    capsules: shardCapsules(served, flags.queue, concurrency, () => capsulesOf(flags, file, concurrency)),
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

/** Leader election and periodic job timings; a renewal interval not below the TTL would let leadership lapse. */
function leaderTiming(
  file: FileSettings,
  configFile: string | undefined,
): Pick<WorkerOptions, "leaderTtl" | "leaderRenewInterval" | "leaderCheckInterval" | "cronGracePeriod"> {
  const leaderTtl = file.leaderTtl ?? DEFAULTS.leaderTtl;
  const leaderRenewInterval = file.leaderRenewInterval ?? Math.min(DEFAULTS.leaderRenewInterval, leaderTtl / 4);
  if (leaderRenewInterval >= leaderTtl) {
    throw new ConfigError(
      `${configFile ?? "config"}: leader_renew_interval (${leaderRenewInterval} s) must be below leader_ttl (${leaderTtl} s), ` +
        "or the leader's record expires between renewals",
    );
  }
  return {
    leaderTtl,
    leaderRenewInterval,
    leaderCheckInterval: file.leaderCheckInterval ?? DEFAULTS.leaderCheckInterval,
    cronGracePeriod: file.cronGracePeriod ?? DEFAULTS.cronGracePeriod,
  };
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
