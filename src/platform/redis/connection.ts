/**
 * Redis connections. URLs may carry a password, use TLS (`rediss://`), Sentinel (`redis+sentinel://`,
 * see redisUrl.ts) or a Redis Cluster (`redis+cluster://`, see clusterConnection.ts); they are never
 * logged in clear (see `redactUrl`).
 */
import { Redis, type RedisOptions } from "ioredis";
import { RedisUnreachableError } from "../../wire/errors.js";
import { logger } from "../logger.js";
import { registerUrlSecrets } from "../secrets.js";
import { openCluster } from "./clusterConnection.js";
import { watchPrimary } from "./primaryWatch.js";
import { connectionOptions, parseRedisUrl, redactRedisUrl } from "./redisUrl.js";
import { explainTlsError } from "./tls.js";

/**
 * A connection made by `connect`. Any ioredis connection serves: the Lua scripts are defined on a connection
 * the first time each runs there (luaScript.ts), so one an app made itself needs no preparing.
 */
export type TsqRedis = Redis;

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
  /** Connect at the first command instead of now. */
  lazy?: boolean;
  /**
   * Deadline of every command, in ms, counted from when it is issued, so it covers the wait for a
   * connection too (a down Redis, or one that accepts connections and never answers). For tools
   * (tsqctl, the dashboard), which must say "unreachable" rather than wait; workers leave it unset.
   */
  commandTimeoutMs?: number;
}

/** Returns the URL with any password replaced by `***`, safe for logs and errors. */
export function redactUrl(url: string): string {
  try {
    // A single-host URL is shown normalized (as the URL class writes it); Sentinel lists are not URLs to it.
    const parsed = new URL(url);
    if (parsed.password) parsed.password = "***";
    return redactRedisUrl(parsed.toString());
  } catch {
    return redactRedisUrl(url);
  }
}

/** See `disconnectTimeout` in `connect`. */
const DISCONNECT_TIMEOUT_MS = 200;

/** TLS problems already logged by this process (one line each, not one per connection and retry). */
const reportedTls = new Set<string>();

/**
 * A connection error as the operator should read it: TLS problems explained, else the error's message
 * (a cluster client's with its last seed's cause).
 */
export function describeConnectionError(error: unknown): string {
  const explained = explainTlsError(error);
  if (explained !== undefined) return explained;
  if (!(error instanceof Error)) return String(error);
  // ioredis' cluster client reports a failed start as "Failed to refresh slots cache." and keeps the
  // cause (a refused password, a refused connection) on the error of the last seed it asked only.
  const last = (error as { lastNodeError?: unknown }).lastNodeError;
  return last instanceof Error ? `${error.message} (last seed: ${describeConnectionError(last)})` : error.message;
}

/** Opens a connection with tsq's settings. Connection happens in the background. */
export function connect(url: string, options: ConnectOptions = {}): TsqRedis {
  registerUrlSecrets(url);
  const parsed = parseRedisUrl(url);
  const settings: RedisOptions = {
    ...(parsed.kind === "cluster" ? {} : connectionOptions(parsed)),
    connectionName: options.name ?? "tsq",
    // Commands wait for a reconnect instead of failing after a fixed number of attempts, so a Redis
    // restart pauses work rather than losing it; callers that must not wait use their own timeouts.
    maxRetriesPerRequest: null,
    enableReadyCheck: true,
    // Reconnect delay in ms: 50 ms growing to 2 s, retried forever.
    retryStrategy: (times) => Math.min(times * 50, 2000),
    lazyConnect: options.lazy === true,
    // ms a closing socket gets to end before it is destroyed. ioredis arms this timer again when a
    // connection closed during its handshake fails its ready check, on a socket already closed, so it
    // is never cleared: at its default (2 s) a worker stopped right after its start kept the process
    // 2 s past stop(). A loopback or LAN socket ends in well under this.
    disconnectTimeout: DISCONNECT_TIMEOUT_MS,
    // Commands issued in the same tick go out as one pipeline (stats, heartbeats, jobs enqueuing jobs):
    // fewer writes under load. Blocking connections carry one command at a time, so there it would
    // only add bookkeeping.
    enableAutoPipelining: !options.blocking && options.autoPipelining !== false,
    ...(options.commandTimeoutMs === undefined
      ? {}
      : { commandTimeout: options.commandTimeoutMs, connectTimeout: options.commandTimeoutMs }),
    ...(options.offlineQueue === false ? { enableOfflineQueue: false, autoResendUnfulfilledCommands: false } : {}),
    // Through Sentinel, a node that answers READONLY (or UNBLOCKED, to a blocked fetch) was demoted:
    // reconnect, which asks the Sentinels for the primary again. The command itself fails (a resend
    // could split a MULTI); tsq's callers retry, and reliable fetch reconciles what a reply lost.
    ...(parsed.kind === "sentinel" ? { reconnectOnError: (error: Error) => isFailoverError(error) } : {}),
  };
  const redis =
    parsed.kind === "cluster"
      ? openCluster({ ...parsed, kind: "cluster", nodes: parsed.nodes!, db: 0 }, settings)
      : new Redis(settings);
  // Errors surface on the command that failed; this keeps ioredis from printing the URL unredacted.
  // A TLS problem would only show as commands waiting forever, so it is logged, once per process.
  const reportTls = (error: Error & { code?: string }) => {
    const advice = explainTlsError(error);
    if (advice === undefined || reportedTls.has(advice)) return;
    reportedTls.add(advice);
    logger().error({ redis: redactUrl(url), code: error.code }, advice);
  };
  redis.on("error", reportTls);
  // A cluster's nodes report their own connections' errors (a TLS handshake refused) apart.
  if (parsed.kind === "cluster") redis.on("node error", reportTls);
  if (parsed.kind === "sentinel") watchPrimary(redis, parsed);
  return redis;
}

/**
 * True for the errors of a Redis that stopped answering: a command past its deadline (`commandTimeoutMs`),
 * or a connection closed under it.
 */
export function isUnreachable(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  if (error instanceof RedisUnreachableError) return true;
  // A client's push error wraps the connection's (its `cause`).
  return (
    /^(Command timed out|Connection is closed|Stream isn't writeable)/.test(error.message) || isUnreachable(error.cause)
  );
}

/** Redis error replies that mean "you are talking to a replica or a failed-over node": reconnect. */
export function isFailoverError(error: unknown): boolean {
  const message = error instanceof Error ? error.message : String(error);
  return /^(READONLY|NOREPLICAS|UNBLOCKED)\b/.test(message);
}
