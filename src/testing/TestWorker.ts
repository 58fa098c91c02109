/**
 * `startTestWorker`: a real worker in this process on a private redis-server, for integration tests
 * that need what fake and inline modes leave out (locks, batches, retries, the real fetch).
 *
 *   const tw = await startTestWorker({ jobs: [HardJob] });
 *   await HardJob.performAsync("bob", 5);   // the default client now points at the private Redis
 *   await tw.drain();                        // queues empty, nothing running
 *   await tw.stop();                         // worker, connections and redis-server gone
 */
import { Worker, type WorkerConfig } from "../library/Worker.js";
import { Client, configureClient } from "../library/Client.js";
import { defaultClient } from "../client/defaultClient.js";
import { queueKey, SCHEDULE } from "../wire/keys.js";
import { nowSeconds } from "../wire/timestamps.js";
import { sleep } from "../platform/util/sleep.js";
import { checkDuration } from "../platform/util/longTimer.js";
import { startRedisServer } from "./redisServer.js";

export interface TestWorkerConfig extends Omit<WorkerConfig, "redis"> {
  /** The redis-server binary (default: `redis-server` from PATH). */
  redisServer?: string;
  /** Point the default client (`HardJob.performAsync`) at the private Redis until `stop()`. Default true. */
  useAsDefaultClient?: boolean;
}

export interface TestWorker {
  /** The private Redis, e.g. `redis://127.0.0.1:23456/0`. */
  readonly url: string;
  readonly worker: Worker;
  /** A client of the private Redis (also the default client unless `useAsDefaultClient: false`). */
  readonly client: Client;
  /**
   * Resolves when every queue this worker reads is empty, no scheduled job is due and no job is running;
   * rejects after `timeout` seconds (default 30) naming what is left.
   */
  drain(options?: { timeout?: number }): Promise<void>;
  /** Stops the worker (running jobs get `timeout` seconds, default 5), the client and redis-server. Idempotent. */
  stop(options?: { timeout?: number }): Promise<void>;
}

/** Milliseconds between two looks at the queues while draining. */
const DRAIN_CHECK_MS = 20;

export async function startTestWorker(config: TestWorkerConfig): Promise<TestWorker> {
  const { redisServer, useAsDefaultClient = true, ...workerConfig } = config;
  const server = await startRedisServer(redisServer);
  let worker: Worker;
  let client: Client;
  try {
    worker = new Worker({
      ...workerConfig,
      redis: server.url,
      // A test waits on a stop and on scheduled jobs: short blocking fetches, a poll every second.
      options: { fetchTimeout: 1, pollIntervalAverage: 1, ...workerConfig.options },
    });
    client = new Client({ redis: server.url });
    await worker.start();
  } catch (error) {
    await server.stop();
    throw error;
  }
  if (useAsDefaultClient) configureClient(client);
  const queues = (workerConfig.queues ?? ["default"]).map((q) => (typeof q === "string" ? q : q[0]));

  const idle = async (): Promise<string | undefined> => {
    const pipeline = client.redis.pipeline();
    for (const queue of queues) pipeline.llen(queueKey(queue));
    pipeline.zcount(SCHEDULE, "-inf", String(nowSeconds()));
    const counts = ((await pipeline.exec()) ?? []).map(([error, count]) => (error ? -1 : Number(count)));
    const running = worker.launcher.managers.reduce((sum, manager) => sum + manager.busy, 0);
    const left = [
      ...queues.flatMap((queue, i) => (counts[i] !== 0 ? [`${counts[i]} in queue ${queue}`] : [])),
      ...(counts[queues.length] !== 0 ? [`${counts[queues.length]} scheduled jobs due`] : []),
      ...(running > 0 ? [`${running} running`] : []),
    ];
    return left.length === 0 ? undefined : left.join(", ");
  };

  let stopped: Promise<void> | undefined;
  return {
    url: server.url,
    worker,
    client,
    async drain({ timeout = 30 } = {}) {
      checkDuration(timeout, { what: "drain({ timeout })" });
      const deadline = Date.now() + timeout * 1000;
      let quietLooks = 0;
      // Idle at two looks in a row: a job the fetch just popped is out of the queue a moment before
      // it counts as running.
      while (quietLooks < 2) {
        const left = await idle();
        quietLooks = left === undefined ? quietLooks + 1 : 0;
        if (left !== undefined && Date.now() > deadline)
          throw new Error(`startTestWorker: drain() gave up after ${timeout} s with ${left}`);
        if (quietLooks < 2) await sleep(DRAIN_CHECK_MS);
      }
    },
    stop({ timeout = 5 } = {}) {
      stopped ??= (async () => {
        try {
          await worker.stop({ timeout });
        } finally {
          // The default client goes back to a fresh one (REDIS_URL), keeping tsq/testing's mode.
          if (useAsDefaultClient && defaultClient() === client) configureClient();
          await client.close();
          await server.stop();
        }
      })();
      return stopped;
    },
  };
}
