/**
 * tsq's public API. Everything a job module or an application needs; internals are not exported.
 * Importing it changes nothing (test/packageImport.test.ts checks so in a fresh process): a `Client` or
 * `Worker` built from it runs every built-in feature unless given `plugins` (a `Cluster`'s children,
 * unless the job module exports `plugins`), and the default client behind `performAsync` is the one the
 * app sets at boot with `configureClient()`.
 */
// What the features merge into JobOptions and Job (`uniqueFor`, `lock`, `expiresIn`, `result`,
// `this.progress`, `this.batch`, `this.workflow`, `this.activeJob`), the settings they add to
// ClientOptions (`reliablePush`, `concurrencyLimits`) and the events they add to a worker's JobEvents and
// a Client's ClientEvents reach an app's types through these bare imports: a declaration
// file keeps a bare import, not one used only for values (plugins.ts's). A test
// (test/types/types.test.ts) checks that every plugin.ts with a `declare module` is here.
import "./features/locks/enterprise-unique-jobs/plugin.js";
import "./features/locks/sidekiq-unique-jobs/plugin.js";
import "./features/locks/gitlab-deduplication/plugin.js";
import "./features/locks/gitlab-concurrency-limits/plugin.js";
import "./features/locks/enterprise-rate-limits/plugin.js";
import "./features/flow/kill-switches/plugin.js";
import "./features/flow/expiry/plugin.js";
import "./features/flow/batches/plugin.js";
import "./features/flow/reliable-push/plugin.js";
import "./features/durable/plugin.js";
import "./features/outcomes/plugin.js";
import "./features/activejob/plugin.js";

export { builtinPlugins } from "./plugins.js";
export {
  Worker,
  type WorkerConfig,
  type WorkerEvents,
  type JobEventInfo,
  type JobEndInfo,
  type JobProgressInfo,
} from "./library/Worker.js";
export type { EndStatus, FinalStatus } from "./server/hooks.js";
export {
  Cluster,
  type ClusterConfig,
  type ClusterEvents,
  type ChildInfo,
  type ChildExitInfo,
} from "./library/Cluster.js";
export {
  definePlugin,
  defineSetting,
  type Plugin,
  type PluginLocks,
  type PluginFetch,
  type FetchOrder,
  type Setting,
  type SettingSpec,
  type ServerHooks,
  type Service,
  type ResolvedClass,
  type StoredJobs,
  type JobEnd,
  type JobEvents,
  type PluginEvents,
  type MetricsSeam,
  type FeatureCounter,
  type FeatureGauge,
} from "./server/plugin.js";
export type { ClientEvents } from "./client/events.js";
export type { ServerContext } from "./server/context.js";
export { luaScript, type LuaScript, type LuaSource } from "./platform/redis/luaScript.js";
export type { WorkerOptions } from "./platform/config/options.js";
export type { ClientPlugin, ClientHooks, AlternateWrite, PreparedJob } from "./client/plugin.js";
export { Job, Setter, type SetOptions } from "./client/Job.js";
export { LimitedCapacityJob } from "./features/locks/gitlab-concurrency-limits/LimitedCapacityJob.js";
export {
  Limiter,
  OverLimitError,
  type LimiterOptions,
  type ConcurrentOptions,
  type Grant,
  type Backoff,
  type Interval,
} from "./features/locks/enterprise-rate-limits/index.js";
export type { JobOptions } from "./client/options.js";
export type { DeduplicateOptions } from "./features/locks/gitlab-deduplication/policy.js";
export {
  Unique,
  type LockedOptions,
  type UniqueOptions,
  type UniqueUntil,
} from "./features/locks/enterprise-unique-jobs/index.js";
export {
  rubyFloat,
  RubyFloat,
  lockDigest,
  SujConflictError,
  type SujOptions,
  type SujLockType,
  type SujStrategy,
} from "./features/locks/sidekiq-unique-jobs/index.js"; // sidekiq-unique-jobs interop (docs/sidekiq-unique-jobs.md)
export type { ClientOptions, ClientMiddlewareArgs, PushItem, BulkItem } from "./client/Client.js";
export { Client, configureClient } from "./library/Client.js";
export { defaultClient, closeDefaultClient } from "./client/defaultClient.js";
export { ShardMap, DEFAULT_SHARD, type ShardConfig } from "./platform/shards/ShardMap.js";
export { Chain, type Middleware, type Next } from "./platform/Chain.js";
export type { JobPayload, JsonValue } from "./wire/payload.js";
export {
  TsqError,
  ArgumentError,
  PayloadTooLargeError,
  ConfigError,
  UnknownJobError,
  InvalidPayloadError,
  EnqueueError,
  RedisUnreachableError,
  JobInterrupted,
  JobSuspended,
} from "./wire/errors.js";
export { ConcurrencyLimitFullError } from "./features/locks/gitlab-concurrency-limits/errors.js";
export { IterationStateError } from "./features/iterable/errors.js";
export {
  IterableJob,
  rangeEnumerator,
  arrayEnumerator,
  cancelIterable,
  type Enumerator,
  type Step,
  type IterationState,
} from "./features/iterable/index.js";
export {
  waitUntilFinished,
  OutcomeWatcher,
  WaitTimeoutError,
  DEFAULT_MAX_RESULT_BYTES,
  type WaitUntilFinishedOptions,
  type WatcherOptions,
  type WaitOptions,
  type OutcomeFilter,
  type JobResult,
  type OutcomeEvent,
  type ProgressEvent,
  type OutcomeStatus,
  type OutcomeError,
  type ResultOptions,
  type Progress,
} from "./features/outcomes/index.js";
export {
  DurableJob,
  signal,
  cancel,
  EventTimeoutError,
  JobTimeoutError,
  JobCancelledError,
  StepOrderError,
  JournalError,
  JournalLostError,
  type StepContext,
  type WaitForOptions,
  type SignalOptions,
  type CancelResult,
} from "./features/durable/index.js";
export { redactUrl } from "./platform/redis/connection.js";
export { logger, configureLogger, type Logger } from "./platform/logger.js";
export { configureServer, type ServerConfig, type LifecycleEvent } from "./server/serverConfig.js";
export type { ServerMiddlewareArgs, DeathHandler } from "./server/context.js";
export { VERSION } from "./wire/version.js";
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
} from "./features/flow/batches/index.js";
export type { CronDeclaration } from "./features/cron/index.js";
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
} from "./features/activejob/index.js";
export { withCorrelationId, currentCorrelationId } from "./platform/correlation.js";
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
} from "./platform/attributes/index.js";
