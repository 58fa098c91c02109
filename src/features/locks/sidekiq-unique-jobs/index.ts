/**
 * sidekiq-unique-jobs interop (docs/sidekiq-unique-jobs.md): the gem's options, payload fields, digest
 * and Redis layout, so tsq and a Ruby app running the gem exclude each other's duplicates. Every Client
 * installs the push side; every Launcher installs the run side (a Ruby job names its lock in its payload).
 */
export { sujOnPush } from "./clientMiddleware.js";
export { SujServerMiddleware } from "./ServerMiddleware.js";
export { SujConflictError } from "./conflict.js";
export { lockDigest, digestInput } from "./digest.js";
export { rubyFloat, rubyJson, RubyFloat } from "./rubyJson.js";
export { holdersOf } from "./Locksmith.js";
export { sujPolicyOf, type SujOptions, type SujLockType, type SujStrategy } from "./policy.js";
