/**
 * What a worker adds for batches and workflows, once per Launcher: the death handler, the listeners
 * for jobs dropped before they ran, and the workflow step class. The run side is `runInBatch`, called
 * by the Processor around the chain for batch jobs only. A second Launcher in the same process (tests)
 * replaces the previous one's handler instead of adding another.
 */
import type { JobPayload } from "../../../wire/payload.js";
import type { ServerContext } from "../../../server/context.js";
import type { Registry } from "../../../server/Registry.js";
import type { ServerConfig } from "../../../server/serverConfig.js";
import { applyBatchEvent, failureInfo } from "./events.js";
import { inBatch } from "./runHook.js";
import { WorkflowStep } from "./workflow/WorkflowStep.js";

const INSTALLED = Symbol("tsq.batchDeathHandler");

export function installBatches(ctx: ServerContext, config: ServerConfig, registry: Registry): void {
  const death = (job: JobPayload, error: Error) => reportDeath(ctx, job, error);
  const handlers = config.deathHandlers;
  const previous = handlers.findIndex((h) => (h as { [INSTALLED]?: boolean })[INSTALLED] === true);
  const handler = Object.assign(death, { [INSTALLED]: true });
  if (previous >= 0) handlers[previous] = handler;
  else handlers.push(handler);
  // Dropped before it ran (its `expiresIn` passed, or a kill switch drops its class): it will never
  // run, so for its batch it died.
  ctx.events.on("expired", (job) => void death(job, new Error("expired before it ran (expiresIn)")));
  ctx.events.on("switched", (job, _queue, action) => {
    if (action === "dropped") void death(job, new Error("dropped by a kill switch"));
  });
  if (registry.get(WorkflowStep.jobName) === undefined) registry.register(WorkflowStep);
}

async function reportDeath(ctx: ServerContext, job: JobPayload, error: Error): Promise<void> {
  if (!inBatch(job)) return;
  await applyBatchEvent(ctx.redis, "death", job.bid as string, job.jid, {
    info: failureInfo(job, error),
    format: ctx.timestampFormat,
  }).catch((batchError: unknown) =>
    ctx.logger.error({ err: batchError, bid: job.bid }, "could not record a death in its batch"),
  );
}
