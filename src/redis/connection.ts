/**
 * Redis connections. URLs may carry a password or use TLS (`rediss://`); they are never logged in
 * clear (see `redactUrl`).
 */
import { Redis, type RedisOptions } from "ioredis";
import { defineScripts, type TsqRedis } from "./scripts.js";

export type { TsqRedis } from "./scripts.js";

export interface ConnectOptions {
  /** A name shown in CLIENT LIST, to tell tsq's connections apart. */
  name?: string;
  /** Blocking connections (BRPOP) must not fail queued commands while Redis restarts. */
  blocking?: boolean;
}

/** Returns the URL with any password replaced by `***`, safe for logs and errors. */
export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = "***";
    return parsed.toString();
  } catch {
    return "<unparseable redis url>";
  }
}

/** Opens a connection with tsq's Lua commands defined. Connection happens in the background. */
export function connect(url: string, options: ConnectOptions = {}): TsqRedis {
  const settings: RedisOptions = {
    connectionName: options.name ?? "tsq",
    // Commands wait for a reconnect instead of failing after a fixed number of attempts, so a Redis
    // restart pauses work rather than losing it; callers that must not wait use their own timeouts.
    maxRetriesPerRequest: null,
    enableReadyCheck: true,
    // Reconnect delay in ms: 50 ms growing to 2 s, retried forever.
    retryStrategy: (times) => Math.min(times * 50, 2000),
    lazyConnect: false,
    // Commands issued in the same tick go out as one pipeline (acks of a batch of jobs, stats): fewer
    // round trips under load, no change for a lone command. Blocking connections carry one command at
    // a time, so there it would only add bookkeeping.
    enableAutoPipelining: !options.blocking,
  };
  const redis = new Redis(url, settings);
  // Errors surface on the command that failed; this keeps ioredis from printing the URL unredacted.
  redis.on("error", () => {});
  return defineScripts(redis);
}

/** Redis error replies that mean "you are talking to a replica or a failed-over node": reconnect. */
export function isFailoverError(error: unknown): boolean {
  const message = error instanceof Error ? error.message : String(error);
  return /^(READONLY|NOREPLICAS|UNBLOCKED)\b/.test(message);
}
