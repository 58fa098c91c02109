/**
 * tsq's public API. Everything a job module or an application needs; internals are not exported.
 */
export { Job, Setter, type SetOptions } from "./client/Job.js";
export { LimitedCapacityJob } from "./limits/LimitedCapacityJob.js";
export {
  Limiter,
  OverLimitError,
  type LimiterOptions,
  type ConcurrentOptions,
  type Grant,
  type Backoff,
  type Interval,
} from "./ratelimit/index.js";
export type { JobOptions } from "./client/options.js";
export type { DeduplicateOptions } from "./dedup/policy.js";
export { Unique, type LockedOptions, type UniqueOptions, type UniqueUntil } from "./unique/index.js";
export {
  rubyFloat,
  RubyFloat,
  lockDigest,
  SujConflictError,
  type SujOptions,
  type SujLockType,
  type SujStrategy,
} from "./uniqueJobs/index.js"; // sidekiq-unique-jobs interop (docs/sidekiq-unique-jobs.md)
export {
  Client,
  type ClientOptions,
  type ClientMiddlewareArgs,
  type PushItem,
  type BulkItem,
} from "./client/Client.js";
export { configureClient, defaultClient, closeDefaultClient } from "./client/defaultClient.js";
export { ShardMap, DEFAULT_SHARD, type ShardConfig } from "./shards/ShardMap.js";
export { Chain, type Middleware, type Next } from "./middleware/Chain.js";
export type { JobPayload, JsonValue } from "./payload.js";
export {
  TsqError,
  ArgumentError,
  PayloadTooLargeError,
  ConfigError,
  UnknownJobError,
  InvalidPayloadError,
  EnqueueError,
  ConcurrencyLimitFullError,
  JobInterrupted,
  IterationStateError,
} from "./errors.js";
export {
  IterableJob,
  rangeEnumerator,
  arrayEnumerator,
  cancelIterable,
  type Enumerator,
  type Step,
  type IterationState,
} from "./iterable/index.js";
export { redactUrl } from "./redis/connection.js";
export { logger, type Logger } from "./logger.js";
export { configureServer, type ServerConfig, type LifecycleEvent } from "./server/serverConfig.js";
export type { ServerMiddlewareArgs, DeathHandler } from "./server/context.js";
export { VERSION } from "./version.js";
export {
  Batch,
  BatchError,
  workflow,
  Workflow,
  type BatchOptions,
  type BatchEvent,
  type BatchStatus,
  type CallbackOptions,
  type FailurePolicy,
  type WorkflowOptions,
  type WorkflowStatus,
  type WorkflowHandle,
} from "./batch/index.js";
export type { CronDeclaration } from "./cron/index.js";
export {
  performLater,
  type PerformLaterOptions,
  type Enqueued,
  type ActiveJobContext,
  ActiveJobDeserializationError,
  RubyTime,
  RubyDate,
  RubyDuration,
  RubySymbol,
  RubyBigDecimal,
  RubyRange,
  RubyModule,
  RubyObject,
  RubyHash,
  GlobalId,
  symbolKeys,
  indifferentAccess,
} from "./activejob/index.js";
export { withCorrelationId, currentCorrelationId } from "./tracing/correlation.js";
export {
  workerAttributes,
  generatedQueueName,
  parseQuery,
  matches,
  WorkerRouter,
  configureRouting,
  type WorkerAttributeFields,
  type WorkerAttributes,
  type Urgency,
  type ResourceBoundary,
  type Query,
  type RoutingRule,
} from "./attributes/index.js";
