/**
 * sidekiq-unique-jobs' options on a tsq job class, with the gem's names in camelCase; they travel in the
 * payload under the gem's own names (`lock`, `lock_ttl`, `on_conflict`, …), so a Ruby worker running
 * the gem honours a tsq job's lock and tsq honours a Ruby job's (docs/sidekiq-unique-jobs.md):
 *
 *   class SyncJob extends Job {
 *     static options = { lock: "until_executed", lockTtl: 600, onConflict: "reject" };
 *     static lockArgs(args: unknown[]) { return [args[0]]; }   // `def self.lock_args(args)`
 *   }
 */
import { classPolicy, type BadDeclaration } from "../classPolicy.js";
import { ConfigError } from "../../../wire/errors.js";

export type SujLockType = "until_executing" | "until_executed" | "until_expired" | "while_executing";
export const STRATEGIES = ["log", "raise", "reject", "replace", "reschedule"] as const;
export type SujStrategy = (typeof STRATEGIES)[number];

/** The gem's lock names and aliases (`config.rb`), for the four lock types tsq implements. */
const LOCK_TYPES: Readonly<Record<string, SujLockType>> = {
  until_executing: "until_executing",
  while_enqueued: "until_executing",
  until_executed: "until_executed",
  until_completed: "until_executed",
  until_performed: "until_executed",
  until_processed: "until_executed",
  until_successfully_completed: "until_executed",
  until_expired: "until_expired",
  while_executing: "while_executing",
  around_perform: "while_executing",
  while_busy: "while_executing",
  while_working: "while_executing",
};

export interface SujOptions {
  /** The lock type (or one of the gem's aliases). */
  lock?: string;
  /** Seconds the lock lasts at most (plus the delay of a scheduled job); 0, null or unset: until released. */
  lockTtl?: number | null;
  /** Seconds a while_executing job waits for the run lock before its conflict strategy (default 0). */
  lockTimeout?: number;
  /** Holders of one digest at once (default 1). */
  lockLimit?: number;
  /** What a duplicate does: one strategy, or `{ client, server }` (push side, run side). Default "log". */
  onConflict?: SujStrategy | { client?: SujStrategy; server?: SujStrategy };
  /** Digest prefix (default "uniquejobs"). */
  lockPrefix?: string;
  uniqueAcrossQueues?: boolean;
  uniqueAcrossWorkers?: boolean;
}

/** The lock type a `lock` field names, or undefined for none / one tsq does not implement. */
export function lockTypeOf(name: unknown): SujLockType | undefined {
  return typeof name === "string" && Object.hasOwn(LOCK_TYPES, name) ? LOCK_TYPES[name] : undefined;
}

/** The strategy of one side from an `on_conflict` field; undefined means the default (log). */
export function strategyOf(onConflict: unknown, side: "client" | "server"): SujStrategy | undefined {
  const value =
    typeof onConflict === "object" && onConflict !== null ? (onConflict as Record<string, unknown>)[side] : onConflict;
  return STRATEGIES.includes(value as SujStrategy) ? (value as SujStrategy) : undefined;
}

interface SujClass {
  name?: string;
  jobName?: string;
  options?: unknown;
  lockArgs?: unknown;
}

export interface SujClassPolicy {
  /** The class's `lockArgs(args)`, bound to it, if it has one. */
  lockArgs?: (args: unknown[]) => unknown;
}

function readPolicy(klass: SujClass, bad: BadDeclaration): SujClassPolicy | null {
  const options = (typeof klass.options === "object" && klass.options !== null ? klass.options : {}) as SujOptions;
  if (options.lock === undefined) return null;
  validateSujOptions(options, bad);
  if (klass.lockArgs !== undefined && typeof klass.lockArgs !== "function")
    throw bad("static lockArgs must be a function (args) => the arguments that identify a duplicate");
  const pick = klass.lockArgs as ((args: unknown[]) => unknown) | undefined;
  return pick ? { lockArgs: (args) => pick.call(klass, args) } : {};
}

/** Checks SUJ options as a class gives them (camelCase) or a payload carries them (snake_case). */
export function validateSujOptions(options: SujOptions, bad: (what: string) => Error): void {
  const { lock, lockTtl, lockTimeout, lockLimit, onConflict, lockPrefix } = options;
  if (lockTypeOf(lock) === undefined)
    throw bad(
      `lock must be until_executing, until_executed, until_expired or while_executing (or a gem alias), got ${JSON.stringify(lock)}`,
    );
  if (lockTtl !== undefined && lockTtl !== null && !(typeof lockTtl === "number" && lockTtl >= 0 && lockTtl < 1e9))
    throw bad(`lockTtl must be seconds (0 or null: no expiry), got ${JSON.stringify(lockTtl)}`);
  if (lockTimeout !== undefined && !(typeof lockTimeout === "number" && lockTimeout >= 0 && lockTimeout < 3600))
    throw bad(`lockTimeout must be seconds from 0 to 3600, got ${JSON.stringify(lockTimeout)}`);
  if (lockLimit !== undefined && !(Number.isInteger(lockLimit) && lockLimit >= 1))
    throw bad(`lockLimit must be an integer >= 1, got ${JSON.stringify(lockLimit)}`);
  if (lockPrefix !== undefined && !(typeof lockPrefix === "string" && /^[\w.-]+$/.test(lockPrefix)))
    throw bad(`lockPrefix must be letters, digits, "_", "." or "-", got ${JSON.stringify(lockPrefix)}`);
  const sides = typeof onConflict === "object" && onConflict !== null ? Object.values(onConflict) : [onConflict];
  for (const side of sides)
    if (side !== undefined && !STRATEGIES.includes(side))
      throw bad(
        `onConflict must be one of ${STRATEGIES.join(", ")} (or { client, server }), got ${JSON.stringify(side)}`,
      );
}

/** A job payload's options in the camelCase form validateSujOptions reads. */
export function payloadOptions(job: Record<string, unknown>): SujOptions {
  return {
    lock: job.lock as string,
    lockTtl: job.lock_ttl as number | null | undefined,
    lockTimeout: (job.lock_timeout ?? undefined) as number | undefined,
    lockLimit: (job.lock_limit ?? undefined) as number | undefined,
    onConflict: job.on_conflict ?? undefined,
    lockPrefix: (job.lock_prefix ?? undefined) as string | undefined,
  };
}

/** Throws the ConfigError of a bad push of class `name`. */
export function badPush(name: string): (what: string) => ConfigError {
  return (what) => new ConfigError(`job ${name}: ${what} (see docs/sidekiq-unique-jobs.md)`);
}

/** The class's SUJ policy (its lockArgs), or undefined when its options have no `lock`. */
export const sujPolicyOf = classPolicy("docs/sidekiq-unique-jobs.md", "static options", readPolicy);
