/**
 * Server-side configuration a job module contributes, like `Sidekiq.configure_server`:
 *
 *   configureServer((config) => {
 *     config.middleware.add(TimingMiddleware);
 *     config.deathHandlers.push((job, error) => alert(job, error));
 *     config.on("startup", async () => { ... });
 *   });
 *
 * The app's registrations, made at boot (a `-r` job module makes them as it loads). The entry points
 * hand them to the worker they build: the `tsq` CLI and a `tsq-cluster` child after loading the job
 * module, a `new Worker` without `configure`, tsq/testing's inline mode. A Launcher is never handed
 * them implicitly: one built without a config runs none, and `new Worker({ configure })` gives one
 * worker its own, so two workers in one process run different middleware.
 */
import { Chain } from "../platform/Chain.js";
import type { Logger } from "../platform/logger.js";
import type { ClientMiddlewareArgs } from "../client/Client.js";
import type { DeathHandler, ServerMiddlewareArgs } from "./context.js";

export type LifecycleEvent = "startup" | "quiet" | "shutdown";

export interface ServerConfig {
  readonly middleware: Chain<ServerMiddlewareArgs>;
  /** Client middleware used by pushes made inside the worker (jobs enqueuing jobs, the poller). */
  readonly clientMiddleware: Chain<ClientMiddlewareArgs>;
  readonly deathHandlers: DeathHandler[];
  on(event: LifecycleEvent, handler: () => unknown): void;
}

/** Registrations as a worker reads them: the lifecycle handlers too. */
export class RegisteredServerConfig implements ServerConfig {
  readonly middleware = new Chain<ServerMiddlewareArgs>();
  readonly clientMiddleware = new Chain<ClientMiddlewareArgs>();
  readonly deathHandlers: DeathHandler[] = [];
  readonly handlers: Record<LifecycleEvent, (() => unknown)[]> = { startup: [], quiet: [], shutdown: [] };

  on(event: LifecycleEvent, handler: () => unknown): void {
    this.handlers[event].push(handler);
  }
}

/** The app's registrations: one object for the process, added to at boot and never replaced. */
const config = new RegisteredServerConfig();

export function configureServer(fn: (config: ServerConfig) => void): void {
  fn(config);
}

/** What the app registered with `configureServer`, for the entry point that builds a worker from it. */
export function serverConfig(): RegisteredServerConfig {
  return config;
}

/**
 * Runs `config`'s handlers for `event` in registration order. A startup handler that raises stops the
 * start, as Sidekiq re-raises startup errors (a broken boot must not run jobs); any other is logged.
 */
export async function fireLifecycle(
  config: RegisteredServerConfig,
  event: LifecycleEvent,
  logger: Logger,
): Promise<void> {
  for (const handler of config.handlers[event]) {
    try {
      await handler();
    } catch (error) {
      if (event === "startup") throw error;
      logger.error({ err: error, event }, "lifecycle handler raised");
    }
  }
}
