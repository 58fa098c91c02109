/**
 * Unique jobs, Sidekiq Enterprise's API (docs/unique-jobs.md), on the lock core (src/features/locks/Lock.ts)
 * beside deduplication: every Client installs the push side; the Launcher puts the run side first in the
 * server chain; the removal paths release both kinds (src/features/locks/release.ts).
 */
export { uniqueOnPush } from "./clientMiddleware.js";
export { UniqueServerMiddleware } from "./ServerMiddleware.js";
export { Unique, type LockedOptions } from "./Unique.js";
export { uniquePolicyOf, type UniqueOptions, type UniqueUntil } from "./policy.js";
