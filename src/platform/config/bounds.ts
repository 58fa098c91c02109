/**
 * The one table of limits for every number a user can set (config file, flags, environment, `new Worker`).
 * Each bound exists because a bigger value breaks something rather than merely being unusual:
 *
 *   - durations that become a `setTimeout` (heartbeat, polls, the stop timeout) stay far below Node's
 *     2^31-1 ms timer limit, past which Node fires the timer after 1 ms instead (a 3,000,000 s
 *     heartbeat_interval turned into thousands of heartbeats a second);
 *   - counts that size allocations (concurrency, queue weights) stay where the slots still fit in memory;
 *   - byte sizes stay below Redis's 512 MB string and V8's longest string (about 512 M characters).
 *
 * docs/config.md lists every bound; keep the two in step. A feature's settings state their bounds where
 * they are declared (defineSetting, platform/config/settings.ts), with these same limits.
 */

export interface Bound {
  /** Smallest allowed value. */
  readonly min: number;
  /** True: the value must be strictly above `min` (a duration of 0 s means nothing). */
  readonly above?: boolean;
  /** Largest allowed value. */
  readonly max: number;
  readonly integer: boolean;
  /** What the number counts, shown in messages ("seconds", "bytes", "job slots"). */
  readonly unit: string;
}

/** Longest delay Node's timers honour, in ms; a longer one fires after 1 ms (TimeoutOverflowWarning). */
export const MAX_TIMER_MS = 2 ** 31 - 1;
/** Most job slots per capsule or Worker: beyond this the slots cost memory for no throughput. */
export const MAX_CONCURRENCY = 10_000;
/** Longest graceful-stop wait, seconds (a day): no deploy waits longer, and it stays a valid timer. */
export const MAX_TIMEOUT = 86_400;
/** Longest interval between periodic actions (heartbeat, polls, renewals), seconds: a day. */
export const MAX_INTERVAL = 86_400;
/** Largest queue weight: a weighted capsule repeats each queue `weight` times per fetch. */
export const MAX_QUEUE_WEIGHT = 1_000;
/** Largest byte size (500 MB): below Redis's 512 MB string and V8's longest string. */
export const MAX_BYTES = 500 * 1024 * 1024;
/** Distinct values per metrics label; above it a scrape costs hundreds of MB again. */
export const MAX_LABEL_VALUES = 10_000;
/** Most children per group `tsq-cluster` forks. */
export const MAX_PROCESSES = 1_024;

const seconds = (max: number): Bound => ({ min: 0, above: true, max, integer: false, unit: "seconds" });
const count = (min: number, max: number, unit: string): Bound => ({ min, max, integer: true, unit });

/** Bounds by setting name (camelCase, as in FileSettings and WorkerOptions). */
export const BOUNDS = Object.freeze({
  concurrency: count(1, MAX_CONCURRENCY, "job slots"),
  timeout: seconds(MAX_TIMEOUT),
  heartbeatInterval: seconds(MAX_INTERVAL),
  heartbeatTtl: seconds(MAX_INTERVAL),
  fetchTimeout: seconds(MAX_INTERVAL),
  averageScheduledPollInterval: seconds(MAX_INTERVAL),
  pollIntervalAverage: seconds(MAX_INTERVAL),
  // A retry's delay grows as count^4 s: retry 1,000 already waits ~30,000 years.
  maxRetries: count(0, 1_000, "retries"),
  deadMaxJobs: count(0, 10_000_000, "jobs"),
  // Ten years; compared with scores in Redis, never a timer.
  deadTimeoutInSeconds: seconds(10 * 365 * 24 * 60 * 60),
  poisonPillRecoveries: count(1, 1_000, "recoveries"),
  // Thirty days; a Redis expiry, never a timer.
  poisonPillWindow: seconds(30 * 24 * 60 * 60),
  maxPayloadBytes: count(1, MAX_BYTES, "bytes"),
  compressThresholdBytes: count(0, MAX_BYTES, "bytes"),
  maxInflatedBytes: count(1, MAX_BYTES, "bytes"),
  metricsMaxLabelValues: count(1, MAX_LABEL_VALUES, "distinct values per metrics label"),
  // Redis's SELECT takes a 32-bit index.
  db: count(0, 2 ** 31 - 1, "database index"),
  processes: count(1, MAX_PROCESSES, "children per group"),
  maxConcurrency: count(0, MAX_CONCURRENCY, "job slots, 0 = no maximum"),
  minConcurrency: count(0, MAX_CONCURRENCY, "job slots"),
  // A terabyte: a larger RSS limit is no limit.
  maxMemoryMb: { min: 0, above: true, max: 1_048_576, integer: false, unit: "MB" },
  hangThreshold: seconds(MAX_INTERVAL),
  maxAbandoned: count(0, MAX_CONCURRENCY, "abandoned jobs still running, 0 = no limit"),
  weight: count(1, MAX_QUEUE_WEIGHT, "queue weight"),
} satisfies Record<string, Bound>);

export type BoundName = keyof typeof BOUNDS;

export function withinBound(value: unknown, bound: Bound): value is number {
  if (typeof value !== "number" || !Number.isFinite(value)) return false;
  if (bound.integer && !Number.isInteger(value)) return false;
  return (bound.above ? value > bound.min : value >= bound.min) && value <= bound.max;
}

/** "an integer from 1 to 10000 (job slots)", "a number of seconds above 0 and at most 86400". */
export function describeBound(bound: Bound): string {
  if (bound.integer) return `an integer from ${bound.min} to ${bound.max}${bound.unit ? ` (${bound.unit})` : ""}`;
  const low = bound.above ? `above ${bound.min}` : `from ${bound.min}`;
  return `${bound.unit ? `a number of ${bound.unit}` : "a number"} ${low} and at most ${bound.max}`;
}

/** How a bad number reads in a message: NaN and Infinity by name (JSON would say null). */
export function showNumber(value: unknown): string {
  return typeof value === "number" ? String(value) : (JSON.stringify(value) ?? typeof value);
}
