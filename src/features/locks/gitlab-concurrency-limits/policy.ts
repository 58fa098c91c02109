/**
 * Reads a job class's concurrency limit, GitLab's `concurrency_limit -> { n }` in TypeScript:
 *
 *   class IndexJob extends Job {
 *     static concurrencyLimit = 3;                       // at most 3 running at once, cluster-wide
 *     // or: static concurrencyLimit = () => Number(process.env.INDEX_LIMIT ?? 3);   // read per job
 *   }
 *
 * n > 0 caps the jobs of the class running at once across every process on the Redis; 0 (or no field)
 * means no limit; n < 0 pauses the class: all its jobs park until the limit is raised (GitLab's
 * semantics, flow-control.md §2.2). A function is called for every job, so a limit can change without a
 * deploy. A bad value throws a ConfigError naming the class.
 */
import { ConfigError } from "../../../wire/errors.js";

interface LimitedClass {
  name?: string;
  jobName?: string;
  concurrencyLimit?: unknown;
}

/** The class's limit for the job about to run: > 0 slots, 0 no limit, < 0 paused. */
export function concurrencyLimitOf(klass: object | undefined): number {
  if (klass === undefined) return 0;
  const declared = (klass as LimitedClass).concurrencyLimit;
  if (declared === undefined || declared === null) return 0;
  const value: unknown = typeof declared === "function" ? (declared as () => unknown).call(klass) : declared;
  if (typeof value === "number" && Number.isInteger(value)) return value;
  const name = (klass as LimitedClass).jobName ?? (klass as LimitedClass).name ?? "(anonymous class)";
  throw new ConfigError(
    `job class ${name}: static concurrencyLimit must be an integer (> 0 a cap, 0 no limit, < 0 paused) or a ` +
      `function returning one, got ${JSON.stringify(value)}; fix the class (see docs/concurrency-limits.md)`,
  );
}
