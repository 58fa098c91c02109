/**
 * Iterable job classes for the tests in test/iterable. Each records in Redis, under the key prefix it is
 * given as its first argument:
 *
 *   <key>:seen     bitmap, bit i set when item i was processed (SETBIT)
 *   <key>:repeats  how many items were processed a second time (SETBIT answered 1)
 *   <key>:hooks    the hooks called, in order ("start:<ex>", "resume:<ex>", "stop", "cancel", "complete")
 *   <key>:jids     the jid of every run
 *
 * SETBIT is sent without waiting for each answer (ioredis pipelines them on one connection), and every
 * DRAIN_EVERY items the job waits for the latest, so a million items cost seconds, not minutes; every
 * hook waits for all of them, so what a stopped run processed is in Redis before its cursor is.
 */
import { setTimeout as sleep } from "node:timers/promises";
import { defaultClient } from "../../src/client/defaultClient.js";
import { IterableJob } from "../../src/iterable/IterableJob.js";
import { rangeEnumerator } from "../../src/iterable/enumerators.js";

/** Items between waits for Redis's answers. */
const DRAIN_EVERY = 2000;

export class CountingIterableJob extends IterableJob<number, number, [key: string, total: number, pauseMs?: number]> {
  private pending: Promise<unknown> = Promise.resolve();

  buildEnumerator([, total]: [string, number, number?], cursor: number | null): Iterable<readonly [number, number]> {
    return rangeEnumerator(0, total, cursor);
  }

  async eachIteration(item: number, key: string, _total: number, pauseMs = 0): Promise<void> {
    const { redis } = defaultClient();
    this.pending = redis.setbit(`${key}:seen`, item, 1).then((old) => (old === 1 ? redis.incr(`${key}:repeats`) : 0));
    if (pauseMs > 0) await sleep(pauseMs);
    else if (item % DRAIN_EVERY === 0) await this.pending;
  }

  override async onStart(): Promise<void> {
    await this.hook(`start:${this.executions}`);
  }
  override async onResume(): Promise<void> {
    await this.hook(`resume:${this.executions}`);
  }
  override async onStop(): Promise<void> {
    await this.hook("stop");
  }
  override async onCancel(): Promise<void> {
    await this.hook("cancel");
  }
  override async onComplete(): Promise<void> {
    await this.hook("complete");
  }

  /** Waits for every SETBIT (and INCR) sent so far, then records the hook. */
  private async hook(name: string): Promise<void> {
    const { redis } = defaultClient();
    await this.pending;
    await redis.ping(); // answers come in order: every INCR sent before it has been applied
    const key = String(this.arguments[0]);
    if (name.startsWith("start") || name.startsWith("resume")) await redis.rpush(`${key}:jids`, this.jid);
    await redis.rpush(`${key}:hooks`, name);
  }
}

/** Re-pushes itself every 0.3 s of iterating (maxIterationRuntime). */
export class ShortRunIterableJob extends CountingIterableJob {
  static override maxIterationRuntime = 0.3;
}

/** Saves its state every 0.2 s, so a cancel is seen quickly. */
export class QuickFlushIterableJob extends CountingIterableJob {
  static override stateFlushInterval = 0.2;
}

/** Fails at item `failAt` on its first run only, to show an error saves the cursor and the retry resumes. */
export class FailOnceIterableJob extends CountingIterableJob {
  override async eachIteration(item: number, key: string, total: number, pauseMs = 0): Promise<void> {
    if (item === 5 && this.executions === 1) throw new Error("item 5 failed on the first run");
    await super.eachIteration(item, key, total, pauseMs);
  }
}

/** Returns something that is not an enumerator. */
export class NotEnumerableJob extends IterableJob<number, number, []> {
  buildEnumerator(): Iterable<readonly [number, number]> {
    return 42 as unknown as Iterable<readonly [number, number]>;
  }
  eachIteration(): void {}
}

/** Yields object cursors, as a keyset walk would ({ id } of the last row). */
export class ObjectCursorJob extends IterableJob<string, { id: number }, [key: string]> {
  async *buildEnumerator(
    _args: [string],
    cursor: { id: number } | null,
  ): AsyncGenerator<readonly [string, { id: number }]> {
    for (let id = cursor?.id ?? 0; id < 3; id++) yield [`row-${id}`, { id }];
  }
  async eachIteration(item: string, key: string): Promise<void> {
    await defaultClient().redis.rpush(`${key}:items`, item);
  }
}
