/**
 * What every `tsqctl` command shares: where output goes, the usage error that means exit code 2, the
 * `--redis-url` and `--json` options, confirmation of destructive commands, and a connection that
 * fails fast instead of waiting for Redis forever.
 */
import { createInterface } from "node:readline";
import { InvalidArgumentError, type Command } from "commander";
import { DEFAULTS } from "../../platform/config/defaults.js";
import {
  connect,
  describeConnectionError,
  isUnreachable,
  redactUrl,
  type TsqRedis,
} from "../../platform/redis/connection.js";
import { parseRedisUrl } from "../../platform/redis/redisUrl.js";

/** The terminal `tsqctl top` draws on and reads keys from. */
export interface Terminal {
  input: NodeJS.ReadStream;
  output: NodeJS.WriteStream;
}

/** Output and environment of one run, so commands can be driven in-process as well as from the shell. */
export interface CliIO {
  out(this: void, text: string): void;
  err(this: void, text: string): void;
  env: NodeJS.ProcessEnv;
  /** Asks a question on the terminal and resolves to the answer; absent when there is no terminal to ask on. */
  prompt?: (question: string) => Promise<string>;
  /** Present when stdin and stdout are a terminal. */
  terminal?: Terminal;
}

/** Asks on stderr (stdout stays clean for --json); Ctrl-C answers "no". */
function askOnTerminal(question: string): Promise<string> {
  return new Promise((resolve) => {
    const rl = createInterface({ input: process.stdin, output: process.stderr });
    rl.on("SIGINT", () => {
      process.stderr.write("\n");
      rl.close();
      resolve("");
    });
    rl.question(question, (answer) => {
      rl.close();
      resolve(answer);
    });
  });
}

const interactive = process.stdin.isTTY === true && process.stderr.isTTY === true;

export const processIO: CliIO = {
  out: (text) => void process.stdout.write(text),
  err: (text) => void process.stderr.write(text),
  env: process.env,
  prompt: interactive ? askOnTerminal : undefined,
  terminal: process.stdin.isTTY && process.stdout.isTTY ? { input: process.stdin, output: process.stdout } : undefined,
};

/** Bad input on the command line (arguments, flag combinations): reported with a usage hint, exit code 2. */
export class UsageError extends Error {
  override name = "UsageError";
}

/** The user answered "no" to a confirmation: exit code 1, nothing changed. */
export class AbortedError extends Error {
  override name = "AbortedError";
}

/** Redis could not be reached or refused the connection: exit code 1. */
export class RedisUnavailableError extends Error {
  override name = "RedisUnavailableError";
}

/**
 * Milliseconds to wait for a connection before giving up. The worker waits for Redis forever (a restart
 * pauses work); an admin command should say at once that it cannot reach it.
 */
export const CONNECT_TIMEOUT_MS = 10_000;

export { isUnreachable };

/** The error for a Redis that cannot be reached: its URL without the password, and its shard when named. */
export function unreachable(url: string, reason: string, shard?: string): RedisUnavailableError {
  const which = shard === undefined ? "" : ` (shard "${shard}")`;
  return new RedisUnavailableError(`cannot reach Redis at ${redactUrl(url)}${which}: ${reason}`);
}

export function addRedisUrlOption(command: Command): Command {
  // The resolved default is not shown in --help: REDIS_URL may hold a password.
  return command.option("--redis-url <url>", `Redis to use (default: $REDIS_URL, then ${DEFAULTS.redisUrl})`);
}

export function addJsonOption(command: Command): Command {
  return command.option("--json", "print JSON instead of text (shapes in docs/admin.md)");
}

/** Pretty-printed JSON and a newline, so the output reads well and parses with `jq` or JSON.parse. */
export function printJson(io: CliIO, value: unknown): void {
  io.out(`${JSON.stringify(value, null, 2)}\n`);
}

/** The `--yes` flag of destructive commands. */
export function addYesOption(command: Command): Command {
  return command.option("-y, --yes", "do not ask for confirmation (required when stdin is not a terminal)");
}

/**
 * Fails before anything is read or changed when `what` cannot be confirmed: without --yes a
 * destructive command needs a terminal to ask on (exit 2).
 */
export function checkConfirmable(io: CliIO, yes: boolean | undefined, what: string): void {
  if (yes || io.prompt) return;
  throw new UsageError(`${what} needs confirmation and stdin is not a terminal; pass --yes to go ahead`);
}

/** Asks `question` unless --yes was given; anything but y/yes aborts (exit 1, nothing changed). */
export async function confirm(io: CliIO, yes: boolean | undefined, question: string): Promise<void> {
  if (yes) return;
  if (!io.prompt)
    throw new UsageError("this command needs confirmation and stdin is not a terminal; pass --yes to go ahead");
  const answer = await io.prompt(`${question} [y/N] `);
  if (!/^y(es)?$/i.test(answer.trim())) throw new AbortedError("aborted; nothing was changed");
}

/** Parses a positive whole number for options such as --limit and --days. */
export function positiveInteger(flag: string, allowZero = false): (text: string) => number {
  return (text) => {
    const value = Number(text);
    if (!/^\d+$/.test(text.trim()) || !Number.isSafeInteger(value) || (!allowZero && value === 0)) {
      throw new InvalidArgumentError(`${flag} must be a whole number${allowZero ? "" : " greater than 0"}.`);
    }
    return value;
  };
}

/** A TCP port flag: a whole number from 0 to 65535. */
export function portNumber(flag: string): (text: string) => number {
  return (text) => {
    const value = Number(text);
    if (!/^\d+$/.test(text.trim()) || value > 65_535)
      throw new InvalidArgumentError(`${flag} must be a whole number from 0 to 65535.`);
    return value;
  };
}

/** Flag > REDIS_URL > default, checked to be a redis:// or rediss:// URL. */
export function resolveRedisUrl(flag: string | undefined, io: CliIO): string {
  const url = flag ?? io.env.REDIS_URL ?? DEFAULTS.redisUrl;
  try {
    parseRedisUrl(url);
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error));
  }
  return url;
}

/**
 * Opens a connection, runs `work` with it and always closes it. Fails on the first connection error, and
 * when Redis does not answer a command within CONNECT_TIMEOUT_MS (a RedisUnavailableError naming it).
 */
export async function withRedis<T>(url: string, work: (redis: TsqRedis) => Promise<T>, shard?: string): Promise<T> {
  const redis = connect(url, { name: "tsqctl", commandTimeoutMs: CONNECT_TIMEOUT_MS });
  try {
    await ready(redis, url, shard);
    const result = await work(redis).catch((error: unknown) => {
      throw isUnreachable(error) ? unreachable(url, `no answer within ${CONNECT_TIMEOUT_MS / 1000} s`, shard) : error;
    });
    // A command may have closed the connection itself (top, when Redis stopped answering).
    if (redis.status === "ready") await redis.quit();
    return result;
  } finally {
    redis.disconnect();
  }
}

function ready(redis: TsqRedis, url: string, shard: string | undefined): Promise<void> {
  if (redis.status === "ready") return Promise.resolve();
  return new Promise((resolve, reject) => {
    const fail = (reason: string) => {
      cleanup();
      reject(unreachable(url, reason, shard));
    };
    const onError = (error: Error) => fail(describeConnectionError(error));
    const onReady = () => {
      cleanup();
      resolve();
    };
    const timer = setTimeout(() => fail(`no answer within ${CONNECT_TIMEOUT_MS / 1000} s`), CONNECT_TIMEOUT_MS);
    const cleanup = () => {
      clearTimeout(timer);
      redis.off("ready", onReady);
      redis.off("error", onError);
    };
    redis.on("ready", onReady);
    redis.on("error", onError);
  });
}
