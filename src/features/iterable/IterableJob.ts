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
import { Job } from "../../client/Job.js";
import { defaultClient } from "../../client/defaultClient.js";
import { ArgumentError, JobInterrupted } from "../../wire/errors.js";
import { IterationStateError } from "./errors.js";
import { logger } from "../../platform/logger.js";
import type { JsonValue } from "../../wire/payload.js";
import type { TsqRedis } from "../../platform/redis/connection.js";
import { isEnumerator, type Enumerator, type Step } from "./enumerators.js";
import { clearState, flushState, loadState } from "./state.js";

/** Milliseconds a walk may run without giving the event loop a turn (signals, heartbeats, I/O). */
const YIELD_EVERY_MS = 10;

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
  private cancelledBeforeStart = false;
  /** it-<jid> exists (read at start or written since), so completion deletes it. */
  private stateWritten = false;

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
    // Read with the rest of the state rather than in a second call as Sidekiq does: a one-item job costs
    // one round trip before its work, and a cancel landing in between is seen at the first save anyway.
    this.cancelledBeforeStart = saved?.cancelled !== undefined;
    this.stateWritten = saved !== undefined;
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
      // Nothing to delete when no state was ever read or written (a short job): one round trip saved.
      if (this.stateWritten) await clearState(this.redis(), this.jid);
      return;
    }
    await this.flush();
    throw new JobInterrupted(`interrupted at cursor ${JSON.stringify(this.cursor)?.slice(0, 100)}; requeued to resume`);
  }

  /**
   * True: finished or cancelled. False: interrupted, to resume later. Drives the iterator by hand so a
   * sync enumerator and a sync eachIteration cost no promise per item; the loop still gives the event
   * loop a turn every YIELD_EVERY_MS, so a walk that never waits for I/O lets heartbeats run and sees
   * the stop signal.
   */
  private async iterate(enumerator: Enumerator<Item, Cursor>, args: Args): Promise<boolean> {
    const klass = this.constructor as typeof IterableJob;
    const flushEveryMs = klass.stateFlushInterval * 1000;
    const deadline = this.startedMs + (klass.maxIterationRuntime ?? Infinity) * 1000;
    const sync = Symbol.iterator in enumerator ? enumerator[Symbol.iterator]() : undefined;
    const async = sync ? undefined : (enumerator as AsyncIterable<Step<Item, Cursor>>)[Symbol.asyncIterator]();
    let finished = false;
    try {
      if (this.cancelledBeforeStart) return await this.cancel();
      let flushDue = performance.now() + flushEveryMs;
      let yieldDue = performance.now() + YIELD_EVERY_MS;
      for (;;) {
        const next = sync ? sync.next() : await async!.next();
        if (next.done) {
          finished = true;
          return true;
        }
        const [item, cursor] = next.value;
        this.cursor = cursor;
        let now = performance.now();
        if (now >= yieldDue) {
          await new Promise<void>((resolve) => setImmediate(resolve));
          now = yieldDue = performance.now();
          yieldDue += YIELD_EVERY_MS;
        }
        const interrupted = this.stopping.aborted || this.signal.aborted || now > deadline;
        if (interrupted || now >= flushDue) {
          const cancelled = await this.flush();
          flushDue = performance.now() + flushEveryMs;
          if (cancelled !== undefined) return await this.cancel();
        }
        if (interrupted) return false;
        try {
          const result = this.eachIteration(item, ...args);
          if (isPromiseLike(result)) await result;
        } catch (error) {
          await this.flush(); // the retry resumes at this item
          throw error;
        }
      }
    } finally {
      // An enumerator left early is closed, so a generator's own `finally` (a DB cursor, a file) runs. Its
      // failure to close is logged: it must not hide why the walk ended.
      if (!finished) {
        try {
          await (sync ? sync.return?.() : async?.return?.());
        } catch (error) {
          logger().warn({ err: error }, "the enumerator failed to close");
        }
      }
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
    this.stateWritten = true;
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

function isPromiseLike(value: unknown): value is PromiseLike<unknown> {
  return typeof (value as { then?: unknown } | null | undefined)?.then === "function";
}
