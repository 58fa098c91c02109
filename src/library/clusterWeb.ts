/** A cluster's web dashboard: `tsq-cluster --web-port` and `new Cluster({ webPort })`. */
import type { Logger } from "../platform/logger.js";
import { connect } from "../platform/redis/connection.js";
import type { ClusterOptions } from "../options/clusterOptions.js";
import { WebServer, WEB_REDIS_DEADLINE_MS } from "../admin/web/index.js";
import { shardMapOf } from "../platform/shards/serve.js";
import { DEFAULT_SHARD } from "../platform/shards/ShardMap.js";

/**
 * The web dashboard beside /metrics (`--web-port`), on its own connection. A port already taken is
 * logged and the cluster runs without it, as for /metrics.
 */
export async function startClusterWeb(
  options: ClusterOptions,
  log: Logger,
): Promise<{ stop(): Promise<void> } | undefined> {
  if (!options.webPort) return undefined;
  const redis = connect(options.worker.redisUrl, { name: "tsq-web", commandTimeoutMs: WEB_REDIS_DEADLINE_MS });
  // A sharded Redis: every other shard under /shards/<name>/, on connections of the dashboard's own.
  const map = shardMapOf(options.worker);
  const others = map
    .names()
    .filter((name) => name !== DEFAULT_SHARD)
    .map((name) => ({
      name,
      redis: connect(map.urlOf(name), { name: "tsq-web", commandTimeoutMs: WEB_REDIS_DEADLINE_MS }),
    }));
  const disconnect = () => {
    redis.disconnect();
    for (const shard of others) shard.redis.disconnect();
  };
  const password = process.env.TSQ_WEB_PASSWORD || undefined;
  const token = process.env.TSQ_WEB_TOKEN || undefined;
  const server = new WebServer({
    redis,
    shards: others,
    port: options.webPort,
    host: options.metricsHost,
    auth: password !== undefined || token !== undefined ? { password, token } : undefined,
    logger: log,
  });
  try {
    const { url } = await server.start();
    log.info({ url }, "web dashboard listening");
  } catch (error) {
    log.error({ err: error }, `could not serve the web dashboard on port ${options.webPort}; running without it`);
    disconnect();
    return undefined;
  }
  return {
    async stop() {
      await server.stop();
      disconnect();
    },
  };
}
