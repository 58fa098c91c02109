/**
 * Labelled counters and histograms for the per-job metrics, kept as plain numbers and rendered straight
 * into MetricFamily JSON (prom-client's `getMetricsAsJSON()` shape, so the output is the same).
 *
 * Why not prom-client's own: its `observe()`/`inc()` validate and hash the label object on every call.
 * At 100,000 jobs/s that was a tenth of a cluster child's CPU plus the garbage it left. Here the caller
 * looks a series up once (per queue × class) and then only adds numbers.
 */
import type { MetricFamily, Sample } from "./exposition.js";

type LabelValues = Record<string, string>;

export class CounterSeries {
  value = 0;
  /** Changed since the family last rendered it (a child sends only changed series). */
  dirty = true;
  constructor(readonly labels: LabelValues) {}

  inc(): void {
    this.value += 1;
    this.dirty = true;
  }
}

export class HistogramSeries {
  /** Non-cumulative count per bucket; the last slot is +Inf. */
  readonly counts: Float64Array;
  sum = 0;
  count = 0;
  dirty = true;

  constructor(
    readonly labels: LabelValues,
    private readonly bounds: readonly number[],
  ) {
    this.counts = new Float64Array(bounds.length + 1);
  }

  /** `value` in the family's unit (seconds); Prometheus buckets are `le`, so a value on a bound counts in it. */
  observe(value: number): void {
    const bounds = this.bounds;
    let i = 0;
    while (i < bounds.length && value > bounds[i]!) i++;
    this.counts[i]! += 1;
    this.sum += value;
    this.count += 1;
    this.dirty = true;
  }
}

/** One metric name; series are created on first use and live as long as the process. */
abstract class Family<S extends { labels: LabelValues; dirty: boolean }> {
  private readonly series = new Map<string, S>();

  constructor(
    readonly name: string,
    readonly help: string,
  ) {}

  /** Looked up once per label set by the caller, which keeps the series. */
  get(labels: LabelValues): S {
    const key = JSON.stringify(labels);
    let found = this.series.get(key);
    if (!found) {
      found = this.create(labels);
      this.series.set(key, found);
    }
    return found;
  }

  /** Every series (`changedOnly`: those changed since the last call), each marked as rendered. */
  protected *take(changedOnly: boolean): Generator<S> {
    for (const s of this.series.values()) {
      if (changedOnly && !s.dirty) continue;
      s.dirty = false;
      yield s;
    }
  }

  protected abstract create(labels: LabelValues): S;
  /** `changedOnly`: only series changed since the last render, for a child's delta snapshot. */
  abstract family(changedOnly?: boolean): MetricFamily;
}

export class CounterFamily extends Family<CounterSeries> {
  protected create(labels: LabelValues): CounterSeries {
    return new CounterSeries(labels);
  }

  family(changedOnly = false): MetricFamily {
    const values: Sample[] = [];
    for (const s of this.take(changedOnly)) values.push({ value: s.value, labels: { ...s.labels } });
    return { name: this.name, help: this.help, type: "counter", aggregator: "sum", values };
  }
}

export class HistogramFamily extends Family<HistogramSeries> {
  constructor(
    name: string,
    help: string,
    private readonly bounds: readonly number[],
  ) {
    super(name, help);
  }

  protected create(labels: LabelValues): HistogramSeries {
    return new HistogramSeries(labels, this.bounds);
  }

  /** Buckets cumulative, `le` first (as prom-client writes them), then +Inf, `_sum` and `_count`. */
  family(changedOnly = false): MetricFamily {
    const values: Sample[] = [];
    const bucket = `${this.name}_bucket`;
    for (const s of this.take(changedOnly)) {
      let running = 0;
      this.bounds.forEach((le, i) => {
        running += s.counts[i]!;
        values.push({ value: running, labels: { le, ...s.labels }, metricName: bucket });
      });
      values.push({ value: s.count, labels: { le: "+Inf", ...s.labels }, metricName: bucket });
      values.push({ value: s.sum, labels: { ...s.labels }, metricName: `${this.name}_sum` });
      values.push({ value: s.count, labels: { ...s.labels }, metricName: `${this.name}_count` });
    }
    return { name: this.name, help: this.help, type: "histogram", aggregator: "sum", values };
  }
}
