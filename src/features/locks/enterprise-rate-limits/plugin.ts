/**
 * Sidekiq Enterprise's rate limits as two plug-ins (docs/rate-limits.md):
 *
 *   keyed-rate-limits       the keyed gate of classes' `static limit`, in the chain only when a class
 *                           this worker runs declares one, and its resumer as a service
 *   over-limit-reschedule   an OverLimitError thrown by perform reschedules the job instead of failing
 *                           it (around perform, inside every middleware)
 */
import { rateLimitsView } from "./view.js";
import { definePlugin } from "../../../server/plugin.js";
import { limiterFor } from "../gitlab-concurrency-limits/plugin.js";
import type { ServerContext } from "../../../server/context.js";
import { jobNameOf } from "../../../client/options.js";
import { KeyedLimiter } from "./KeyedLimiter.js";
import { KeyedLimitServerMiddleware } from "./KeyedServerMiddleware.js";
import { keyedLimitOf, type KeyedLimitPolicy } from "./keyedPolicy.js";

/** Ms between resumer passes: the most a rate-limited key's next job waits past its time. */
const RESUME_INTERVAL_MS = 100;

import { performOrReschedule } from "./reschedule.js";
import { LOCK_SCRIPTS } from "../scripts.js";
import { RATE_SCRIPTS } from "./scripts.js";
import { keyedLimitGauges, keyedLimitMetrics, overLimitGauges, overLimitMetrics } from "./metrics.js";
import { maxParked } from "../gitlab-concurrency-limits/settings.js";
import type { JobPayload } from "../../../wire/payload.js";

declare module "../../../server/hooks.js" {
  interface JobEvents {
    /** A rate limit parked a job on its key, refused to (list full), or rescheduled it (OverLimitError). */
    rateLimited: [job: JobPayload, queue: string, action: "parked" | "refused" | "rescheduled"];
  }
}

declare module "../../../client/events.js" {
  interface ClientEvents {
    /** A running job's Limiter call began (1) or ended (-1) waiting inside its waitTimeout (Limiter.ts). */
    limiterWait: [change: 1 | -1];
  }
}

export const keyedRateLimits = definePlugin({
  name: "keyed-rate-limits",
  views: [rateLimitsView],
  scripts: [...RATE_SCRIPTS, ...LOCK_SCRIPTS],
  emits: { job: ["rateLimited"] },
  metrics: keyedLimitMetrics,
  gauges: keyedLimitGauges,
  settings: [maxParked],
  server(ctx) {
    const limiter = keyedLimiter(ctx);
    if (!limiter) return undefined;
    return {
      middleware: { use: KeyedLimitServerMiddleware, options: [limiter, ctx] },
      services: [{ name: "keyed-rate-limiter", start: () => limiter.start(), stop: () => limiter.stop() }],
    };
  },
});

export const overLimitReschedule = definePlugin({
  name: "over-limit-reschedule",
  scripts: [...RATE_SCRIPTS, ...LOCK_SCRIPTS],
  emits: { job: ["rateLimited"], client: ["limiterWait"] },
  metrics: overLimitMetrics,
  gauges: overLimitGauges,
  server(ctx) {
    return { aroundPerform: (perform, job, queue) => performOrReschedule(ctx, job, queue, perform) };
  },
});

/** The keyed limiter of the classes that declare a `static limit`; undefined when none does. */
function keyedLimiter(ctx: ServerContext): KeyedLimiter | undefined {
  const policies = new Map<string, KeyedLimitPolicy>();
  for (const klass of ctx.registry.all()) {
    const policy = keyedLimitOf(klass);
    if (policy) policies.set(jobNameOf(klass), policy);
  }
  if (policies.size === 0) return undefined;
  return new KeyedLimiter(
    ctx.redis,
    policies,
    limiterFor(ctx),
    {
      leaseTtl: ctx.options.heartbeatTtl,
      resumeIntervalMs: RESUME_INTERVAL_MS,
      maxParked: maxParked.read(ctx.options),
    },
    ctx.logger,
  );
}
