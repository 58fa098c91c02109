/**
 * What every `tsqctl` command shares: where output goes, the usage error that means exit code 2, the
 * `--redis-url` option and a connection that fails fast instead of waiting for Redis forever.
 */
import { type Command } from "commander";
import { DEFAULTS } from "../../config/defaults.js";
import { connect, redactUrl, type TsqRedis } from "../../redis/connection.js";

/** Output and environment of one run, so commands can be driven in-process as well as from the shell. */
export interface CliIO {
  out(text: string): void;
  err(text: string): void;
  env: NodeJS.ProcessEnv;
}

export const processIO: CliIO = {
  out: (text) => void process.stdout.write(text),
  err: (text) => void process.stderr.write(text),
  env: process.env,
};

/** Bad input on the command line (arguments, flag combinations): reported with a usage hint, exit code 2. */
export class UsageError extends Error {
  override name = "UsageError";
}

/** Redis could not be reached or refused the connection: exit code 1. */
export class RedisUnavailableError extends Error {
  override name = "RedisUnavailableError";
}

/**
 * Milliseconds to wait for a connection before giving up. The worker waits for Redis forever (a restart
 * pauses work); an admin command should say at once that it cannot reach it.
 */
const CONNECT_TIMEOUT_MS = 10_000;

export function addRedisUrlOption(command: Command): Command {
  // The resolved default is not shown in --help: REDIS_URL may hold a password.
  return command.option("--redis-url <url>", `Redis to use (default: $REDIS_URL, then ${DEFAULTS.redisUrl})`);
}

/** Flag > REDIS_URL > default, checked to be a redis:// or rediss:// URL. */
export function resolveRedisUrl(flag: string | undefined, io: CliIO): string {
  const url = flag ?? io.env.REDIS_URL ?? DEFAULTS.redisUrl;
  let protocol: string;
  try {
    protocol = new URL(url).protocol;
  } catch {
    throw new UsageError(`the Redis URL ${redactUrl(url)} is not a URL; expected redis://host:port/db or rediss://...`);
  }
  if (protocol !== "redis:" && protocol !== "rediss:") {
    throw new UsageError(`the Redis URL must start with redis:// or rediss://, got ${protocol}//`);
  }
  return url;
}

/** Opens a connection, runs `work` with it and always closes it. Fails on the first connection error. */
export async function withRedis<T>(url: string, work: (redis: TsqRedis) => Promise<T>): Promise<T> {
  const redis = connect(url, { name: "tsqctl" });
  try {
    await ready(redis, url);
    const result = await work(redis);
    await redis.quit();
    return result;
  } finally {
    redis.disconnect();
  }
}

function ready(redis: TsqRedis, url: string): Promise<void> {
  if (redis.status === "ready") return Promise.resolve();
  return new Promise((resolve, reject) => {
    const fail = (reason: string) => {
      cleanup();
      reject(new RedisUnavailableError(`cannot reach Redis at ${redactUrl(url)}: ${reason}`));
    };
    const onError = (error: Error) => fail(error.message);
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
