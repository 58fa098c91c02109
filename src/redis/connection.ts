/**
 * Redis connections. URLs may carry a password or use TLS (`rediss://`); they are never logged in
 * clear (see `redactUrl`).
 */
import { Redis, type RedisOptions } from "ioredis";
import { registerUrlSecrets } from "../secrets.js";
import { defineScripts, type TsqRedis } from "./scripts.js";

export type { TsqRedis } from "./scripts.js";

export interface ConnectOptions {
  /** A name shown in CLIENT LIST, to tell tsq's connections apart. */
  name?: string;
  /** Blocking connections (BRPOP) must not fail queued commands while Redis restarts. */
  blocking?: boolean;
  /**
   * Gather the commands of one tick into a pipeline (default: true, but never on a blocking connection).
   * It pays where many commands start in the same tick; a lone command pays for a pipeline of its own
   * (a client pushing one job at a time: about twice the CPU per push).
   */
  autoPipelining?: boolean;
  /**
   * false: commands fail at once while disconnected, and those in flight when the connection drops fail
   * rather than being re-sent after the reconnect (reliable push holds and re-sends them itself).
   */
  offlineQueue?: boolean;
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
  registerUrlSecrets(url);
  const settings: RedisOptions = {
    connectionName: options.name ?? "tsq",
    // Commands wait for a reconnect instead of failing after a fixed number of attempts, so a Redis
    // restart pauses work rather than losing it; callers that must not wait use their own timeouts.
    maxRetriesPerRequest: null,
    enableReadyCheck: true,
    // Reconnect delay in ms: 50 ms growing to 2 s, retried forever.
    retryStrategy: (times) => Math.min(times * 50, 2000),
    lazyConnect: false,
    // Commands issued in the same tick go out as one pipeline (stats, heartbeats, jobs enqueuing jobs):
    // fewer writes under load. Blocking connections carry one command at a time, so there it would
    // only add bookkeeping.
    enableAutoPipelining: !options.blocking && options.autoPipelining !== false,
    ...(options.offlineQueue === false ? { enableOfflineQueue: false, autoResendUnfulfilledCommands: false } : {}),
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
