/**
 * ExecutionTracker: per-class run counts, failures, run time and a run-time histogram, counted in memory
 * and flushed by the Heartbeat (every beat and on stop) in one pipeline, in Sidekiq 7's or 8's metrics
 * layout (executionLayout.ts, chosen by `sidekiq_version`), as Sidekiq's `Metrics::ExecutionTracker`
 * flushes on `:beat` (and in 8, on `:exit`). So Sidekiq's own Metrics tab shows tsq jobs, and tsq's
 * shows both.
 *
 * A job costs a Map lookup and a few increments (no Redis command per job). Like Sidekiq, a flush
 * writes everything counted since the last one into the minute of the flush, and only successful runs
 * (and iterable jobs' interruptions) are timed: a failure's time says little about the class.
 */
import type { ChainableCommander } from "ioredis";
import { BUCKET_INTERVALS, EXECUTION_LAYOUTS, MID_TERM, SHORT_TERM, bucketIndex } from "../wire/executionLayout.js";
import type { MetricsLayout } from "../wire/sidekiqVersion.js";

/** What one class did since the last flush. */
interface ClassRuns {
  /** Milliseconds (fractional) summed over timed runs; undefined until one is timed. */
  ms: number | undefined;
  /** Executions, failures included (Sidekiq's `|p`). */
  p: number;
  /** Failures (Sidekiq's `|f`). */
  f: number;
  /** Timed runs per histogram bucket; allocated at the first timed run. */
  hist: Uint32Array | undefined;
}

/** The part of a Redis connection a flush needs (a TsqRedis or a plain ioredis client). */
export interface PipelineSource {
  pipeline(): ChainableCommander;
}

export class ExecutionTracker {
  private runs = new Map<string, ClassRuns>();

  /** A run of `className` that ended without raising (or an iterable job that saved its place), `ms` long. */
  succeeded(className: string, ms: number): void {
    const runs = this.of(className);
    runs.p++;
    runs.ms = (runs.ms ?? 0) + ms;
    (runs.hist ??= new Uint32Array(BUCKET_INTERVALS.length))[bucketIndex(ms)]!++;
  }

  /** A run of `className` that raised. */
  failed(className: string): void {
    const runs = this.of(className);
    runs.p++;
    runs.f++;
  }

  /** Classes counted since the last flush. */
  get pending(): number {
    return this.runs.size;
  }

  /**
   * Writes and forgets what was counted, filed in `layout` under the minute of `now`. Resolves to the
   * number of fields written (0: nothing to write, no round trip). What a failed write held is dropped,
   * as Sidekiq does: counting it again later could count it twice.
   */
  async flush(redis: PipelineSource, layoutName: MetricsLayout, now = new Date()): Promise<number> {
    if (this.runs.size === 0) return 0;
    const layout = EXECUTION_LAYOUTS[layoutName];
    const runs = this.runs;
    this.runs = new Map();
    const pipe = redis.pipeline();
    for (const [className, { hist }] of runs) {
      if (!hist) continue;
      const key = layout.histogramKey(className, now);
      const args: (string | number)[] = [key, "OVERFLOW", "SAT"];
      hist.forEach((n, i) => {
        if (n > 0) args.push("INCRBY", "u16", `#${i}`, n);
      });
      pipe.call("BITFIELD", ...args).expire(key, SHORT_TERM);
    }
    const rollup = layout.rollupKey(now);
    const buckets: [string, number][] = [[layout.minuteKey(now), SHORT_TERM]];
    if (rollup !== undefined) buckets.unshift([rollup, MID_TERM]);
    let fields = 0;
    for (const [key, ttl] of buckets) {
      for (const [className, { ms, p, f }] of runs) {
        // Sidekiq's counters are whole milliseconds (it times with an integer ms clock).
        if (ms !== undefined) pipe.hincrby(key, `${className}|ms`, Math.round(ms));
        if (f > 0) pipe.hincrby(key, `${className}|f`, f);
        pipe.hincrby(key, `${className}|p`, p);
        fields += (ms !== undefined ? 1 : 0) + (f > 0 ? 1 : 0) + 1;
      }
      pipe.expire(key, ttl);
    }
    const results = (await pipe.exec()) ?? [];
    for (const [error] of results) if (error) throw error;
    return fields;
  }

  private of(className: string): ClassRuns {
    let runs = this.runs.get(className);
    if (runs === undefined) {
      runs = { ms: undefined, p: 0, f: 0, hist: undefined };
      this.runs.set(className, runs);
    }
    return runs;
  }
}
