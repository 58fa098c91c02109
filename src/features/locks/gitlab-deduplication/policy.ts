/**
 * Reads a job class's deduplication attributes, GitLab's worker API in TypeScript:
 *
 *   class RefreshJob extends Job {
 *     static idempotent = true;                                        // GitLab `idempotent!`
 *     static deduplicate = { strategy: "until_executed", ttl: 300,     // `deduplicate :until_executed, ...`
 *                            includingScheduled: true, ifDeduplicated: "reschedule_once" };
 *     static idempotencyArguments(args: unknown[]) { return [args[0]]; } // optional key subset
 *   }
 *
 * Only idempotent classes are deduplicated (GitLab drops only those). The reader is read once per class
 * and cached; a bad declaration throws a ConfigError naming the class, at its first push.
 */
import { classPolicy, type BadDeclaration } from "../classPolicy.js";

export const STRATEGIES = ["until_executing", "until_executed", "none"] as const;
export type Strategy = (typeof STRATEGIES)[number];

/** GitLab's DEFAULT_DUPLICATE_KEY_TTL: 10 minutes, in seconds. */
export const DEFAULT_TTL = 600;

export interface DeduplicateOptions {
  /** Default "until_executing". */
  strategy?: Strategy;
  /** Deduplicate jobs pushed with a delay too (the lock then lasts the delay plus ttl). Default false. */
  includingScheduled?: boolean;
  /** Seconds the lock lasts at most (default 600). */
  ttl?: number;
  /** "reschedule_once" (until_executed only): a duplicate dropped while the job ran makes it run once more. */
  ifDeduplicated?: "reschedule_once";
}

export interface DedupPolicy {
  strategy: Exclude<Strategy, "none">;
  includingScheduled: boolean;
  ttl: number;
  rescheduleOnce: boolean;
  idempotencyArguments?: (args: unknown[]) => unknown;
  /** The declared options, for the log line (`deduplication.options.*`). */
  options: Record<string, unknown>;
}

interface DedupClass {
  name?: string;
  jobName?: string;
  idempotent?: unknown;
  deduplicate?: unknown;
  idempotencyArguments?: unknown;
}

function readPolicy(klass: DedupClass, bad: BadDeclaration): DedupPolicy | null {
  if (klass.idempotent !== undefined && typeof klass.idempotent !== "boolean")
    throw bad(`static idempotent must be true or false, got ${JSON.stringify(klass.idempotent)}`);
  const declared = klass.deduplicate ?? {};
  if (typeof declared !== "object" || declared === null || Array.isArray(declared))
    throw bad("static deduplicate must be an object such as { strategy: 'until_executed', ttl: 300 }");
  const options = declared as Record<string, unknown>;
  const known = new Set(["strategy", "includingScheduled", "ttl", "ifDeduplicated"]);
  for (const key of Object.keys(options)) if (!known.has(key)) throw bad(`unknown deduplicate option "${key}"`);
  const strategy = options.strategy ?? "until_executing";
  if (!STRATEGIES.includes(strategy as Strategy))
    throw bad(`deduplicate.strategy must be one of ${STRATEGIES.join(", ")}, got ${JSON.stringify(strategy)}`);
  const ttl = options.ttl ?? DEFAULT_TTL;
  if (typeof ttl !== "number" || !Number.isFinite(ttl) || ttl <= 0)
    throw bad(`deduplicate.ttl must be a positive number of seconds, got ${JSON.stringify(ttl)}`);
  if (options.includingScheduled !== undefined && typeof options.includingScheduled !== "boolean")
    throw bad("deduplicate.includingScheduled must be true or false");
  if (options.ifDeduplicated !== undefined && options.ifDeduplicated !== "reschedule_once")
    throw bad(`deduplicate.ifDeduplicated must be "reschedule_once", got ${JSON.stringify(options.ifDeduplicated)}`);
  if (options.ifDeduplicated !== undefined && strategy !== "until_executed")
    throw bad('deduplicate.ifDeduplicated: "reschedule_once" needs strategy "until_executed"');
  if (klass.idempotencyArguments !== undefined && typeof klass.idempotencyArguments !== "function")
    throw bad("static idempotencyArguments must be a function (args) => the arguments that identify a duplicate");
  if (klass.idempotent !== true || strategy === "none") return null;
  const pick = klass.idempotencyArguments as ((args: unknown[]) => unknown) | undefined;
  return {
    strategy: strategy as DedupPolicy["strategy"],
    includingScheduled: options.includingScheduled === true,
    ttl,
    rescheduleOnce: options.ifDeduplicated === "reschedule_once",
    ...(pick ? { idempotencyArguments: (args: unknown[]) => pick.call(klass, args) } : {}),
    options: {
      strategy,
      ttl,
      including_scheduled: options.includingScheduled,
      if_deduplicated: options.ifDeduplicated,
    },
  };
}

/** The class's policy, or undefined when its pushes are not deduplicated (not idempotent, or strategy none). */
export const dedupPolicyOf = classPolicy("docs/deduplication.md", "static fields", readPolicy);
