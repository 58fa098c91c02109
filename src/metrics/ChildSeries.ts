/**
 * ChildSeries: the supervisor's copy of one child's series, built from the child's snapshots: a full
 * one replaces it, a delta (the series changed since the child's previous snapshot, with their current
 * values) overwrites those series and leaves the rest. Values are absolute, so applying a delta twice
 * changes nothing; one that was missed is repaired by the full snapshot the supervisor then asks for.
 */
import type { MetricFamily, Sample } from "./exposition.js";

interface Entry {
  family: Omit<MetricFamily, "values">;
  samples: Map<string, Sample>;
}

export class ChildSeries {
  private byName = new Map<string, Entry>();

  replace(families: MetricFamily[]): void {
    this.byName = new Map();
    this.patch(families);
  }

  patch(families: MetricFamily[]): void {
    for (const { values, ...family } of families) {
      let entry = this.byName.get(family.name);
      if (!entry) this.byName.set(family.name, (entry = { family, samples: new Map() }));
      for (const sample of values) {
        entry.samples.set(`${sample.metricName ?? ""}\u0000${JSON.stringify(sample.labels)}`, sample);
      }
    }
  }

  /** Every series held, as families (a fresh array per call; the samples are shared, read-only). */
  families(): MetricFamily[] {
    return [...this.byName.values()].map(({ family, samples }) => ({ ...family, values: [...samples.values()] }));
  }
}
