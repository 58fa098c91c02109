/**
 * The `tsq` command line as commander parses it: the flags `tsq` and `tsq-cluster` share, their value
 * parsers (numbers within BOUNDS, ports, `-q name[,weight]`), and the two errors a bad command line or
 * setting ends in. workerOptions.ts merges the parsed flags with the config file and the environment.
 */
import { Command, CommanderError, InvalidArgumentError, Option } from "commander";
import { DEFAULTS } from "../platform/config/defaults.js";
import { BOUNDS, describeBound, withinBound, type BoundName } from "../platform/config/bounds.js";
import { duplicateQueue, parseQueueText, QUEUE_FORMAT } from "../platform/config/queueList.js";
import type { FetchMode, QueueSpec } from "../platform/config/options.js";
import { ConfigError } from "../wire/errors.js";
import { quoted, refuseControlCharacters } from "../platform/config/controlCharacters.js";
import { redactUrl } from "../platform/redis/connection.js";
import { isRedisUrl, REDIS_URL_FORMAT } from "../platform/redis/redisUrl.js";
import { redactText, registerArgvSecrets } from "../platform/secrets.js";
import { VERSION } from "../wire/version.js";
import { parseSettingText, type Setting, type SettingValue } from "../platform/config/settings.js";

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

/** Read when there is no -C and the file exists, relative to the working directory (Sidekiq: config/sidekiq.yml). */
export const DEFAULT_CONFIG = "config/tsq.yml";
/** Loopback only: metrics are not exposed beyond the host unless asked. */
export const DEFAULT_METRICS_HOST = "127.0.0.1";
export const DEFAULT_ENVIRONMENT = "development";

/** `features`: the settings of the plug-ins the process runs; those with a `flag` become flags too. */
export function buildWorkerCommand(features: readonly Setting[] = []): Command {
  const command = new Command("tsq")
    .description("Run one worker process that executes jobs from Redis (Sidekiq-compatible).")
    .version(VERSION, "-V, --version", "print the tsq version and exit");
  return addWorkerFlags(command, features)
    .option("--metrics-port <port>", "TCP port for GET /metrics, 0 = off (default: off)", portFlag)
    .option("--metrics-host <host>", `interface for GET /metrics (default: ${DEFAULT_METRICS_HOST})`);
}

/**
 * Adds the flags `tsq` and `tsq-cluster` share (all but the metrics ones, whose defaults differ) and makes
 * a parse error throw instead of exiting, so parseWorkerCommandLine can turn it into a UsageError.
 */
export function addWorkerFlags(command: Command, features: readonly Setting[] = []): Command {
  for (const setting of features) if (setting.flag !== undefined) command.addOption(featureFlag(setting));
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

/** A UsageError or ConfigError as `<program>: <message>` (plus usage), secrets redacted; undefined for anything else. */
export function optionErrorText(error: unknown, program = "tsq"): string | undefined {
  if (error instanceof UsageError) return redactText(`${program}: ${error.message}\n\n${error.usage}`);
  if (error instanceof ConfigError) return redactText(`${program}: ${error.message}\n`);
  return undefined;
}

/** Prints a UsageError or ConfigError as `<program>: <message>` (plus usage) and exits 2; rethrows anything else. */
export function exitOnOptionError(error: unknown, stderr: NodeJS.WritableStream, program = "tsq"): never {
  const text = optionErrorText(error, program);
  if (text === undefined) throw error;
  stderr.write(text);
  process.exit(2);
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

/** A plug-in setting's flag: its value checked by the setting's own bounds. */
function featureFlag(setting: Setting): Option {
  const where = setting.fileKey === undefined ? "" : `config \`${setting.fileKey}\` or `;
  const option = new Option(
    `${setting.flag} <value>`,
    `${setting.expected} (default: ${where}${setting.env === undefined ? "" : `${setting.env} or `}${String(setting.default)})`,
  );
  return option.argParser((text) => {
    const value = parseSettingText(setting, text);
    if (value === undefined) throw new InvalidArgumentError(`Expected ${setting.expected}.`);
    return value;
  });
}

/** The value a plug-in setting's flag was given, if any (commander keeps it under the flag's camelCase name). */
export function featureFlagValue(flags: WorkerFlags, setting: Setting): SettingValue | undefined {
  if (setting.flag === undefined) return undefined;
  const value = (flags as Record<string, unknown>)[new Option(`${setting.flag} <value>`).attributeName()];
  return value as SettingValue | undefined;
}

export function portFlag(text: string): number {
  const value = /^\d+$/.test(text) ? Number(text) : NaN;
  if (!(value <= 65_535)) throw new InvalidArgumentError("Expected a TCP port from 0 to 65535 (0 = off).");
  return value;
}

/** Plain decimal digits only (no "1e9", "0x10" or "Infinity"), then the bound. */
export function parseBounded(text: string, name: BoundName): number | undefined {
  const value = /^\d+(\.\d+)?$/.test(text.trim()) ? Number(text) : NaN;
  return withinBound(value, BOUNDS[name]) ? value : undefined;
}
