/**
 * Server-side configuration a job module contributes, like `Sidekiq.configure_server`:
 *
 *   configureServer((config) => {
 *     config.middleware.add(TimingMiddleware);
 *     config.deathHandlers.push((job, error) => alert(job, error));
 *     config.on("startup", async () => { ... });
 *   });
 *
 * The Launcher reads it when it starts, after loading the job module. A worker built from code may be
 * given its own registrations instead (`new Worker({ configure })`), so two workers in one process
 * run different middleware.
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

let config = new RegisteredServerConfig();

export function configureServer(fn: (config: ServerConfig) => void): void {
  fn(config);
}

export function serverConfig(): RegisteredServerConfig {
  return config;
}

/** Forgets every registration (tests build several launchers in one process). */
export function resetServerConfig(): void {
  config = new RegisteredServerConfig();
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
