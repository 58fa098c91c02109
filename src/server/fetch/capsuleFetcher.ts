/**
 * The fetcher a capsule's Manager pops its jobs with: basic or reliable as configured, on its own
 * blocking connection (BRPOP/BLMOVE must not share one), with the Unblocker that ends its wait at a
 * hurried stop, the process's paused queues and the plug-ins' fetch order (fetchOrder.ts).
 */
import type { CapsuleConfig } from "../../platform/config/options.js";
import { Unblocker } from "../../platform/redis/Unblocker.js";
import { isCluster } from "../../platform/redis/clusterConnection.js";
import type { ServerContext } from "../context.js";
import { BasicFetch } from "./BasicFetch.js";
import { pausedQueuesFor, type PausedQueues } from "./PausedQueues.js";
import { ReliableFetch } from "./ReliableFetch.js";
import type { Fetcher } from "./unitOfWork.js";

export interface CapsuleFetcher {
  fetcher: Fetcher;
  unblocker: Unblocker | undefined;
  paused: PausedQueues | undefined;
}

export function capsuleFetcher(ctx: ServerContext, capsule: CapsuleConfig): CapsuleFetcher {
  const blocking = ctx.connect(`tsq-fetch-${capsule.name}`, true);
  const { fetch, fetchTimeout } = ctx.options;
  const paused = pausedQueuesFor(ctx, ctx.redis, ctx.logger);
  const reorder = ctx.fetchOrder?.(capsule);
  const fetcher =
    fetch === "reliable"
      ? new ReliableFetch(
          ctx.redis,
          blocking,
          ctx.identity,
          capsule.queues,
          fetchTimeout,
          ctx.logger,
          paused,
          // One job at a time: a job fetched ahead would only wait behind it, away from other processes.
          capsule.concurrency > 1 ? capsule.concurrency : 0,
          reorder,
        )
      : new BasicFetch(ctx.redis, blocking, capsule.queues, fetchTimeout, paused, reorder);
  // On a Redis Cluster CLIENT ID and CLIENT UNBLOCK would reach any node, not the one the fetch waits
  // on: no unblocker there; a hurried stop lets the fetch time out instead (see Manager.endFetch).
  const unblocker = isCluster(blocking) ? undefined : new Unblocker(blocking, ctx.redis);
  return { fetcher, unblocker, paused };
}
