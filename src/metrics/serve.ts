/**
 * Wiring of a worker's metrics endpoint, `tsq --metrics-port`: the process's own JobMetrics plus the
 * Redis gauges (a cluster's is src/cluster/serveMetrics.ts). Undefined when the port is 0 (off) or
 * cannot be bound (logged; the worker runs on).
 */
import type { Logger } from "../platform/logger.js";
import type { TsqRedis } from "../platform/redis/connection.js";
import type { Launcher } from "../server/Launcher.js";
import { mergeFamilies, renderFamilies } from "./exposition.js";
import { JobMetrics } from "./JobMetrics.js";
import { MetricsServer } from "./MetricsServer.js";
import { LabelCap } from "./LabelCap.js";
import { REDIS_WAIT_MS, RedisGauges } from "./RedisGauges.js";

/** ms /healthz waits for Redis's PONG. */
const PING_MS = 1000;

export interface MetricsHandle {
  /** Idempotent: stops serving and collecting. */
  stop(): Promise<void>;
}

export interface WorkerMetricsHandle extends MetricsHandle {
  /** /readyz answers 200 only between setReady(true) (the launcher started) and setReady(false) (stopping). */
  setReady(ready: boolean): void;
}

/** Call before `launcher.start()`, so the first job is counted. */
export async function startWorkerMetrics(launcher: Launcher, logger: Logger): Promise<WorkerMetricsHandle | undefined> {
  const { options, redis } = launcher.ctx;
  if (!options.metricsPort) return undefined;
  const jobs = new JobMetrics(launcher.ctx);
  const cap = new LabelCap(options.metricsMaxLabelValues, logger).prefer(
    "queue",
    options.capsules.flatMap((c) => c.queues.map((q) => q.name)),
  );
  // The worker's own plug-ins' gauges (a single `tsq` serves the fleet's Redis gauges itself).
  const gauges = new RedisGauges(redis, launcher.ctx.metered, cap);
  const ping = pinger(redis);
  let ready = false;
  const server = new MetricsServer(
    {
      metrics: async () => {
        const [fromRedis, own] = await Promise.all([gauges.read(REDIS_WAIT_MS), jobs.snapshot()]);
        return renderFamilies(cap.apply(mergeFamilies([fromRedis, own])));
      },
      healthy: ping,
      ready: () => ready,
    },
    { port: options.metricsPort, host: options.metricsHost, logger },
  );
  if ((await server.start()) === undefined) {
    jobs.stop();
    return undefined;
  }
  return {
    setReady(value) {
      ready = value;
    },
    async stop() {
      ready = false;
      jobs.stop();
      await server.stop();
    },
  };
}

/**
 * True when Redis answers PING within PING_MS. While Redis is down commands wait for the reconnect, so
 * one PING in flight is shared by every probe rather than queueing one per probe.
 */
export function pinger(redis: TsqRedis): () => Promise<boolean> {
  let inflight: Promise<boolean> | undefined;
  return async () => {
    inflight ??= redis
      .ping()
      .then((reply) => reply === "PONG")
      .catch(() => false)
      .finally(() => (inflight = undefined));
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), PING_MS)));
    try {
      return await Promise.race([inflight, timeout]);
    } finally {
      clearTimeout(timer);
    }
  };
}
