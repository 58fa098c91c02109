/**
 * Reads a class's keyed limit, enforced by the server before the job's perform (KeyedLimiter.ts):
 *
 *   class ChargeJob extends Job {
 *     static limit = {
 *       key: (args: unknown[]) => `tenant-${String(args[0])}`,   // one limit per tenant
 *       concurrency: 2,                                         // at most 2 running per key, cluster-wide
 *       rate: { limit: 100, period: "minute" },                 // at most 100 starts per key in any minute
 *     };
 *   }
 *
 * At least one of concurrency and rate. `period` is "second", "minute", "hour", "day" or seconds. Read
 * once per class; a bad declaration throws a ConfigError naming the class at its first job.
 */
import { classPolicy, type BadDeclaration } from "../classPolicy.js";
import { periodMs } from "./settings.js";

export interface KeyedLimitPolicy {
  key: (args: unknown[]) => unknown;
  /** Running jobs per key, 0 for no cap. */
  concurrency: number;
  /** Starts per key per window, 0 for no rate. */
  rate: number;
  /** The rate's window, ms. */
  windowMs: number;
}

interface LimitedClass {
  name?: string;
  jobName?: string;
  limit?: unknown;
}

function readPolicy(klass: LimitedClass, bad: BadDeclaration): KeyedLimitPolicy | null {
  const declared = klass.limit;
  if (declared === undefined || declared === null) return null;
  if (typeof declared !== "object" || Array.isArray(declared))
    throw bad("static limit must be an object such as { key: (args) => String(args[0]), concurrency: 2 }");
  const options = declared as Record<string, unknown>;
  for (const name of Object.keys(options))
    if (!["key", "concurrency", "rate"].includes(name)) throw bad(`unknown limit option "${name}"`);
  if (typeof options.key !== "function") throw bad("limit.key must be a function (args) => string");
  const concurrency = options.concurrency ?? 0;
  if (typeof concurrency !== "number" || !Number.isInteger(concurrency) || concurrency < 0)
    throw bad(`limit.concurrency must be an integer >= 1 (or left out), got ${JSON.stringify(concurrency)}`);
  let rate = 0;
  let windowMs = 0;
  if (options.rate !== undefined) {
    const r = options.rate as Record<string, unknown> | null;
    if (typeof r !== "object" || r === null || typeof r.limit !== "number" || !Number.isInteger(r.limit) || r.limit < 1)
      throw bad("limit.rate must be { limit: <integer >= 1>, period: 'second' | 'minute' | 'hour' | 'day' | seconds }");
    rate = r.limit;
    try {
      windowMs = periodMs("limit.rate", r.period);
    } catch (error) {
      throw bad((error as Error).message);
    }
  }
  if (concurrency === 0 && rate === 0) throw bad("limit needs a concurrency, a rate, or both");
  return { key: options.key as (args: unknown[]) => unknown, concurrency, rate, windowMs };
}

/** The class's keyed limit, or undefined when it declares none. */
export const keyedLimitOf = classPolicy<LimitedClass, KeyedLimitPolicy>(
  "docs/rate-limits.md",
  "static limit",
  readPolicy,
);

/** The limit key of a job's arguments: a string or a number, at most 200 characters. */
export function limitKeyOf(policy: KeyedLimitPolicy, className: string, args: unknown[]): string {
  const key: unknown = policy.key(args);
  if ((typeof key === "string" && key.length > 0 && key.length <= 200) || typeof key === "number") return String(key);
  throw new TypeError(
    `${className}: static limit.key returned ${JSON.stringify(key)}; it must return a non-empty string ` +
      "(at most 200 characters) or a number for every job's arguments",
  );
}
