/**
 * The execution-metrics layouts of Sidekiq 7 and 8 (lib/sidekiq/metrics/{shared,tracking,query}.rb of
 * 7.3 and 8.0), shared by the worker that writes one of them (ExecutionTracker, as `sidekiq_version`
 * says: src/wire/sidekiqVersion.ts) and the readers, which read both (tsq/api ExecutionMetrics, the web
 * Metrics page, `tsqctl metrics`), so a fleet of Ruby 7, Ruby 8 and tsq processes shows as one. All
 * times are UTC. At 2025-02-14 08:43:
 *
 *   Sidekiq 8
 *   j|250214|8:43        HASH   one minute: HardJob|ms 1234  HardJob|p 10  HardJob|f 1   EXPIRE 8 h
 *   j|250214|8:4         HASH   the 10-minute rollup (minutes 40-49), same fields         EXPIRE 3 d
 *   h|HardJob-14-8:43    STRING BITFIELD of 26 u16 counters, run times of successes      EXPIRE 8 h
 *
 *   Sidekiq 7 (no rollup: its Metrics tab shows at most 8 h)
 *   j|20250214|8:43      HASH   one minute, same fields                                   EXPIRE 8 h
 *   HardJob-14-08:43     STRING the same histogram                                       EXPIRE 8 h
 */
import type { MetricsLayout } from "./sidekiqVersion.js";
import { executionCountsKey, executionHistogramKey, sidekiq7HistogramKey } from "./keys.js";

/**
 * Upper bounds in ms of the 26 histogram buckets: a run of `ms` goes to the first index with
 * `ms < bound` (Sidekiq's `Histogram::BUCKET_INTERVALS`; the last one catches everything).
 */
export const BUCKET_INTERVALS: readonly number[] = Object.freeze([
  20, 30, 45, 65, 100, 150, 225, 335, 500, 750, 1100, 1700, 2500, 3800, 5750, 8500, 13000, 20000, 30000, 45000, 65000,
  100000, 150000, 225000, 335000, 1e20,
]);

/** Sidekiq's labels of the same buckets. */
export const BUCKET_LABELS: readonly string[] = Object.freeze([
  "20ms",
  "30ms",
  "45ms",
  "65ms",
  "100ms",
  "150ms",
  "225ms",
  "335ms",
  "500ms",
  "750ms",
  "1.1s",
  "1.7s",
  "2.5s",
  "3.8s",
  "5.75s",
  "8.5s",
  "13s",
  "20s",
  "30s",
  "45s",
  "65s",
  "100s",
  "150s",
  "225s",
  "335s",
  "Slow",
]);

/** Seconds the 1-minute counters and the histograms live (Sidekiq 7 and 8 `SHORT_TERM`, `HISTOGRAM_TTL`). */
export const SHORT_TERM = 8 * 60 * 60;
/** Seconds the 10-minute counters live (Sidekiq 8 `MID_TERM`). */
export const MID_TERM = 3 * 24 * 60 * 60;

/** The histogram index of a run of `ms` milliseconds (a fraction is fine: the bounds are integers). */
export function bucketIndex(ms: number): number {
  // Most jobs are fast: one comparison for them.
  if (ms < 20) return 0;
  let i = 1;
  while (ms >= BUCKET_INTERVALS[i]!) i++;
  return i;
}

const pad2 = (n: number): string => (n < 10 ? `0${n}` : String(n));

/** `%y%m%d|%-H:%M` of `time` in UTC: the 1-minute bucket, e.g. `250214|8:03`. */
export function minuteBucket(time: Date): string {
  const y = pad2(time.getUTCFullYear() % 100);
  return `${y}${pad2(time.getUTCMonth() + 1)}${pad2(time.getUTCDate())}|${time.getUTCHours()}:${pad2(time.getUTCMinutes())}`;
}

/** The 10-minute bucket: the minute bucket without its last digit, e.g. `250214|8:0` for 8:00-8:09. */
export function tenMinuteBucket(time: Date): string {
  return minuteBucket(time).slice(0, -1);
}

/** `%-d-%-H:%-M` of `time` in UTC: the histogram window, e.g. `14-8:3` (day of month, all unpadded). */
export function histogramWindow(time: Date): string {
  return `${time.getUTCDate()}-${time.getUTCHours()}:${time.getUTCMinutes()}`;
}

/** `%Y%m%d|%-H:%-M` of `time` in UTC: Sidekiq 7's minute bucket, e.g. `20250214|8:3`. */
export function sidekiq7MinuteBucket(time: Date): string {
  const date = `${time.getUTCFullYear()}${pad2(time.getUTCMonth() + 1)}${pad2(time.getUTCDate())}`;
  return `${date}|${time.getUTCHours()}:${time.getUTCMinutes()}`;
}

/** `%d-%H:%-M` of `time` in UTC: Sidekiq 7's histogram window, e.g. `14-08:3` (day and hour padded). */
export function sidekiq7HistogramWindow(time: Date): string {
  return `${pad2(time.getUTCDate())}-${pad2(time.getUTCHours())}:${time.getUTCMinutes()}`;
}

/** Where one generation keeps the counters and histograms of a moment. */
export interface ExecutionLayout {
  readonly name: MetricsLayout;
  /** The 1-minute counters holding `time`. */
  minuteKey(time: Date): string;
  /** The 10-minute counters holding `time`; undefined where the layout keeps none (Sidekiq 7). */
  rollupKey(time: Date): string | undefined;
  /** The run-time histogram of `className` for the minute of `time`. */
  histogramKey(className: string, time: Date): string;
}

export const EXECUTION_LAYOUTS: Readonly<Record<MetricsLayout, ExecutionLayout>> = Object.freeze({
  sidekiq8: Object.freeze({
    name: "sidekiq8",
    minuteKey: (time: Date) => executionCountsKey(minuteBucket(time)),
    rollupKey: (time: Date) => executionCountsKey(tenMinuteBucket(time)),
    histogramKey: (className: string, time: Date) => executionHistogramKey(className, histogramWindow(time)),
  }),
  sidekiq7: Object.freeze({
    name: "sidekiq7",
    minuteKey: (time: Date) => executionCountsKey(sidekiq7MinuteBucket(time)),
    rollupKey: () => undefined,
    histogramKey: (className: string, time: Date) => sidekiq7HistogramKey(className, sidekiq7HistogramWindow(time)),
  }),
});

/** `BITFIELD_RO key GET u16 #0 … GET u16 #25`: every bucket of one histogram key. */
export const HISTOGRAM_FETCH: readonly string[] = Object.freeze(
  BUCKET_INTERVALS.flatMap((_, i) => ["GET", "u16", `#${i}`]),
);
