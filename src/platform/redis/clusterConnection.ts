/**
 * A connection to a Redis Cluster (a `redis+cluster://` URL), as ioredis' Cluster client: it learns
 * which master serves which slot, follows MOVED and ASK, and reconnects to a promoted replica after a
 * failover. A connection for a slot group puts the group's hash tag before every key it sends (ioredis
 * `keyPrefix`: the keys of every command, MULTI and defined script), so tsq's code names keys as on one
 * server and the whole group lands in one slot.
 *
 * What the prefix does not reach, and the callers handle: key names a command returns (BRPOP's popped
 * key, SCAN) carry the tag; keys a Lua script builds from its ARGV get the tag from `keyTag(redis)`.
 */
import { connect as tlsConnect, type ConnectionOptions } from "node:tls";
import { Cluster, type ClusterOptions, type Redis, type RedisOptions } from "ioredis";
import { groupTag, type ParsedClusterUrl } from "./clusterUrl.js";
import { tlsOptions } from "./tls.js";

/**
 * ms between tries while the cluster has no master for a slot (a failover in progress: the replica is
 * promoted after cluster-node-timeout, 15 s by default), and the most redirections one command follows.
 */
const FAILOVER_RETRY_MS = 100;
const MAX_REDIRECTIONS = 64;

/** `redisOptions`: the per-node settings connect() builds for a single server, minus host and port. */
export function openCluster(parsed: ParsedClusterUrl, redisOptions: RedisOptions): Redis {
  const first = parsed.nodes[0]!;
  const options: ClusterOptions = {
    redisOptions: {
      ...redisOptions,
      ...(parsed.username === undefined ? {} : { username: parsed.username }),
      ...(parsed.password === undefined ? {} : { password: parsed.password }),
      ...(parsed.tls ? { tls: tlsOptions(parsed.tls, parsed.tls.servername ?? first.host) } : {}),
    },
    ...(parsed.group === undefined ? {} : { keyPrefix: groupTag(parsed.group) }),
    // Writes go to masters, and so do reads: a replica lags, and tsq reads what it just wrote.
    scaleReads: "master",
    enableAutoPipelining: redisOptions.enableAutoPipelining ?? false,
    lazyConnect: redisOptions.lazyConnect ?? false,
    enableOfflineQueue: redisOptions.enableOfflineQueue ?? true,
    enableReadyCheck: true,
    maxRedirections: MAX_REDIRECTIONS,
    retryDelayOnFailover: FAILOVER_RETRY_MS,
    retryDelayOnClusterDown: FAILOVER_RETRY_MS,
    retryDelayOnTryAgain: FAILOVER_RETRY_MS,
    // Seeds unreachable (the whole cluster down): try again, 100 ms growing to 2 s, forever, as a
    // single-server connection does.
    clusterRetryStrategy: (times) => Math.min(times * 100, 2000),
    // A new node seen in a MOVED reply is reached at once rather than after the next slot refresh (ms).
    slotsRefreshTimeout: 2000,
  };
  const cluster = new Cluster(parsed.nodes, options);
  keepNodeCause(
    cluster,
    options.redisOptions?.tls === undefined ? undefined : { ...first, tls: options.redisOptions.tls },
  );
  // Through the Redis type on purpose: tsq's code calls the commands both clients share (the Commander
  // API, events, status); what only a Cluster has is reached through `isCluster` below.
  return cluster as unknown as Redis;
}

const CLOSED = /^Connection is closed/;

/**
 * Why a cluster cannot start, for describeConnectionError and the TLS explanation connect() logs. ioredis
 * asks the seeds for the slot map on connections of their own whose errors it drops, and then reports
 * "Failed to refresh slots cache." with the last seed's "Connection is closed." (lastNodeError): a
 * certificate or a password refused is not said. A node's own error ("node error") is kept; with TLS,
 * when there is none, one TLS handshake with the first seed finds it (once until the cluster is ready),
 * and is reported as that seed's "node error". Registered first, so every later listener reads it.
 */
function keepNodeCause(
  cluster: Cluster,
  seed: { host: string; port: number; tls: ConnectionOptions } | undefined,
): void {
  let cause: Error | undefined;
  let probed = false;
  cluster.on("node error", (error: unknown) => {
    if (error instanceof Error && !CLOSED.test(error.message)) cause = error;
  });
  cluster.on("error", (error: unknown) => {
    if (!(error instanceof Error)) return;
    const withLast = error as Error & { lastNodeError?: unknown };
    const last = withLast.lastNodeError;
    const uninformative = last === undefined || (last instanceof Error && CLOSED.test(last.message));
    if (!uninformative) return;
    if (cause !== undefined) withLast.lastNodeError = cause;
    else if (seed !== undefined && !probed) {
      probed = true;
      handshake(seed)
        .then((refused) => refused && cluster.emit("node error", refused, `${seed.host}:${seed.port}`))
        .catch(() => undefined);
    }
  });
  cluster.on("ready", () => {
    cause = undefined;
    probed = false;
  });
}

/** ms one diagnostic TLS handshake may take. */
const HANDSHAKE_TIMEOUT_MS = 5000;

/** The error of one TLS handshake with `seed`, or undefined when it succeeds (or does not end in time). */
function handshake(seed: { host: string; port: number; tls: ConnectionOptions }): Promise<Error | undefined> {
  return new Promise((resolve) => {
    const socket = tlsConnect({ ...seed.tls, host: seed.host, port: seed.port });
    const done = (error: Error | undefined) => {
      socket.destroy();
      resolve(error);
    };
    socket.setTimeout(HANDSHAKE_TIMEOUT_MS, () => done(undefined));
    socket.once("secureConnect", () => done(undefined));
    socket.once("error", (error: Error) => done(error));
  });
}

/** True for a connection opened by openCluster. */
export function isCluster(redis: Redis): boolean {
  return (redis as unknown as { isCluster?: boolean }).isCluster === true;
}

/**
 * The tag a connection puts before its keys (`{group}`, or "" on a single server and on an untagged
 * cluster connection), for key names a Lua script builds itself from ARGV.
 */
export function keyTag(redis: Redis): string {
  const prefix = redis.options.keyPrefix;
  return typeof prefix === "string" ? prefix : "";
}

/** A key name returned by Redis (BRPOP, SCAN) without the connection's tag. */
export function untagged(redis: Redis, key: string): string {
  const tag = keyTag(redis);
  return tag !== "" && key.startsWith(tag) ? key.slice(tag.length) : key;
}

/** `key` as Redis sees it through `redis` (tag included), for a key name a Lua script gets in its ARGV. */
export function tagged(redis: Redis, key: string): string {
  return keyTag(redis) + key;
}

/** Redis glob's special characters escaped, so `text` matches itself only. */
function globEscape(text: string): string {
  return text.replace(/[*?[\]\\]/g, (c) => `\\${c}`);
}

/**
 * Every key matching `pattern` (a SCAN MATCH glob), as tsq names them (no tag). On a cluster a SCAN
 * walks one node's keys: each master is walked (a slot being moved has keys on two), with the tag before
 * the pattern. For sweeps and tools, never a job's path.
 */
export async function scanKeys(redis: Redis, pattern: string, count = 1000): Promise<string[]> {
  const tag = keyTag(redis);
  // A cluster client knows its masters once it has read the slot map: a command waits for that.
  if (isCluster(redis) && redis.status !== "ready") await redis.ping();
  const nodes = isCluster(redis) ? (redis as unknown as Cluster).nodes("master") : [redis];
  const keys = new Set<string>();
  for (const node of nodes) {
    let cursor = "0";
    do {
      const [next, batch] = await node.scan(cursor, "MATCH", globEscape(tag) + pattern, "COUNT", count);
      cursor = next;
      for (const key of batch) keys.add(tag !== "" && key.startsWith(tag) ? key.slice(tag.length) : key);
    } while (cursor !== "0");
  }
  return [...keys];
}
