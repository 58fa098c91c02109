/**
 * One periodic schedule, as declared in `config/tsq.yml` (`cron:` section) or by a job class's
 * `static cron`. Plain JSON data: it travels to `tsq-cluster` children inside WorkerOptions.
 */

export interface CronEntry {
  /** Unique across the cluster; also the Redis key suffix and the `tsqctl cron` argument. */
  name: string;
  /** 5-field crontab (`min hour dom month dow`) or 6 fields with seconds first; `@daily` etc. */
  cron: string;
  /** Job class name on the wire. */
  class: string;
  /** Queue to push to; undefined: the class's `static options.queue`, else `default`. */
  queue?: string;
  /** The job's arguments, the same on every tick. */
  args: unknown[];
  /** IANA time zone the expression is read in (e.g. `Asia/Tokyo`); undefined: the process's zone. */
  tz?: string;
  description?: string;
  /** Initial state; `tsqctl cron disable|enable` overrides it until this value changes in the config. */
  enabled: boolean;
  /** After an outage, enqueue the most recent missed tick (only that one). */
  catchUp: boolean;
  /** Where it was declared, for error messages: the config file, or `static cron of <Class>`. */
  source: string;
}

/** What a job class may declare as `static cron`: an expression, one schedule, or several. */
export type CronDeclaration = string | CronClassEntry | CronClassEntry[];

/** A schedule declared on a class: the class is implied, the name defaults to the class's job name. */
export interface CronClassEntry {
  /** Required when a class declares several schedules. */
  name?: string;
  cron: string;
  args?: unknown[];
  queue?: string;
  tz?: string;
  description?: string;
  enabled?: boolean;
  catchUp?: boolean;
}

/** Schedule names are Redis key suffixes and command-line arguments: no spaces, no surprises. */
const NAME = /^[A-Za-z0-9_.:-]+$/;

export function isCronName(name: string): boolean {
  return NAME.test(name);
}

export const CRON_NAME_FORMAT = "letters, digits and _ . : - only";
