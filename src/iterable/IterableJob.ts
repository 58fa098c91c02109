/**
 * Iterable jobs, Sidekiq 7.3's `Sidekiq::IterableJob`: a long job that walks an enumerator, saves its
 * place in `it-<jid>` and survives deploys.
 *
 *   class BackfillJob extends IterableJob<number, number, [string]> {
 *     buildEnumerator([table]: [string], cursor: number | null) { return rangeEnumerator(0, 10_000_000, cursor); }
 *     async eachIteration(id: number, table: string) { ... }
 *   }
 *   await BackfillJob.performAsync("users");
 *
 * One run (perform):
 *
 *   load it-<jid> → ex += 1 → buildEnumerator(args, cursor) → onStart (first run) | onResume
 *   → cancelled already? onCancel : for each [item, cursor]:
 *        every `stateFlushInterval` s, and when interrupted: save ex, c, rt; read `cancelled` → onCancel
 *        interrupted (the worker is stopping, or `maxIterationRuntime` s passed) → stop before the item
 *        eachIteration(item, ...args)  (an error saves the state, then retries as usual)
 *   → onStop → finished or cancelled: onComplete, delete it-<jid>
 *              interrupted: save the state, throw JobInterrupted → the worker requeues the same payload
 *              (same jid) at the end of its queue; not a failure, not a retry
 *
 * Hook order is Sidekiq's, including onComplete after onCancel (a cancelled job is done). A hard kill
 * (SIGKILL, OOM) loses only the place since the last save: with reliable fetch the job is recovered and
 * repeats at most `stateFlushInterval` seconds of items.
 */
import { performance } from "node:perf_hooks";
import { Job } from "../client/Job.js";
import { defaultClient } from "../client/defaultClient.js";
import { ArgumentError, IterationStateError, JobInterrupted } from "../errors.js";
import { logger } from "../logger.js";
import type { JsonValue } from "../payload.js";
import type { TsqRedis } from "../redis/connection.js";
import { isEnumerator, type Enumerator } from "./enumerators.js";
import { cancelledAt, clearState, flushState, loadState } from "./state.js";

type Built<Item, Cursor extends JsonValue> = Enumerator<Item, Cursor> | null | undefined;

// `any[]`: as Job's perform, so a subclass may narrow its arguments.
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- see above
type AnyArgs = any[];

export abstract class IterableJob<
  Item = unknown,
  Cursor extends JsonValue = JsonValue,
  Args extends AnyArgs = AnyArgs,
> extends Job {
  /**
   * Seconds one run may iterate before it saves its place and requeues itself (Sidekiq's
   * `max_iteration_runtime`): bounds how long a job holds a worker slot. Unset: no limit.
   */
  static maxIterationRuntime?: number;
  /** Seconds between state saves while iterating (Sidekiq: 5). Also how soon a cancel is noticed. */
  static stateFlushInterval = 5;

  /** How many runs have started, this one included (`ex`). */
  executions = 0;
  /** The cursor of the item being processed; null before the first. */
  cursor: Cursor | null = null;
  /** Seconds spent iterating in earlier runs (`rt`). */
  runtime = 0;
  /** Set once the job has seen its cancel. */
  cancelled = false;
  /** The job's arguments, frozen. */
  arguments: Readonly<Args> = Object.freeze([]) as unknown as Readonly<Args>;
  private startedMs = 0;

  /**
   * A saved state that cannot be read will not read better on a retry: such a job goes straight to the
   * dead set. A subclass overriding `retryIn` should call `super.retryIn(...)` first to keep this.
   */
  static retryIn(_count: number, error: Error, _job?: Record<string, unknown>): unknown {
    return error instanceof IterationStateError ? "kill" : undefined;
  }

  /**
   * The items to walk, resuming at `cursor` (null on the first run). Null or undefined: nothing to do,
   * the job ends without calling any hook.
   */
  abstract buildEnumerator(args: Args, cursor: Cursor | null): Built<Item, Cursor> | Promise<Built<Item, Cursor>>;
  /** Processes one item. */
  abstract eachIteration(item: Item, ...args: Args): unknown;

  /** The first run is starting (not called on a resume). */
  onStart(): unknown {
    return undefined;
  }
  /** A later run is starting, after an interruption or a retry. */
  onResume(): unknown {
    return undefined;
  }
  /** The run ended for any reason but an error: finished, cancelled or interrupted. */
  onStop(): unknown {
    return undefined;
  }
  /** The job was cancelled (`tsqctl cancel <jid>`); onStop and onComplete follow. */
  onCancel(): unknown {
    return undefined;
  }
  /** The enumerator is exhausted, or the job was cancelled. */
  onComplete(): unknown {
    return undefined;
  }

  async perform(...args: Args): Promise<void> {
    if (!this.jid) throw new ArgumentError("an iterable job needs a jid: run it through a worker or set `jid` first");
    this.arguments = Object.freeze([...args]) as unknown as Readonly<Args>;
    const saved = await loadState(this.redis(), this.jid);
    if (saved) {
      this.executions = saved.executions;
      this.cursor = saved.cursor as Cursor | null;
      this.runtime = saved.runtime;
    }
    this.executions += 1;
    this.startedMs = performance.now();
    const enumerator = await this.buildEnumerator(args, this.cursor);
    if (enumerator === null || enumerator === undefined) {
      logger().info("buildEnumerator returned nothing; the job has nothing to do");
      return;
    }
    if (!isEnumerator(enumerator)) {
      throw new ArgumentError(
        `${this.constructor.name}#buildEnumerator must return an iterable of [item, cursor] pairs (an array, a ` +
          "generator or an async generator, e.g. rangeEnumerator(0, n, cursor))",
      );
    }
    await (this.executions === 1 ? this.onStart() : this.onResume());
    const completed = await this.iterate(enumerator, args);
    await this.onStop();
    if (completed) {
      await this.onComplete();
      await clearState(this.redis(), this.jid);
      return;
    }
    await this.flush();
    throw new JobInterrupted(`interrupted at cursor ${JSON.stringify(this.cursor)?.slice(0, 100)}; requeued to resume`);
  }

  /** True: finished or cancelled. False: interrupted, to resume later. */
  private async iterate(enumerator: Enumerator<Item, Cursor>, args: Args): Promise<boolean> {
    try {
      if (await cancelledAt(this.redis(), this.jid)) return await this.cancel();
      const klass = this.constructor as typeof IterableJob;
      const flushEveryMs = klass.stateFlushInterval * 1000;
      const limitMs = klass.maxIterationRuntime === undefined ? Infinity : klass.maxIterationRuntime * 1000;
      let flushedAt = performance.now();
      for await (const [item, cursor] of enumerator) {
        this.cursor = cursor;
        const now = performance.now();
        const interrupted = this.stopping.aborted || this.signal.aborted || now - this.startedMs > limitMs;
        if (interrupted || now - flushedAt >= flushEveryMs) {
          const cancelled = await this.flush();
          flushedAt = performance.now();
          if (cancelled !== undefined) return await this.cancel();
        }
        if (interrupted) return false;
        try {
          await this.eachIteration(item, ...args);
        } catch (error) {
          await this.flush(); // the retry resumes at this item
          throw error;
        }
      }
      return true;
    } finally {
      this.runtime += (performance.now() - this.startedMs) / 1000;
      this.startedMs = performance.now();
    }
  }

  private async cancel(): Promise<true> {
    this.cancelled = true;
    await this.onCancel();
    logger().info("job cancelled");
    return true;
  }

  /** Saves ex, c and rt (this run's time so far included); resolves to the cancel time if cancelled. */
  private flush(): Promise<string | undefined> {
    return flushState(this.redis(), this.jid, {
      executions: this.executions,
      cursor: this.cursor,
      runtime: this.runtime + (performance.now() - this.startedMs) / 1000,
    });
  }

  /** The worker points the default client at its own Redis. */
  private redis(): TsqRedis {
    return defaultClient().redis;
  }
}
