/**
 * A Fastify plugin that runs a tsq worker inside the server's lifecycle: it starts when the server is
 * ready and stops (running jobs get `timeout` seconds) when the server closes. The instance is
 * decorated with `app.tsq.client`, so routes enqueue through the app's own connection, and every job
 * is built with `this.app` set, so jobs reach the app's decorators (services, config) as routes do.
 *
 *   await app.register(tsqPlugin, { redis: process.env.REDIS_URL, jobs: [WelcomeEmailJob] });
 *   await WelcomeEmailJob.set({ client: app.tsq.client }).performAsync(email);
 */
import type { FastifyInstance } from "fastify";
import { Client, Job, Worker, type WorkerConfig } from "tsq";

export interface TsqPluginOptions {
  /** Redis URL; default REDIS_URL, then redis://127.0.0.1:6379/0. */
  redis?: string;
  jobs: WorkerConfig["jobs"];
  queues?: WorkerConfig["queues"];
  concurrency?: number;
  /** Seconds running jobs get when the server closes (default 25). */
  timeout?: number;
}

declare module "fastify" {
  interface FastifyInstance {
    tsq: { client: Client; worker: Worker };
  }
}

/** A job that runs with the Fastify instance at hand: `this.app.mailer`, `this.app.log`. */
export abstract class AppJob extends Job {
  declare app: FastifyInstance;
}

async function tsq(app: FastifyInstance, options: TsqPluginOptions): Promise<void> {
  const { timeout = 25, ...settings } = options;
  const client = new Client(options.redis ? { redis: options.redis } : {});
  const worker = new Worker({
    ...settings,
    timeout,
    // A fresh instance per job (tsq sets its jid and payload on it), with the app's decorators at hand.
    jobFactory: (Class) => Object.assign(new Class(), { app }),
  });
  worker.on("error", (error) => app.log.error(error));
  app.decorate("tsq", { client, worker });
  app.addHook("onReady", async () => {
    await worker.start();
  });
  app.addHook("onClose", async () => {
    await worker.stop({ timeout });
    await client.close();
  });
}

// Fastify keeps a plugin's decorators to its own scope unless told otherwise; this marks the plugin as
// fastify-plugin's `fp()` does, so `app.tsq` is visible to the routes registered beside it.
export const tsqPlugin = Object.assign(tsq, { [Symbol.for("skip-override")]: true });
