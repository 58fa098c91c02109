/**
 * Job expiry (`expiresIn`) as a plug-in: the deadline stamped at push, and a job past it dropped before
 * it starts, never retried (docs/flow-control.md#expiry).
 */
import { definePlugin } from "../../../server/plugin.js";
import { jobNameOf, type JobOptions } from "../../../client/options.js";
import { dropIfExpired } from "./expire.js";
import { stampExpiry } from "./stamp.js";
import { expiryMetrics } from "./metrics.js";
import type { JobPayload } from "../../../wire/payload.js";

declare module "../../../client/options.js" {
  interface JobOptions {
    /**
     * Seconds after the job's scheduled time (its `at`, else its push) after which it is dropped instead
     * of run, never retried (Sidekiq Pro's `expires_in`). Unset: the job never expires.
     */
    expiresIn?: number;
  }
}

declare module "../../../server/hooks.js" {
  interface JobEvents {
    /** The job's `expires_in` had passed: dropped before it started (expire.ts). */
    expired: [job: JobPayload, queue: string];
  }
}

export const expiry = definePlugin({
  name: "expiry",
  emits: { job: ["expired"] },
  metrics: expiryMetrics,
  jobOptions: ["expiresIn"] satisfies (keyof JobOptions)[],
  client() {
    return { stamp: (job, klass) => stampExpiry(job, jobNameOf(klass)) };
  },
  server(ctx) {
    return { intercept: (job, unit) => dropIfExpired(ctx, job, unit) };
  },
});
