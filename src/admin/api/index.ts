/**
 * `tsq/api`: the admin API, mirroring `Sidekiq::API` over the same Redis layout, so it administers tsq
 * and Ruby Sidekiq processes alike. It is never loaded by a worker.
 *
 *   import { connectRedis, Stats, Queue, RetrySet, DeadSet, ProcessSet } from "tsq/api";
 *   const redis = connectRedis(process.env.REDIS_URL!);
 *   const { processed, enqueued } = await new Stats(redis).fetch();
 *   for await (const entry of new RetrySet(redis)) if (entry.errorClass === "Timeout") await entry.retry();
 *   await new ProcessSet(redis).quiet("host:1234:0123456789ab");
 *
 * Every class takes an ioredis connection (yours, or one from `connectRedis`) and never closes it.
 */
export { Stats, type StatsSnapshot, type StatsHistory, type StatName } from "./Stats.js";
export { Queue } from "./Queue.js";
export { JobRecord } from "./JobRecord.js";
export { JobSet, type JobSetOptions } from "./JobSet.js";
export { SortedEntry, type KillOptions } from "./SortedEntry.js";
export { ScheduledSet, RetrySet, DeadSet } from "./sets.js";
export { ProcessSet, type ProcessRecord, type ProcessSignal } from "./ProcessSet.js";
export { WorkSet, type WorkRecord } from "./WorkSet.js";
export { JobOutcomes, type StoredOutcome } from "./JobOutcomes.js";
export { ParkedJobs, type WaitingJob, type SleepingJob, type ParkedList } from "./ParkedJobs.js";
export { BatchSet } from "./BatchSet.js";
export { paceEach, type PaceOptions } from "./Pacer.js";
export { CronSchedules, type CronJson, type Scheduler } from "./CronSchedules.js";
export {
  ExecutionMetrics,
  METRICS_PERIODS,
  BUCKET_INTERVALS,
  BUCKET_LABELS,
  averageSeconds,
  isMetricsPeriod,
  type MetricsPeriod,
  type MetricsResult,
  type ClassMetrics,
  type MarkEntry,
} from "./ExecutionMetrics.js";
export { type BatchStatus } from "../../features/flow/batches/status.js";
export { connect as connectRedis, type TsqRedis } from "../../platform/redis/connection.js";
export { cancelIterable, iterationProgress, type IterationProgress } from "../../features/iterable/state.js";
