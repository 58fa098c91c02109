/**
 * What a worker adds for batches and workflows: the run-side middleware, the death handler and the
 * workflow step class. Called once by the Launcher; a second Launcher in the same process (tests)
 * replaces the previous one's handler instead of adding another.
 */
import { ConcurrencyLimitServerMiddleware } from "../limits/ServerMiddleware.js";
import type { ServerContext } from "../server/context.js";
import type { Registry } from "../server/Registry.js";
import type { ServerConfig } from "../server/serverConfig.js";
import { BatchServerMiddleware, batchDeathHandler } from "./ServerMiddleware.js";
import { WorkflowResultMiddleware } from "./workflow/ResultMiddleware.js";
import { WorkflowStep } from "./workflow/WorkflowStep.js";

const INSTALLED = Symbol("tsq.batchDeathHandler");

export function installBatches(ctx: ServerContext, config: ServerConfig, registry: Registry): void {
  const chain = config.middleware;
  // Inside the concurrency limiter (a parked job has not run: it must not count as a success) and outside
  // everything else (a job a later middleware skips counts as done, as Sidekiq treats it).
  if (chain.has(ConcurrencyLimitServerMiddleware))
    chain.insertAfter(ConcurrencyLimitServerMiddleware, BatchServerMiddleware, ctx);
  else chain.prepend(BatchServerMiddleware, ctx);
  // Results are stored inside the batch middleware: before the success that may start the next stage.
  chain.insertAfter(BatchServerMiddleware, WorkflowResultMiddleware, ctx.redis);
  const handlers = config.deathHandlers;
  const previous = handlers.findIndex((h) => (h as { [INSTALLED]?: boolean })[INSTALLED] === true);
  const handler = Object.assign(batchDeathHandler(ctx), { [INSTALLED]: true });
  if (previous >= 0) handlers[previous] = handler;
  else handlers.push(handler);
  if (registry.get(WorkflowStep.jobName) === undefined) registry.register(WorkflowStep);
}
