/**
 * ChangedSamples: the child's memory of what it last sent the supervisor, for families it cannot track
 * change by change (prom-client's process metrics, the running-jobs gauge). `changes()` keeps only the
 * samples whose value differs from the last one sent: an idle child's delta is a few process metrics.
 *
 * Values are absolute, so the supervisor overwrites rather than adds and a repeated delta is harmless.
 * A sample that disappeared cannot be said by a changed value: its family is then sent whole and named
 * in `replaced`, and the supervisor drops what it held of that family and this child beyond it. Only
 * that family: `nodejs_active_resources{type}` loses a label value every few seconds, and answering that
 * with a full snapshot (every job series too, ~75,000 samples at 1,000 classes) cost an idle child 5–8%
 * of a core and stalled the supervisor's scrapes.
 */
import type { MetricFamily, Sample } from "./exposition.js";

export interface SampleChanges {
  families: MetricFamily[];
  /** Families sent whole (or gone, when not in `families`): the receiver's other samples of them are gone. */
  replaced: string[];
}

export class ChangedSamples {
  /** Family name → sample key → value, as last sent. */
  private last = new Map<string, Map<string, number | null>>();

  /** Every sample, remembered as sent. */
  all(families: MetricFamily[]): MetricFamily[] {
    this.last = new Map(families.map((family) => [family.name, valuesOf(family)]));
    return families;
  }

  changes(families: MetricFamily[]): SampleChanges {
    const next = new Map<string, Map<string, number | null>>();
    const out: MetricFamily[] = [];
    const replaced: string[] = [];
    for (const family of families) {
      const before = this.last.get(family.name);
      const now = valuesOf(family);
      next.set(family.name, now);
      if (before !== undefined && [...before.keys()].some((key) => !now.has(key))) {
        replaced.push(family.name);
        out.push(family);
        continue;
      }
      const values = family.values.filter((s) => {
        const was = before?.get(keyOf(s));
        return was === undefined || !Object.is(was, s.value);
      });
      if (values.length > 0) out.push({ ...family, values });
    }
    for (const name of this.last.keys()) if (!next.has(name)) replaced.push(name);
    this.last = next;
    return { families: out, replaced };
  }
}

function valuesOf(family: MetricFamily): Map<string, number | null> {
  return new Map(family.values.map((s) => [keyOf(s), s.value]));
}

function keyOf(sample: Sample): string {
  return `${sample.metricName ?? ""}\u0000${JSON.stringify(sample.labels)}`;
}
