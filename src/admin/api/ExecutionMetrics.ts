/**
 * Per-class execution metrics, read as `Sidekiq::Metrics::Query` does (`top_jobs`, `for_job`) from
 * both layouts (src/wire/executionLayout.ts): Sidekiq 8's keys, written by Ruby 8 and by tsq workers
 * set to 8 (or to auto without Ruby 7), and Sidekiq 7's, written by Ruby 7 and by tsq workers following
 * it; a worker writes one layout at a time, so summing both counts every run once. Periods up to 8 h read
 * the 1-minute keys (and, for one class, its histograms); 24–72 h read Sidekiq 8's 10-minute rollups and
 * fold in Sidekiq 7's minutes, which live 8 h.
 */
import type { Redis } from "ioredis";
import { deployMarksKey } from "../../wire/keys.js";
import {
  BUCKET_INTERVALS,
  BUCKET_LABELS,
  EXECUTION_LAYOUTS,
  HISTOGRAM_FETCH,
  SHORT_TERM,
} from "../../wire/executionLayout.js";

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
  /** Every counters key to read, with the bucket (index into `times`) it adds to. */
  reads: { key: string; age: number }[];
}

export class ExecutionMetrics {
  constructor(private readonly redis: Redis) {}

  /** Every class with data in the period, optionally only those whose name contains `filter` (any case). */
  async top(period: MetricsPeriod, filter = "", now = new Date()): Promise<MetricsResult> {
    const plan = planOf(period, now);
    const pipe = this.redis.pipeline();
    for (const { key } of plan.reads) pipe.hgetall(key);
    const hashes = results(await pipe.exec()) as Record<string, string>[];
    const needle = filter.toLowerCase();
    const result = await this.result(plan);
    const last = plan.times.length - 1;
    hashes.forEach((hash, i) => {
      for (const [field, value] of Object.entries(hash)) {
        const bar = field.lastIndexOf("|");
        const name = field.slice(0, bar);
        if (bar < 1 || (needle !== "" && !name.toLowerCase().includes(needle))) continue;
        add(result, name, field.slice(bar + 1), last - plan.reads[i]!.age, Number(value));
      }
    });
    return result;
  }

  /** One class over the period, with its per-minute histograms (both layouts summed) for periods up to 8 h. */
  async forClass(className: string, period: MetricsPeriod, now = new Date()): Promise<MetricsResult> {
    const plan = planOf(period, now);
    const pipe = this.redis.pipeline();
    for (const { key } of plan.reads) pipe.hmget(key, `${className}|ms`, `${className}|p`, `${className}|f`);
    const minutely = plan.granularity === "minutely";
    const layouts = Object.values(EXECUTION_LAYOUTS);
    if (minutely)
      for (const time of plan.times)
        for (const layout of layouts)
          pipe.call("BITFIELD_RO", layout.histogramKey(className, time), ...HISTOGRAM_FETCH);
    const raw = (await pipe.exec()) ?? [];
    const replies = results(raw.slice(0, plan.reads.length));
    const result = await this.result(plan);
    const last = plan.times.length - 1;
    plan.reads.forEach(({ age }, i) => {
      const [ms, p, f] = replies[i] as (string | null)[];
      for (const [metric, value] of [
        ["ms", ms],
        ["p", p],
        ["f", f],
      ] as const)
        if (value !== null) add(result, className, metric, last - age, Number(value));
    });
    if (minutely) {
      const entry = classEntry(result, className);
      const first = plan.reads.length;
      entry.histograms = plan.times
        .map((_, age) => {
          const sum = new Array<number>(BUCKET_INTERVALS.length).fill(0);
          for (let l = 0; l < layouts.length; l++) {
            // A key of another type under a histogram's name (WRONGTYPE) counts as an empty histogram.
            const [error, counters] = raw[first + age * layouts.length + l] ?? [null, []];
            if (!error) (counters as number[]).forEach((n, i) => (sum[i]! += Number(n)));
          }
          return sum;
        })
        .reverse();
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
  const { sidekiq7, sidekiq8 } = EXECUTION_LAYOUTS;
  const reads: Plan["reads"] = [];
  if (granularity === "minutely") {
    times.forEach((time, age) =>
      reads.push({ key: sidekiq8.minuteKey(time), age }, { key: sidekiq7.minuteKey(time), age }),
    );
    return { granularity, times, reads };
  }
  times.forEach((time, age) => reads.push({ key: sidekiq8.rollupKey(time)!, age }));
  // Sidekiq 7 keeps no rollup: its minutes of the last 8 h (all it keeps), each in its 10-minute bucket.
  const tens = Math.floor(now.getTime() / 600_000);
  for (let i = 0; i < SHORT_TERM / 60; i++) {
    const minute = new Date(now.getTime() - i * 60_000);
    const age = tens - Math.floor(minute.getTime() / 600_000);
    if (age < count) reads.push({ key: sidekiq7.minuteKey(minute), age });
  }
  return { granularity, times, reads };
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
