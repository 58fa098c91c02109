/**
 * Puts the keyed gate into a worker's chain when a class this process runs declares a `static limit`
 * (the reschedule of OverLimitError is the Processor's, reschedule.ts). Returns the KeyedLimiter, for the
 * Launcher's start and stop.
 */
import type { ConcurrencyLimiter } from "../gitlab-concurrency-limits/ConcurrencyLimiter.js";
import type { Chain } from "../../../platform/Chain.js";
import type { ServerContext, ServerMiddlewareArgs } from "../../../server/context.js";
import { jobNameOf } from "../../../client/options.js";
import { KeyedLimiter } from "./KeyedLimiter.js";
import { KeyedLimitServerMiddleware } from "./KeyedServerMiddleware.js";
import { keyedLimitOf, type KeyedLimitPolicy } from "./keyedPolicy.js";

/** Ms between resumer passes: the most a rate-limited key's next job waits past its time. */
const RESUME_INTERVAL_MS = 100;

export function installRateLimits(
  chain: Chain<ServerMiddlewareArgs>,
  ctx: ServerContext,
  classes: object[],
  leases: ConcurrencyLimiter,
): KeyedLimiter {
  const policies = new Map<string, KeyedLimitPolicy>();
  for (const klass of classes) {
    const policy = keyedLimitOf(klass);
    if (policy) policies.set(jobNameOf(klass as Parameters<typeof jobNameOf>[0]), policy);
  }
  const limiter = new KeyedLimiter(
    ctx.redis,
    policies,
    leases,
    {
      leaseTtl: ctx.options.heartbeatTtl,
      resumeIntervalMs: RESUME_INTERVAL_MS,
      maxParked: ctx.options.concurrencyLimitMaxParked,
    },
    ctx.logger,
  );
  if (policies.size > 0) chain.prepend(KeyedLimitServerMiddleware, limiter, ctx);
  return limiter;
}
