/**
 * What a worker adds for batches and workflows: the run-side middleware, the death handler and the
 * workflow step class. Called once by the Launcher; a second Launcher in the same process (tests)
 * replaces the previous one's handler instead of adding another.
 */
import type { ServerContext } from "../server/context.js";
import type { Registry } from "../server/Registry.js";
import type { ServerConfig } from "../server/serverConfig.js";
import { BatchServerMiddleware, batchDeathHandler } from "./ServerMiddleware.js";
import { WorkflowResultMiddleware } from "./workflow/ResultMiddleware.js";
import { WorkflowStep } from "./workflow/WorkflowStep.js";

const INSTALLED = Symbol("tsq.batchDeathHandler");

export function installBatches(ctx: ServerContext, config: ServerConfig, registry: Registry): void {
  // Results are stored inside the batch middleware: before the success that may start the next stage.
  config.middleware.prepend(WorkflowResultMiddleware, ctx.redis);
  config.middleware.prepend(BatchServerMiddleware, ctx);
  const handlers = config.deathHandlers;
  const previous = handlers.findIndex((h) => (h as { [INSTALLED]?: boolean })[INSTALLED] === true);
  const handler = Object.assign(batchDeathHandler(ctx), { [INSTALLED]: true });
  if (previous >= 0) handlers[previous] = handler;
  else handlers.push(handler);
  if (registry.get(WorkflowStep.jobName) === undefined) registry.register(WorkflowStep);
}
