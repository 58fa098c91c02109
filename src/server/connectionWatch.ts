/**
 * Logs a worker's Redis outage once when it starts and once when it ends. Commands wait for the
 * reconnect (ioredis retries with back-off, 50 ms growing to 2 s), so work resumes without a restart.
 */
import { performance } from "node:perf_hooks";
import type { Logger } from "../platform/logger.js";
import { describeConnectionError, type TsqRedis } from "../platform/redis/connection.js";
import { redisTarget } from "../platform/redis/reachable.js";
import { explainTlsError } from "../platform/redis/tls.js";

/** `stopping`: true once the worker is stopping, when a closed connection is expected, not an outage. */
export function watchConnection(redis: TsqRedis, logger: Logger, stopping: () => boolean): void {
  let downSince: number | undefined;
  let everReady = false;
  let reason = "no answer";
  // A TLS problem is explained once by the connection itself (connection.ts): only pointed at here.
  redis.on(
    "error",
    (error: unknown) =>
      (reason =
        explainTlsError(error) === undefined ? describeConnectionError(error) : "TLS handshake failed (see above)"),
  );
  redis.on("close", () => {
    if (downSince !== undefined || stopping()) return;
    downSince = performance.now();
    // A first connection that never succeeded was not "lost": say where and why.
    if (everReady) logger.error("Redis connection lost; retrying with back-off, jobs in flight are kept");
    else logger.error(`cannot reach Redis at ${redisTarget(redis)}: ${reason}; retrying with back-off`);
  });
  redis.on("ready", () => {
    everReady = true;
    if (downSince === undefined) return;
    const seconds = Math.round((performance.now() - downSince) / 100) / 10;
    downSince = undefined;
    logger.info({ outage_s: seconds }, "Redis connection restored; resuming");
  });
}
