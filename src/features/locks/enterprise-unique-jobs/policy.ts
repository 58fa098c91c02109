/**
 * Reads a job class's unique-job options, Sidekiq Enterprise's API in TypeScript:
 *
 *   class ChargeJob extends Job {
 *     static options = { uniqueFor: 600, uniqueUntil: "start" };   // `sidekiq_options unique_for: 10.minutes`
 *     static uniqueContext(args: unknown[]) { return [args[0]]; }   // `self.sidekiq_unique_context(job)`
 *   }
 *
 * `uniqueFor` (seconds) makes the class unique; Enterprise makes it mandatory "so that if a process
 * crashes, any locks it is holding won't last forever". The options travel in the payload as Enterprise
 * writes them (`unique_for`, `unique_until`), so `set({ uniqueFor: false })` bypasses uniqueness for one
 * push (Ent #2658). A bad declaration throws a ConfigError naming the class, at its first push.
 */
import { classPolicy, type BadDeclaration } from "../classPolicy.js";
import { dedupPolicyOf } from "../gitlab-deduplication/policy.js";

export const UNTIL = ["success", "start"] as const;
export type UniqueUntil = (typeof UNTIL)[number];

export interface UniqueOptions {
  /** Seconds the lock lasts at most (plus the delay of a scheduled job, plus the wait of a retry). */
  uniqueFor?: number | false;
  /** "success" (default, as Enterprise): released when the job succeeds; "start": when it starts. */
  uniqueUntil?: UniqueUntil;
  /** false: a failed job releases its lock when its retry is scheduled. Default true (it keeps it). */
  uniqueRetries?: boolean;
}

export interface UniquePolicy {
  uniqueFor: number;
  /** The class's `uniqueContext(args, job)`, bound to the class, if it has one. */
  context?: (args: unknown[], job: Readonly<Record<string, unknown>>) => unknown;
}

interface UniqueClass {
  name?: string;
  jobName?: string;
  options?: unknown;
  uniqueContext?: unknown;
}

function readPolicy(klass: UniqueClass, bad: BadDeclaration): UniquePolicy | null {
  const options = (typeof klass.options === "object" && klass.options !== null ? klass.options : {}) as UniqueOptions;
  validateUniqueOptions(options, bad);
  if (klass.uniqueContext !== undefined && typeof klass.uniqueContext !== "function")
    throw bad("static uniqueContext must be a function (args, job) => an array identifying a duplicate");
  if (options.uniqueFor === undefined || options.uniqueFor === false) {
    if (options.uniqueUntil !== undefined || options.uniqueRetries !== undefined)
      throw bad("uniqueUntil and uniqueRetries need uniqueFor (seconds the lock lasts at most)");
    return null;
  }
  if (dedupPolicyOf(klass) !== undefined)
    throw bad("a class is either deduplicated (static idempotent) or unique (uniqueFor), not both; pick one");
  const pick = klass.uniqueContext as UniquePolicy["context"] | undefined;
  return {
    uniqueFor: options.uniqueFor,
    ...(pick ? { context: (args, job) => pick.call(klass, args, job) } : {}),
  };
}

/** Checks the options as a class or a `set(...)` gives them. */
export function validateUniqueOptions(options: UniqueOptions, bad: (what: string) => Error): void {
  const { uniqueFor, uniqueUntil, uniqueRetries } = options;
  const seconds = typeof uniqueFor === "number" && uniqueFor > 0 && Number.isFinite(uniqueFor);
  if (uniqueFor !== undefined && uniqueFor !== false && !seconds)
    throw bad(`uniqueFor must be a positive number of seconds or false, got ${JSON.stringify(uniqueFor)}`);
  if (uniqueUntil !== undefined && !UNTIL.includes(uniqueUntil))
    throw bad(`uniqueUntil must be "success" or "start", got ${JSON.stringify(uniqueUntil)}`);
  if (uniqueRetries !== undefined && typeof uniqueRetries !== "boolean")
    throw bad(`uniqueRetries must be true or false, got ${JSON.stringify(uniqueRetries)}`);
}

/** The class's policy, or undefined when it is not unique (no `uniqueFor`, or `uniqueFor: false`). */
export const uniquePolicyOf = classPolicy("docs/unique-jobs.md", "static options", readPolicy);
