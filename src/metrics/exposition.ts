/**
 * Metric families as plain JSON (prom-client's `getMetricsAsJSON()` shape), so they can cross the IPC
 * channel, be kept after a child dies, be merged across processes and be rendered in the Prometheus text
 * format (version 0.0.4).
 *
 * Merging sums series with the same name and label set. Counters and histograms are always summed: that
 * is what keeps them monotonic when a dead child's last values are added to its replacement's. Gauges
 * follow prom-client's per-metric `aggregator` (event-loop lag is averaged, min/max kept), except that
 * `omit` (process_start_time_seconds) becomes `max`: with a `child` label there is nothing to omit.
 */
import type { Registry } from "prom-client";

export type MetricKind = "counter" | "gauge" | "histogram" | "summary";

export interface Sample {
  /** null where JSON turned a NaN into null on its way over IPC. */
  value: number | null;
  labels: Record<string, string | number>;
  /** Histograms: `<name>_bucket`, `<name>_sum`, `<name>_count`; absent for the family's own name. */
  metricName?: string;
}

export interface MetricFamily {
  name: string;
  help: string;
  type: MetricKind;
  aggregator?: string;
  values: Sample[];
}

/** Prometheus text exposition format 0.0.4. */
export const CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";

/** A registry's current values. */
export async function familiesOf(registry: Registry): Promise<MetricFamily[]> {
  // prom-client types `type` as a numeric enum, but at run time it is the string name used here.
  return (await registry.getMetricsAsJSON()) as unknown as MetricFamily[];
}

/** Only what must never go backwards: counters and histograms. A dead child's gauges mean nothing. */
export function monotonicOnly(families: MetricFamily[]): MetricFamily[] {
  return families.filter((f) => f.type === "counter" || f.type === "histogram");
}

/** Merges families from several processes: one family per name, one sample per name + label set. */
export function mergeFamilies(lists: MetricFamily[][]): MetricFamily[] {
  const byName = new Map<string, { family: MetricFamily; series: Map<string, { sample: Sample; values: number[] }> }>();
  for (const list of lists) {
    for (const family of list) {
      let entry = byName.get(family.name);
      if (!entry) {
        entry = { family: { name: family.name, help: family.help, type: family.type, values: [] }, series: new Map() };
        if (family.aggregator !== undefined) entry.family.aggregator = family.aggregator;
        byName.set(family.name, entry);
      } else if (entry.family.type !== family.type) {
        continue; // a name reused with another type would be invalid output; the first one wins
      }
      for (const sample of family.values) {
        const key = seriesKey(sample);
        const seen = entry.series.get(key);
        const value = sample.value ?? NaN;
        if (seen) seen.values.push(value);
        else entry.series.set(key, { sample, values: [value] });
      }
    }
  }
  return [...byName.values()].map(({ family, series }) => {
    const combine = combiner(family);
    family.values = [...series.values()].map(({ sample, values }) => {
      const merged: Sample = { value: combine(values), labels: sample.labels };
      if (sample.metricName !== undefined) merged.metricName = sample.metricName;
      return merged;
    });
    return family;
  });
}

export function combiner(family: MetricFamily): (values: number[]) => number {
  if (family.type !== "gauge") return sum;
  switch (family.aggregator) {
    case "average":
      return (v) => sum(v) / v.length;
    case "min":
      return (v) => Math.min(...v);
    case "max":
    case "omit":
      return (v) => Math.max(...v);
    case "first":
      return (v) => v[0] ?? NaN;
    default:
      return sum;
  }
}

function sum(values: number[]): number {
  return values.reduce((a, b) => a + b, 0);
}

/** Name and label set of a series, labels in name order: what makes two processes' samples one series. */
export function seriesKey(sample: Pick<Sample, "labels" | "metricName">): string {
  const labels = Object.entries(sample.labels)
    .filter(([, v]) => v !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([k, v]) => `${k}=${String(v)}`);
  return `${sample.metricName ?? ""}\u0000${labels.join("\u0000")}`;
}

/** Renders families as Prometheus text: HELP and TYPE once per family, then its samples. */
export function renderFamilies(families: MetricFamily[]): string {
  const lines: string[] = [];
  for (const family of families) {
    if (family.values.length === 0) continue;
    lines.push(`# HELP ${family.name} ${escapeHelp(family.help)}`, `# TYPE ${family.name} ${family.type}`);
    for (const sample of family.values) {
      lines.push(`${sample.metricName ?? family.name}${renderLabels(sample.labels)} ${formatValue(sample.value)}`);
    }
  }
  return lines.length === 0 ? "" : `${lines.join("\n")}\n`;
}

export function renderLabels(labels: Record<string, string | number>): string {
  const pairs = Object.entries(labels)
    .filter(([, v]) => v !== undefined)
    .map(([k, v]) => `${k}="${escapeLabel(String(v))}"`);
  return pairs.length === 0 ? "" : `{${pairs.join(",")}}`;
}

export function formatValue(value: number | null): string {
  if (value === null || Number.isNaN(value)) return "NaN";
  if (value === Infinity) return "+Inf";
  if (value === -Infinity) return "-Inf";
  return String(value);
}

export function escapeHelp(text: string): string {
  return text.replace(/\\/g, "\\\\").replace(/\n/g, "\\n");
}

function escapeLabel(text: string): string {
  return escapeHelp(text).replace(/"/g, '\\"');
}

/**
 * Keeps counter and histogram series from ever going down between scrapes. Families merged anew at each
 * scrape (the supervisor's own with its children's process metrics) add the same numbers in another
 * order when a child comes or goes, which can lower a float sum by one ulp; Prometheus would read that
 * as a counter reset and show a spike in rate(). (MergedSeries' running totals cannot go down.)
 */
export class MonotonicGuard {
  private readonly last = new Map<string, number>();

  apply(families: MetricFamily[]): MetricFamily[] {
    return families.map((family) => {
      if (family.type !== "counter" && family.type !== "histogram") return family;
      const values = family.values.map((sample) => {
        if (sample.value === null) return sample;
        const key = `${family.name}\u0001${seriesKey(sample)}`;
        const previous = this.last.get(key);
        const value = previous !== undefined && previous > sample.value ? previous : sample.value;
        this.last.set(key, value);
        return value === sample.value ? sample : { ...sample, value };
      });
      return { ...family, values };
    });
  }
}
