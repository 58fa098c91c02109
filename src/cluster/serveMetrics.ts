/**
 * The cluster's /metrics, /healthz and /readyz, served by the supervisor: every child's job metrics
 * merged (ClusterMetrics) with the Redis gauges. Undefined when the port is 0 (off) or cannot be bound
 * (logged; the children run on).
 */
import type { ChildPlan } from "./groups.js";
import type { Supervisor } from "./Supervisor.js";
import type { WorkerOptions } from "../platform/config/options.js";
import type { Logger } from "../platform/logger.js";
import type { TsqRedis } from "../platform/redis/connection.js";
import type { PluginMetrics } from "../server/hooks.js";
import { MetricsServer } from "../metrics/MetricsServer.js";
import { pinger, type MetricsHandle } from "../metrics/serve.js";
import { ClusterMetrics } from "./ClusterMetrics.js";

export interface ClusterMetricsSettings {
  plan: ChildPlan[];
  worker: WorkerOptions;
  redis: TsqRedis;
  /** The other shards' connections (src/platform/shards): their queues and sets are in /metrics too. */
  otherShards?: TsqRedis[];
  port: number;
  host: string;
  logger: Logger;
  /** The plug-ins the children run, for their Redis gauges. */
  plugins: readonly PluginMetrics[];
}

export async function startClusterMetrics(
  supervisor: Supervisor,
  settings: ClusterMetricsSettings,
): Promise<MetricsHandle | undefined> {
  const { plan, worker, redis, port, host, logger, otherShards, plugins } = settings;
  if (port === 0) return undefined;
  const extraConcurrency = worker.capsules.slice(1).reduce((sum, c) => sum + c.concurrency, 0);
  const collector = new ClusterMetrics(supervisor, {
    plan,
    redis,
    otherShards,
    extraConcurrency,
    maxLabelValues: worker.metricsMaxLabelValues,
    logger,
    plugins,
  });
  collector.start();
  const ping = pinger(redis);
  const server = new MetricsServer(
    {
      metrics: () => collector.render(),
      healthy: async () => !supervisor.isStopping && (await ping()),
      ready: () => !supervisor.isStopping && supervisor.readyChildren().length >= supervisor.expectedChildren,
    },
    { port, host, logger },
  );
  if ((await server.start()) === undefined) {
    collector.stop();
    return undefined;
  }
  return {
    async stop() {
      collector.stop();
      await server.stop();
    },
  };
}
