/**
 * Rate limiters (docs/rate-limits.md): Sidekiq Enterprise's `Limiter` API for use anywhere, the
 * reschedule of a job whose limiter is over, and classes' `static limit`, enforced before perform.
 */
export { Limiter, ConcurrentLimiter, CountingLimiter, PointsLimiter, UnlimitedLimiter } from "./Limiter.js";
export type { LimiterOptions, ConcurrentOptions, Grant } from "./Limiter.js";
export { OverLimitError, type Backoff } from "./OverLimitError.js";
export type { Interval } from "./settings.js";
export { keyedRateLimits, overLimitReschedule } from "./plugin.js";
export { performOrReschedule } from "./reschedule.js";
export { keyedLimitOf, type KeyedLimitPolicy } from "./keyedPolicy.js";
