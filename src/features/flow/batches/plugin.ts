/**
 * Batches and workflows as a plug-in (docs/batches.md): inside `batch.jobs(...)` a pushed job gets the
 * batch's bid and joins it before its write; a batch member reports its end to its batch (around the
 * whole chain, so a job a limit parked has not ended); a dead member, or one dropped before it ran,
 * counts as a death for its batch. Jobs outside batches skip every hook but a field check.
 */
import { definePlugin } from "../../../server/plugin.js";
import type { JobPayload } from "../../../wire/payload.js";
import { applyBatchEvent, failureInfo } from "./events.js";
import { BatchMembership } from "./membership.js";
import { inBatch, runInBatch } from "./runHook.js";
import { WorkflowStep } from "./workflow/WorkflowStep.js";
import type { Batch } from "./Batch.js";
import type { WorkflowHandle } from "./workflow/results.js";
import { BATCH_SCRIPTS } from "./scripts.js";
import { batchMetrics } from "./metrics.js";

declare module "../../../client/events.js" {
  interface ClientEvents {
    /** A batch callback fired ("complete", "success", "death" or "settled"): pushed by this client. */
    batchFired: [bid: string, event: string];
  }
}

declare module "../../../client/Job.js" {
  interface Job {
    /** The job's batch when it has a tsq `bid`: `this.batch.jobs(...)` adds jobs to it (docs/batches.md). */
    batch?: Batch;
    /** Set for a workflow step: `this.workflow.results()` reads the results of the steps before it. */
    workflow?: WorkflowHandle;
  }
}

export const batches = definePlugin({
  name: "batches",
  scripts: BATCH_SCRIPTS,
  emits: { client: ["batchFired"] },
  metrics: batchMetrics,
  client({ events }) {
    const membership = new BatchMembership(events);
    return {
      stamp: (job) => membership.mark(job),
      beforeWrite: (redis, jobs) => membership.join(redis, jobs),
    };
  },
  server(ctx) {
    const death = async (job: JobPayload, error: Error): Promise<void> => {
      if (!inBatch(job)) return;
      await applyBatchEvent(ctx.redis, "death", job.bid as string, job.jid, {
        info: failureInfo(job, error),
        format: ctx.timestampFormat,
        events: ctx.client.events,
      }).catch((batchError: unknown) =>
        ctx.logger.error({ err: batchError, bid: job.bid }, "could not record a death in its batch"),
      );
    };
    // Dropped before it ran (its `expiresIn` passed, or a kill switch drops its class): it will never
    // run, so for its batch it died.
    ctx.events.on("expired", (job) => void death(job, new Error("expired before it ran (expiresIn)")));
    ctx.events.on("switched", (job, _queue, action) => {
      if (action === "dropped") void death(job, new Error("dropped by a kill switch"));
    });
    if (ctx.registry.get(WorkflowStep.jobName) === undefined) ctx.registry.register(WorkflowStep);
    return {
      onDeath: death,
      around: (run, instance, job) => (inBatch(job) ? runInBatch(ctx, instance, job, run) : run()),
    };
  },
});
