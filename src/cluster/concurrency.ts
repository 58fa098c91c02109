/**
 * Job slots per `tsq-cluster` child, by GitLab 16.x sidekiq-cluster's rule
 * (`lib/gitlab/sidekiq_cluster/sidekiq_cluster.rb`, `SidekiqCluster.concurrency`):
 *
 *   fixed (-c, config `concurrency`, TSQ_CONCURRENCY) given   that figure, for every child
 *   otherwise  n   = the group's queue entries + 1 (duplicates count: "a,a,b" is 3 entries, so 4)
 *              max = -m > 0 ? -m : n                       (-m 0 = no maximum)
 *              min = min(--min-concurrency, max)
 *              slots = clamp(n, min, max)
 *
 * GitLab's quirk is kept on purpose, so a copied command line sizes children the same: with `-m 0`
 * the maximum is n itself, so `--min-concurrency` can never raise a child above n
 * (`--min-concurrency 10 -m 0` gives a 1-queue group 2 slots, not 10).
 *
 * Defaults are GitLab 16.x's: -m 20, --min-concurrency 0 (GitLab 13.x used 50 for -m; 17.0 replaced
 * both with one fixed `--concurrency`, which is tsq's `-c`).
 */

export interface ConcurrencyRule {
  /** Slots for every child, whatever its group; undefined = size each child from its group. */
  fixed: number | undefined;
  /** `--min-concurrency`; 0 = no minimum. */
  min: number;
  /** `-m/--max-concurrency`; 0 = no maximum. */
  max: number;
}

export interface ConcurrencyDefaults {
  /** GitLab 16.x `-m` default: 20 slots. */
  readonly maxConcurrency: number;
  /** GitLab 16.x `--min-concurrency` default: 0, no minimum. */
  readonly minConcurrency: number;
}

export const CONCURRENCY_DEFAULTS = Object.freeze({
  maxConcurrency: 20,
  minConcurrency: 0,
} satisfies ConcurrencyDefaults) as ConcurrencyDefaults;

export interface ChildConcurrency {
  slots: number;
  /** Why this figure, as shown by --dryrun and the start line: "fixed", "5 queues + 1", "61 queues + 1, capped by -m 20". */
  why: string;
}

/** The slots of a child whose group has `entries` queue entries (duplicates counted). */
export function childConcurrency(entries: number, rule: ConcurrencyRule): ChildConcurrency {
  if (rule.fixed !== undefined) return { slots: rule.fixed, why: "fixed" };
  const fromQueues = entries + 1;
  const max = rule.max > 0 ? rule.max : fromQueues;
  const min = Math.min(rule.min, max);
  const slots = Math.min(Math.max(fromQueues, min), max);
  const base = `${entries} queue${entries === 1 ? "" : "s"} + 1`;
  if (slots < fromQueues) return { slots, why: `${base}, capped by -m ${rule.max}` };
  if (slots > fromQueues) return { slots, why: `${base}, raised by --min-concurrency ${rule.min}` };
  return { slots, why: base };
}
