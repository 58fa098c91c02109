/**
 * Deduplication of idempotent jobs, GitLab's semantics (docs/deduplication.md), on the lock core
 * (src/features/locks/Lock.ts). Every Client installs the push side; the Launcher puts the run side first in
 * the server chain.
 */
export { deduplicationOnPush } from "./clientMiddleware.js";
export { DeduplicationServerMiddleware } from "./ServerMiddleware.js";
export { releaseLocksOf } from "../release.js";
export { dedupPolicyOf, DEFAULT_TTL, type DeduplicateOptions, type Strategy } from "./policy.js";
