/**
 * ChangedSamples: the child's memory of what it last sent the supervisor, for families it cannot track
 * change by change (prom-client's process metrics, the running-jobs gauge). `changes()` keeps only the
 * samples whose value differs from the last one sent: an idle child's delta is a few process metrics.
 *
 * Values are absolute, so the supervisor overwrites rather than adds and a repeated delta is harmless.
 * A sample that disappeared cannot be said in a delta: `changes()` then reports `removed` and the
 * caller sends a full snapshot instead.
 */
import type { MetricFamily, Sample } from "./exposition.js";

export class ChangedSamples {
  private last = new Map<string, number | null>();

  /** Every sample, remembered as sent. */
  all(families: MetricFamily[]): MetricFamily[] {
    this.last = new Map();
    for (const family of families) for (const s of family.values) this.last.set(keyOf(family, s), s.value);
    return families;
  }

  changes(families: MetricFamily[]): { families: MetricFamily[]; removed: boolean } {
    const next = new Map<string, number | null>();
    const out: MetricFamily[] = [];
    for (const family of families) {
      const values: Sample[] = [];
      for (const s of family.values) {
        const key = keyOf(family, s);
        next.set(key, s.value);
        const before = this.last.get(key);
        if (before === undefined || !Object.is(before, s.value)) values.push(s);
      }
      if (values.length > 0) out.push({ ...family, values });
    }
    let removed = false;
    for (const key of this.last.keys()) if (!next.has(key)) removed = true;
    this.last = next;
    return { families: out, removed };
  }
}

function keyOf(family: MetricFamily, sample: Sample): string {
  return `${sample.metricName ?? family.name}\u0000${JSON.stringify(sample.labels)}`;
}
