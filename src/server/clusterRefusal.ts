/**
 * Features that do not run on a Redis Cluster refuse at the worker's start, naming themselves and the
 * reason, rather than half-work (docs/redis-connections.md lists them). Each feature calls this from its
 * `server(ctx)` hook when the worker uses it; on a single server it does nothing.
 */
import { isCluster } from "../platform/redis/clusterConnection.js";
import { ConfigError } from "../wire/errors.js";
import type { ServerContext } from "./context.js";

export function refuseOnCluster(ctx: Pick<ServerContext, "redis">, feature: string, reason: string): void {
  if (isCluster(ctx.redis)) throw new ConfigError(`${feature} does not run on a Redis Cluster: ${reason}`);
}
