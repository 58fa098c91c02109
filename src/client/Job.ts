/**
 * The `Job` base class: what users extend and enqueue.
 *
 *   export class HardJob extends Job {
 *     static options = { queue: "critical", retry: 5 };
 *     async perform(name: string, count: number) {}
 *   }
 *   await HardJob.performAsync("bob", 5);
 *
 * Extending `Job` is optional for running (the worker runs any registered class with `perform`); it
 * gives the enqueueing helpers, `this.jid` and an AbortSignal that fires on hard shutdown.
 */
import { ArgumentError } from "../wire/errors.js";
import type { Client } from "./Client.js";
import { EPOCH_THRESHOLD } from "./Client.js";
import { defaultClient, hasDefaultClient } from "./defaultClient.js";
import { jobNameOf, wireOptions, type JobClassLike, type JobOptions } from "./options.js";
import { nowSeconds } from "../wire/timestamps.js";
import type { JobPayload } from "../wire/payload.js";
import type { JsonSafeArgs } from "./jsonArgs.js";
import type { PushDiversion } from "./plugin.js";

/** Options accepted by `set`: job options plus when to run. */
export interface SetOptions extends JobOptions {
  /** Seconds from now (values >= 1e9 are epoch seconds). */
  wait?: number;
  /** When to run: a Date or epoch seconds. */
  waitUntil?: Date | number;
  /** Enqueue through this client instead of the default one. */
  client?: Client;
}

// Constructor arguments are never used by tsq (it constructs jobs with none); `any` keeps user
// classes with their own constructors assignable.
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- see above
type JobClass<T extends Job = Job> = (abstract new (...args: any[]) => T) & JobClassLike;
/** `perform`'s parameters, each limited to what survives JSON (jsonArgs.ts): a Date parameter fails to compile. */
type PerformArgs<C extends JobClass> = JsonSafeArgs<Parameters<InstanceType<C>["perform"]>>;

/** Converts `performIn`/`performAt`/`wait` input to epoch seconds, or undefined for "now". */
export function scheduledAt(when: Date | number): number | undefined {
  const now = nowSeconds();
  let ts: number;
  if (when instanceof Date) ts = when.getTime() / 1000;
  else if (typeof when === "number" && Number.isFinite(when)) ts = when < EPOCH_THRESHOLD ? now + when : when;
  else throw new ArgumentError(`expected seconds or a Date for the run time, got ${String(when)}`);
  if (Number.isNaN(ts)) throw new ArgumentError("the run time is an invalid Date");
  // Sidekiq: a time not in the future enqueues now.
  return ts > now ? ts : undefined;
}

/** A job class bound to extra options, as returned by `Job.set`. */
export class Setter<C extends JobClass> {
  constructor(
    private readonly klass: C,
    private readonly options: SetOptions,
  ) {}

  set(options: SetOptions): Setter<C> {
    return new Setter(this.klass, { ...this.options, ...options });
  }

  performAsync(...args: PerformArgs<C>): Promise<string | null> {
    return this.push(args as unknown[], this.timeFromOptions());
  }

  performIn(interval: number, ...args: PerformArgs<C>): Promise<string | null> {
    return this.push(args as unknown[], scheduledAt(interval));
  }

  performAt(time: Date | number, ...args: PerformArgs<C>): Promise<string | null> {
    return this.push(args as unknown[], scheduledAt(time));
  }

  performBulk(argsList: PerformArgs<C>[], options: { batchSize?: number } = {}): Promise<(string | null)[]> {
    const at = this.timeFromOptions();
    return this.client().pushBulk({
      ...this.wire(),
      class: this.klass,
      args: argsList as unknown[][],
      ...(at === undefined ? {} : { at }),
      ...(options.batchSize === undefined ? {} : { batchSize: options.batchSize }),
    });
  }

  private push(args: unknown[], at: number | undefined): Promise<string | null> {
    return this.client().push({ ...this.wire(), class: this.klass, args, ...(at === undefined ? {} : { at }) });
  }

  private timeFromOptions(): number | undefined {
    if (this.options.waitUntil !== undefined) return scheduledAt(this.options.waitUntil);
    if (this.options.wait !== undefined) return scheduledAt(this.options.wait);
    return undefined;
  }

  private wire(): Record<string, unknown> {
    const { wait: _w, waitUntil: _u, client: _c, ...jobOptions } = this.options;
    const typo = this.client().optionKeys.typo(jobNameOf(this.klass), jobOptions, "set({...})");
    if (typo) throw new ArgumentError(typo);
    return { ...wireOptions(this.klass.options), ...wireOptions(jobOptions) };
  }

  private client(): Client {
    return this.options.client ?? defaultClient();
  }
}

/** The signal of a job not run by a worker: never fires. Shared, since one is made per job otherwise. */
const NEVER_ABORTED: AbortSignal = new AbortController().signal;

export abstract class Job {
  /** Default options for every push of this class (camelCase here, snake_case on the wire). */
  static options?: JobOptions;
  /** The name on the wire; defaults to the class name. */
  static jobName?: string;

  /** Set by the worker before `perform`. */
  jid = "";
  /** The payload's `version` (GitLab's job version, from the pushing class's `static version`), if any. */
  jobVersion?: number;
  /** The job as it was fetched, fields as on the wire. */
  payload?: JobPayload;
  /** Fires when a hard shutdown abandons this job (it has been requeued and will run again). */
  signal: AbortSignal = NEVER_ABORTED;
  /**
   * Fires when the worker starts to stop (TSTP or TERM): the job may save its place and end early. The
   * job runs on until then regardless; iterable jobs (src/features/iterable) use it to re-push themselves.
   */
  stopping: AbortSignal = NEVER_ABORTED;
  // Plug-ins add the fields they set before `perform` (`activeJob`, `batch`, `workflow`) by augmenting
  // this class's interface from their own folder (see features/*/plugin.ts).

  // `any`: subclasses narrow the parameters to their own; `unknown[]` would make every override an error.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  abstract perform(...args: any[]): unknown;

  static set<C extends JobClass>(this: C, options: SetOptions): Setter<C> {
    return new Setter(this, options);
  }

  static performAsync<C extends JobClass>(this: C, ...args: PerformArgs<C>): Promise<string | null> {
    return new Setter(this, {}).performAsync(...args);
  }

  /** Runs after `interval` seconds (values >= 1e9 are epoch seconds). */
  static performIn<C extends JobClass>(this: C, interval: number, ...args: PerformArgs<C>): Promise<string | null> {
    return new Setter(this, {}).performIn(interval, ...args);
  }

  static performAt<C extends JobClass>(this: C, time: Date | number, ...args: PerformArgs<C>): Promise<string | null> {
    return new Setter(this, {}).performAt(time, ...args);
  }

  /**
   * tsq/testing's fake mode: the jobs of this class pushed so far and not yet drained, oldest first, as
   * stored (a scheduled one with its `at`, epoch seconds). Throws outside fake mode.
   */
  static get jobs(): readonly JobPayload[] {
    return testDouble(this, "jobs").jobsOf(jobNameOf(this));
  }

  /** Fake mode: runs this class's held jobs, including those pushed while draining; resolves to how many ran. */
  static drain(this: JobClassLike): Promise<number> {
    return testDouble(this, "drain()").drainOf(jobNameOf(this));
  }

  /** Fake mode: forgets this class's held jobs. */
  static clear(this: JobClassLike): void {
    testDouble(this, "clear()").clearOf(jobNameOf(this));
  }

  static performBulk<C extends JobClass>(
    this: C,
    argsList: PerformArgs<C>[],
    options: { batchSize?: number } = {},
  ): Promise<(string | null)[]> {
    return new Setter(this, {}).performBulk(argsList, options);
  }
}

/** The default client's test double (tsq/testing), or an error saying how to get one. */
function testDouble(klass: JobClassLike, what: string): PushDiversion {
  // No default client yet: no fake mode either (one is made by the switch, never by this question).
  const diversion = hasDefaultClient() ? defaultClient().diversion : undefined;
  if (!diversion)
    throw new ArgumentError(
      `${jobNameOf(klass)}.${what} needs tsq/testing's fake mode: import { fake } from "tsq/testing" and call fake() first`,
    );
  return diversion;
}

export { jobNameOf };
