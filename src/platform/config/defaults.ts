/**
 * The one table of the core's defaults. Every tunable has its unit and the Sidekiq behaviour it mirrors.
 * Precedence when resolving options: CLI flag > config file > environment > these defaults. A feature's
 * settings are declared by its plug-in, with their defaults (defineSetting, settings.ts).
 */
import type { CronEntry } from "./cronEntry.js";
import type { RoutingRule } from "../attributes/WorkerRouter.js";
import type { SidekiqVersionSetting } from "../../wire/sidekiqVersion.js";

export interface Defaults {
  /** Redis URL; `rediss://` for TLS. Overridden by REDIS_URL, then the config file, then --redis-url. */
  readonly redisUrl: string;
  /** Concurrent job slots per capsule. Jobs are async, so slots are cheap; Sidekiq 6.x also used 10. */
  readonly concurrency: number;
  /** Seconds a graceful stop waits for running jobs before requeueing them (Sidekiq `-t`, 25). */
  readonly timeout: number;
  /** Seconds between heartbeats (Sidekiq 7+: 10; 6.x: 5). */
  readonly heartbeatInterval: number;
  /** Seconds the process hash and work hash live without a heartbeat (Sidekiq: 60 in every version). */
  readonly heartbeatTtl: number;
  /** Seconds a BRPOP blocks, which bounds how fast quiet/stop is noticed (Sidekiq BasicFetch::TIMEOUT). */
  readonly fetchTimeout: number;
  /** Average seconds between scheduler polls across the whole cluster (`average_scheduled_poll_interval`). */
  readonly averageScheduledPollInterval: number;
  /** Fixed average poll interval in seconds; replaces the process-count scaling when set. */
  readonly pollIntervalAverage: number | null;
  /** Retries when a job says `retry: true` (Sidekiq DEFAULT_MAX_RETRY_ATTEMPTS). */
  readonly maxRetries: number;
  /** Entries kept in the dead set (Sidekiq `dead_max_jobs`). */
  readonly deadMaxJobs: number;
  /** Seconds a dead job is kept: 180 days (Sidekiq `dead_timeout_in_seconds`). */
  readonly deadTimeoutInSeconds: number;
  /**
   * Largest serialized job accepted by the client, in bytes, after compression (5 MB, GitLab's limit).
   * Env TSQ_MAX_PAYLOAD_BYTES. See docs/job-size-and-kill-switches.md.
   */
  readonly maxPayloadBytes: number;
  /**
   * Bytes of JSON args above which the client compresses them the way GitLab does (100,000, GitLab's
   * threshold); 0 = never. Env TSQ_COMPRESS_THRESHOLD_BYTES.
   */
  readonly compressThresholdBytes: number;
  /**
   * Most bytes compressed args may inflate to, in a worker or tsqctl (100 MB): a cap against zip bombs.
   * The client refuses args bigger than this. Env TSQ_MAX_INFLATED_BYTES.
   */
  readonly maxInflatedBytes: number;
  /**
   * Sidekiq generation whose formats to write (src/wire/sidekiqVersion.ts): 6 and 7 write float epoch
   * seconds (always with a fraction), 8 integer epoch milliseconds; 7 writes Sidekiq 7's
   * execution-metrics keys, 6 and 8 Sidekiq 8's. `auto` reads the versions the Ruby processes publish in
   * `processes` at start and every heartbeat and writes what all of them read; with none, seconds and
   * Sidekiq 8's keys. tsq reads every format whatever this says.
   */
  readonly sidekiqVersion: SidekiqVersionSetting;
  /** Characters of an error message kept in a retried job (Sidekiq truncates to 10,000). */
  readonly maxErrorMessageLength: number;
  /**
   * Reliable fetch: a job is put back in its queue after its process died this many times within
   * `poisonPillWindow` seconds; the next time it is a poison pill and goes to the dead set instead.
   */
  readonly poisonPillRecoveries: number;
  /** Seconds over which recoveries of one job are counted (72 hours). */
  readonly poisonPillWindow: number;
  /**
   * Periodic job schedules from the config file's `cron:` section (job classes may add their own with
   * a `static cron`). Only the elected leader enqueues them. Default: none.
   */
  readonly cron: readonly CronEntry[];
  /**
   * GitLab-style routing rules (`routing_rules:`): `[query, queue]` pairs, first match picks the queue of
   * a push that names none. Default: none, so every class goes to its declared queue or `default`.
   */
  readonly routingRules: readonly RoutingRule[];
  /**
   * Write Sidekiq's per-class execution metrics (`j|…` counters, run-time histograms) in the layout
   * `sidekiqVersion` picks, 7's or 8's (Sidekiq's Metrics tab of that version and tsq's `/metrics` page
   * read them). Counted in memory and written once per heartbeat, so a job costs well under a
   * microsecond; Redis holds about 8 h of minutes (and, in 8's layout, 3 days of 10-minute rollups).
   */
  readonly executionMetrics: boolean;
  /**
   * Distinct values kept per metrics label taken from Redis or from payloads (`class`, `queue`), 1 to
   * 10,000; more fold into the value "other" (logged once per label). Each value costs a few dozen series
   * per process, so the default keeps a scrape of a fleet with a runaway class near a few MB.
   */
  readonly metricsMaxLabelValues: number;
}

/** Upper bound of `metricsMaxLabelValues` (every bound lives in bounds.ts). */
export { MAX_LABEL_VALUES } from "./bounds.js";

export const DEFAULTS = Object.freeze({
  redisUrl: "redis://127.0.0.1:6379/0",
  concurrency: 10,
  timeout: 25,
  heartbeatInterval: 10,
  heartbeatTtl: 60,
  fetchTimeout: 2,
  averageScheduledPollInterval: 5,
  pollIntervalAverage: null,
  maxRetries: 25,
  deadMaxJobs: 10_000,
  deadTimeoutInSeconds: 180 * 24 * 60 * 60,
  maxPayloadBytes: 5 * 1024 * 1024,
  compressThresholdBytes: 100_000,
  maxInflatedBytes: 100 * 1024 * 1024,
  sidekiqVersion: "auto",
  maxErrorMessageLength: 10_000,
  poisonPillRecoveries: 3,
  poisonPillWindow: 72 * 60 * 60,
  cron: Object.freeze([]),
  routingRules: Object.freeze([]),
  executionMetrics: true,
  metricsMaxLabelValues: 1000,
} satisfies Defaults) as Defaults;
