/**
 * Concurrency limits (GitLab's `concurrency_limit`, docs/concurrency-limits.md) on the lock core
 * (src/features/locks/Lock.ts), and GitLab's LimitedCapacity pattern on the same slots. Every Client installs the
 * client middleware (clientMiddleware.ts, decisions at push); the Launcher puts the server middleware in
 * the chain and runs one ConcurrencyLimiter per process.
 */
export { ConcurrencyLimiter, type LimiterSettings, type EnterResult } from "./ConcurrencyLimiter.js";
export { ConcurrencyLimitServerMiddleware } from "./ServerMiddleware.js";
export { concurrencyLimitOf } from "./policy.js";
export { readLimits, type LimitStatus } from "./status.js";
export { LimitedCapacityJob } from "./LimitedCapacityJob.js";
