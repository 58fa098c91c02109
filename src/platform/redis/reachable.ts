/**
 * Waiting for a connection that is not up yet, with a deadline and a reason. ioredis queues commands
 * while it reconnects (forever: tsq's connections never give up, see connection.ts), which is right for
 * a worker but leaves a caller awaiting a push for as long as Redis is away. A caller that must answer
 * waits here first: either the connection becomes ready, or it gets an error naming the host and the
 * last connection failure, having written nothing.
 */
import type { Redis } from "ioredis";
import { RedisUnreachableError } from "../../wire/errors.js";
import { isCluster, keyTag } from "./clusterConnection.js";
import { describeConnectionError } from "./connection.js";

/** `host:port` (or the Sentinel group) of a connection, without any credential. */
export function redisTarget(redis: Redis): string {
  if (isCluster(redis)) {
    const seeds = (redis as unknown as { startupNodes: { host?: string; port?: number }[] }).startupNodes;
    const tag = keyTag(redis);
    return `the Redis Cluster ${seeds.map((node) => `${node.host}:${node.port}`).join(",")}${tag ? ` (slot group ${tag})` : ""}`;
  }
  const { host, port, sentinels, name } = redis.options;
  if (sentinels && sentinels.length > 0) return `the Sentinel primary "${name ?? "mymaster"}"`;
  return `${host ?? "127.0.0.1"}:${port ?? 6379}`;
}

/** Longest wait setTimeout keeps (ms): past it, Node fires at once (2^31 - 1, about 24.8 days). */
const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * Resolves when `redis` is ready; rejects with RedisUnreachableError after `timeoutMs` (ms; Infinity:
 * no deadline) without it, or at once when the connection was closed for good. `signal` ends the wait
 * (rejecting) when the caller gives up, e.g. a worker stopped during its start.
 */
export function whenReachable(redis: Redis, timeoutMs: number, hint: string, signal?: AbortSignal): Promise<void> {
  if (redis.status === "ready") return Promise.resolve();
  if (redis.status === "end")
    return Promise.reject(new RedisUnreachableError(`the connection to Redis at ${redisTarget(redis)} is closed`));
  if (signal?.aborted) return Promise.reject(new RedisUnreachableError("the wait for Redis was cancelled"));
  return new Promise((resolve, reject) => {
    let reason = "no answer";
    // A lazy connection (status "wait") connects at its first command: start it, as that would.
    if (redis.status === "wait") redis.connect().catch((error: unknown) => (reason = describeConnectionError(error)));
    const onError = (error: unknown) => (reason = describeConnectionError(error));
    const finish = (error?: Error) => {
      clearTimeout(timer);
      redis.off("ready", onReady);
      redis.off("error", onError);
      redis.off("end", onEnd);
      signal?.removeEventListener("abort", onAbort);
      if (error) reject(error);
      else resolve();
    };
    const onReady = () => finish();
    const onEnd = () => finish(new RedisUnreachableError(`the connection to Redis at ${redisTarget(redis)} is closed`));
    const onAbort = () => finish(new RedisUnreachableError("the wait for Redis was cancelled"));
    const expire = () => {
      const seconds = Math.round(timeoutMs / 100) / 10;
      finish(
        new RedisUnreachableError(
          `cannot reach Redis at ${redisTarget(redis)}: ${reason} (waited ${seconds} s; nothing was written; ${hint})`,
        ),
      );
    };
    const timer = timeoutMs <= MAX_TIMER_MS ? setTimeout(expire, timeoutMs) : undefined;
    redis.on("ready", onReady);
    redis.on("error", onError);
    redis.on("end", onEnd);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}
