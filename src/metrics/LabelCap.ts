/**
 * LabelCap: a bound on the distinct values of each metrics label whose values come from Redis or from
 * job payloads (`class`, `queue`). Raw pushes of 30,000 made-up class names once gave a `tsq-cluster`
 * scrape of 228 MB taking 30 s and a supervisor of 2.4 GB (issue 26): every value is a few dozen series
 * in every process. The first `max` values seen of each label keep their own series; later ones are
 * counted under the value "other", and the first such fold is logged once per label.
 *
 * Admission is for the life of the process, so a value never moves between its own series and "other"
 * (a counter that did would look like a reset). Values the operator configured (a group's queues) are
 * admitted first and beyond the bound: they are never folded.
 */
import { MAX_LABEL_VALUES } from "../platform/config/defaults.js";
import { ConfigError } from "../wire/errors.js";
import { combiner, type MetricFamily, type Sample } from "./exposition.js";

/** The overflow value. A real class or queue named "other" shares its series. */
export const OTHER = "other";
/** Labels whose values are taken from Redis or payloads; every other label has a fixed set of values. */
export const CAPPED_LABELS: readonly string[] = ["class", "queue"];

/** Only `warn` is needed: a fold is worth one line, not one per job. */
export interface CapLogger {
  warn(fields: Record<string, unknown>, message: string): void;
}

export class LabelCap {
  private readonly admitted = new Map<string, Set<string>>();
  private readonly folded = new Set<string>();

  constructor(
    readonly max: number,
    private readonly logger?: CapLogger,
  ) {
    if (!Number.isInteger(max) || max < 1 || max > MAX_LABEL_VALUES) {
      throw new ConfigError(
        `metrics_max_label_values must be an integer from 1 to ${MAX_LABEL_VALUES}, got ${String(max)}: set it in the config file's top level`,
      );
    }
  }

  /** Admits configured values (e.g. a group's queues) ahead of anything seen, whatever their number. */
  prefer(label: string, values: Iterable<string>): this {
    const set = this.setOf(label);
    for (const value of values) set.add(value);
    return this;
  }

  /** `value` itself while it is admitted or there is room, else "other". */
  value(label: string, value: string): string {
    if (value === OTHER) return OTHER;
    const set = this.setOf(label);
    if (set.has(value)) return value;
    if (set.size < this.max) {
      set.add(value);
      return value;
    }
    if (!this.folded.has(label)) {
      this.folded.add(label);
      this.logger?.warn(
        { label, max: this.max },
        `metrics label "${label}" has more than ${this.max} distinct values; further ones are counted as ${label}="${OTHER}". Raise metrics_max_label_values (up to ${MAX_LABEL_VALUES}) if they are real`,
      );
    }
    return OTHER;
  }

  /**
   * The families with every capped label passed through `value`, samples that land on the same label
   * set combined as a merge would (counters and histograms summed, gauges by their aggregator: queue
   * sizes summed, latencies the max). A family with nothing to fold is returned as it was.
   */
  apply(families: MetricFamily[]): MetricFamily[] {
    return families.map((family) => this.applyOne(family));
  }

  private applyOne(family: MetricFamily): MetricFamily {
    let folds = false;
    const mapped = family.values.map((sample) => {
      const labels = this.labels(sample.labels);
      if (labels !== sample.labels) folds = true;
      return labels;
    });
    if (!folds) return family;
    const combine = combiner(family);
    const bySeries = new Map<string, { sample: Sample; values: number[] }>();
    family.values.forEach((sample, i) => {
      const labels = mapped[i]!;
      const key = `${sample.metricName ?? ""}\u0000${JSON.stringify(labels)}`;
      const seen = bySeries.get(key);
      if (seen) seen.values.push(sample.value ?? NaN);
      else {
        const out: Sample = { value: null, labels };
        if (sample.metricName !== undefined) out.metricName = sample.metricName;
        bySeries.set(key, { sample: out, values: [sample.value ?? NaN] });
      }
    });
    const values = [...bySeries.values()].map(({ sample, values }) => ({ ...sample, value: combine(values) }));
    return { ...family, values };
  }

  /** The labels with every capped one passed through `value`; the same object when none folds. */
  labels(labels: Sample["labels"]): Sample["labels"] {
    let out: Sample["labels"] | undefined;
    for (const label of CAPPED_LABELS) {
      const value = labels[label];
      if (value === undefined) continue;
      const capped = this.value(label, String(value));
      if (capped !== String(value)) (out ??= { ...labels })[label] = capped;
    }
    return out ?? labels;
  }

  private setOf(label: string): Set<string> {
    let set = this.admitted.get(label);
    if (!set) this.admitted.set(label, (set = new Set<string>()));
    return set;
  }
}
