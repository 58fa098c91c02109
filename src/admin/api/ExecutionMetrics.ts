/**
 * Per-class execution metrics, read from Sidekiq 8's keys as `Sidekiq::Metrics::Query` does
 * (`top_jobs`, `for_job`): written by tsq workers and by Ruby Sidekiq 8 alike. Periods up to 8 h read
 * the 1-minute keys (and, for one class, its histograms); 24–72 h read the 10-minute rollups.
 */
import type { Redis } from "ioredis";
import { deployMarksKey, executionCountsKey, executionHistogramKey } from "../../wire/keys.js";
import {
  BUCKET_INTERVALS,
  BUCKET_LABELS,
  HISTOGRAM_FETCH,
  histogramWindow,
  minuteBucket,
  tenMinuteBucket,
} from "../../metrics/executionLayout.js";

/** Sidekiq Web's `METRICS_PERIODS`: a count of 1-minute keys, or hours of 10-minute keys. */
export const METRICS_PERIODS = Object.freeze({
  "1h": { minutes: 60 },
  "2h": { minutes: 120 },
  "4h": { minutes: 240 },
  "8h": { minutes: 480 },
  "24h": { hours: 24 },
  "48h": { hours: 48 },
  "72h": { hours: 72 },
} as const);

export type MetricsPeriod = keyof typeof METRICS_PERIODS;

export function isMetricsPeriod(text: string): text is MetricsPeriod {
  return Object.hasOwn(METRICS_PERIODS, text);
}

/** One class over the period: totals, and per bucket (oldest first, aligned with `buckets`). */
export interface ClassMetrics {
  /** Runs, failures included. */
  p: number;
  f: number;
  /** Milliseconds of the successful runs. */
  ms: number;
  series: { p: number[]; f: number[]; ms: number[] };
  /** Per minute (oldest first), the 26 histogram counters, fastest bucket first; only for `forClass` up to 8 h. */
  histograms?: number[][];
}

export interface MarkEntry {
  /** ISO time of the deploy (floored to the minute). */
  time: string;
  label: string;
  /** Index into `buckets` it falls in. */
  bucket: number;
}

export interface MetricsResult {
  granularity: "minutely" | "hourly";
  startsAt: Date;
  endsAt: Date;
  /** ISO times of the buckets, oldest first (floored to the minute or the 10 minutes). */
  buckets: string[];
  classes: Map<string, ClassMetrics>;
  /** Deploy marks (`<YYYYmmdd>-marks`, written by `Sidekiq::Deploy`) within the period. */
  marks: MarkEntry[];
}

/** Average seconds of a successful run (Sidekiq's `total_avg`), 0 without one. */
export function averageSeconds(c: Pick<ClassMetrics, "p" | "f" | "ms">): number {
  const done = c.p - c.f;
  return done > 0 ? c.ms / done / 1000 : 0;
}

interface Plan {
  granularity: MetricsResult["granularity"];
  /** Bucket times, newest first, as Sidekiq steps back from now. */
  times: Date[];
  keys: string[];
}

export class ExecutionMetrics {
  constructor(private readonly redis: Redis) {}

  /** Every class with data in the period, optionally only those whose name contains `filter` (any case). */
  async top(period: MetricsPeriod, filter = "", now = new Date()): Promise<MetricsResult> {
    const plan = planOf(period, now);
    const pipe = this.redis.pipeline();
    for (const key of plan.keys) pipe.hgetall(key);
    const hashes = results(await pipe.exec()) as Record<string, string>[];
    const needle = filter.toLowerCase();
    const result = await this.result(plan);
    hashes.forEach((hash, age) => {
      for (const [field, value] of Object.entries(hash)) {
        const bar = field.lastIndexOf("|");
        const name = field.slice(0, bar);
        if (bar < 1 || (needle !== "" && !name.toLowerCase().includes(needle))) continue;
        add(result, name, field.slice(bar + 1), plan.times.length - 1 - age, Number(value));
      }
    });
    return result;
  }

  /** One class over the period, with its per-minute histograms for periods up to 8 h. */
  async forClass(className: string, period: MetricsPeriod, now = new Date()): Promise<MetricsResult> {
    const plan = planOf(period, now);
    const pipe = this.redis.pipeline();
    for (const key of plan.keys) pipe.hmget(key, `${className}|ms`, `${className}|p`, `${className}|f`);
    const minutely = plan.granularity === "minutely";
    if (minutely)
      for (const time of plan.times)
        pipe.call("BITFIELD_RO", executionHistogramKey(className, histogramWindow(time)), ...HISTOGRAM_FETCH);
    const replies = results(await pipe.exec());
    const result = await this.result(plan);
    const n = plan.times.length;
    for (let age = 0; age < n; age++) {
      const [ms, p, f] = replies[age] as (string | null)[];
      const at = n - 1 - age;
      for (const [metric, value] of [
        ["ms", ms],
        ["p", p],
        ["f", f],
      ] as const)
        if (value !== null) add(result, className, metric, at, Number(value));
    }
    if (minutely) {
      const entry = classEntry(result, className);
      entry.histograms = plan.times.map((_, age) => (replies[n + age] as number[]).map(Number)).reverse();
    }
    return result;
  }

  private async result(plan: Plan): Promise<MetricsResult> {
    const buckets = [...plan.times].reverse().map((t) => floorIso(t, plan.granularity));
    const startsAt = new Date(plan.times.at(-1)!.getTime() - stride(plan.granularity));
    const endsAt = plan.times[0]!;
    return {
      granularity: plan.granularity,
      startsAt,
      endsAt,
      buckets,
      classes: new Map(),
      marks: await this.marks(startsAt, endsAt, plan.granularity, buckets),
    };
  }

  private async marks(from: Date, to: Date, granularity: Plan["granularity"], buckets: string[]): Promise<MarkEntry[]> {
    const pipe = this.redis.pipeline();
    const day = new Date(Date.UTC(from.getUTCFullYear(), from.getUTCMonth(), from.getUTCDate()));
    for (; day <= to; day.setUTCDate(day.getUTCDate() + 1)) pipe.hgetall(deployMarksKey(day));
    const marks: MarkEntry[] = [];
    for (const hash of results(await pipe.exec()) as Record<string, string>[]) {
      for (const [time, label] of Object.entries(hash)) {
        const at = new Date(time);
        if (Number.isNaN(at.getTime()) || at < from || at > to) continue;
        marks.push({ time: at.toISOString(), label, bucket: buckets.indexOf(floorIso(at, granularity)) });
      }
    }
    return marks.sort((a, b) => a.time.localeCompare(b.time));
  }
}

function planOf(period: MetricsPeriod, now: Date): Plan {
  const spec: { minutes?: number; hours?: number } = METRICS_PERIODS[period];
  const granularity = spec.hours ? "hourly" : "minutely";
  const count = spec.hours ? spec.hours * 6 : spec.minutes!;
  const times: Date[] = [];
  for (let i = 0; i < count; i++) times.push(new Date(now.getTime() - i * stride(granularity)));
  const name = granularity === "hourly" ? tenMinuteBucket : minuteBucket;
  return { granularity, times, keys: times.map((t) => executionCountsKey(name(t))) };
}

/** Milliseconds between buckets. */
function stride(granularity: Plan["granularity"]): number {
  return granularity === "hourly" ? 600_000 : 60_000;
}

/** Sidekiq's `bkt_time_s`: the time floored to its bucket, ISO 8601 without milliseconds. */
function floorIso(time: Date, granularity: Plan["granularity"]): string {
  const ms = time.getTime();
  return new Date(ms - (ms % stride(granularity))).toISOString().replace(".000Z", "Z");
}

function classEntry(result: MetricsResult, name: string): ClassMetrics {
  let entry = result.classes.get(name);
  if (!entry) {
    const zeros = () => new Array<number>(result.buckets.length).fill(0);
    entry = { p: 0, f: 0, ms: 0, series: { p: zeros(), f: zeros(), ms: zeros() } };
    result.classes.set(name, entry);
  }
  return entry;
}

function add(result: MetricsResult, name: string, metric: string, at: number, value: number): void {
  if ((metric !== "p" && metric !== "f" && metric !== "ms") || !Number.isFinite(value)) return;
  const entry = classEntry(result, name);
  entry[metric] += value;
  entry.series[metric][at]! += value;
}

function results(replies: [Error | null, unknown][] | null): unknown[] {
  return (replies ?? []).map(([error, value]) => {
    if (error) throw error;
    return value;
  });
}

/** The histogram buckets: upper bounds in ms (the last is "slower than 335 s") and Sidekiq's labels. */
export { BUCKET_INTERVALS, BUCKET_LABELS };
