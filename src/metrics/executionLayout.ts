/**
 * Sidekiq 8's execution-metrics layout (lib/sidekiq/metrics/{shared,tracking,query}.rb), shared by the
 * worker that writes it (ExecutionTracker) and the readers (tsq/api ExecutionMetrics, the web Metrics
 * page), so tsq jobs show on Sidekiq's own Metrics page and Ruby jobs on tsq's. All times are UTC.
 *
 *   j|250214|8:43        HASH   one minute: HardJob|ms 1234  HardJob|p 10  HardJob|f 1   EXPIRE 8 h
 *   j|250214|8:4         HASH   the 10-minute rollup (minutes 40-49), same fields         EXPIRE 3 d
 *   h|HardJob-14-8:43    STRING BITFIELD of 26 u16 counters, run times of successes      EXPIRE 8 h
 */

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

/** Seconds the 1-minute counters and the histograms live (Sidekiq `SHORT_TERM`, `HISTOGRAM_TTL`). */
export const SHORT_TERM = 8 * 60 * 60;
/** Seconds the 10-minute counters live (Sidekiq `MID_TERM`). */
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

/** `BITFIELD_RO key GET u16 #0 … GET u16 #25`: every bucket of one histogram key. */
export const HISTOGRAM_FETCH: readonly string[] = Object.freeze(
  BUCKET_INTERVALS.flatMap((_, i) => ["GET", "u16", `#${i}`]),
);
