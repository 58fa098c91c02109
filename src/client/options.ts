/**
 * Job options as users write them (camelCase, in `static options` or `set({...})`) and as they travel
 * on the wire (snake_case). Options merged in by features or the app pass through, converted the same way.
 */
import { ArgumentError } from "../wire/errors.js";

/**
 * The options every job has. Only known keys compile: `HardJob.set({ queueu: "low" })` is an error.
 * Features add their own keys by declaration merging from their plugin.ts (unique jobs add `uniqueFor`,
 * expiry adds `expiresIn`), so the core names none of them. An application's own middleware keys are
 * added the same way (docs/testing.md#custom-job-options):
 *
 *   declare module "tsq" {
 *     interface JobOptions { tenant?: string }
 *   }
 */
export interface JobOptions {
  queue?: string;
  /** true (default: 25 retries), false (no retry, no dead set), or a number of retries. */
  retry?: boolean | number;
  retryQueue?: string;
  /** Seconds after the first failure during which retries continue (relative, < 1e9). */
  retryFor?: number;
  /** Keep the error backtrace in the retry payload: true, or the number of lines. */
  backtrace?: boolean | number;
  /** false: never move to the dead set when retries run out. */
  dead?: boolean;
  tags?: string[];
}

export function toSnakeCase(name: string): string {
  return name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
}

/** Converts option names to the wire's snake_case, dropping undefined values. */
export function wireOptions(options: object | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (!options) return out;
  for (const [key, value] of Object.entries(options)) {
    if (value !== undefined) out[toSnakeCase(key)] = value;
  }
  return out;
}

/** A class that can be enqueued by reference: its wire name and its default options. */
export interface JobClassLike {
  readonly name: string;
  readonly jobName?: string;
  readonly options?: JobOptions;
}

export function jobNameOf(klass: string | JobClassLike): string {
  if (typeof klass === "string") return klass;
  const name = klass.jobName ?? klass.name;
  if (!name) throw new ArgumentError("job class has no name; give it a `static jobName`");
  return name;
}

/** A job to push. Option fields are snake_case, as on the wire; `class` may be a job class. */
export interface PushItem {
  class: string | JobClassLike;
  args: unknown[];
  queue?: string;
  /** Epoch seconds (float) at which to run; absent or not in the future means now. */
  at?: number;
  jid?: string;
  [field: string]: unknown;
}

/** Many jobs of one class: `args` is a list of argument lists; `at` one time or one per job. */
export interface BulkItem {
  class: string | JobClassLike;
  args: unknown[][];
  queue?: string;
  jid?: string;
  at?: number | number[];
  /** Jobs per round trip (default 1,000; 100 when scheduled, as ZADD costs more). */
  batchSize?: number;
  [field: string]: unknown;
}
