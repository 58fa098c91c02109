/**
 * Iterable job classes for the tests in test/iterable. Each records in Redis, under the key prefix it is
 * given as its first argument:
 *
 *   <key>:seen     bitmap, bit i set when item i was processed (SETBIT)
 *   <key>:repeats  how many items were processed a second time (SETBIT answered 1)
 *   <key>:hooks    the hooks called, in order ("start:<ex>", "resume:<ex>", "stop", "cancel", "complete")
 *   <key>:jids     the jid of every run
 *
 * Items are recorded in batches (arguments: key, total, pauseMs = 0, batch = 1 with a pause, else 1000):
 * one BITFIELD SET u1 per item in one command, whose answers (the old bits) count the repeats. Every hook
 * writes the batch first, so a stopped run's record is complete before the job is requeued. Only with
 * batch 1 is every item recorded before the next one starts, as a SIGKILL test needs.
 */
import { setTimeout as sleep } from "node:timers/promises";
import { defaultClient } from "../../src/client/defaultClient.js";
import { IterableJob } from "../../src/features/iterable/IterableJob.js";
import { rangeEnumerator } from "../../src/features/iterable/enumerators.js";

/** Items recorded per BITFIELD command. */
const BATCH = 1000;

export class CountingIterableJob extends IterableJob<
  number,
  number,
  [key: string, total: number, pauseMs?: number, batch?: number]
> {
  private unrecorded: number[] = [];

  buildEnumerator(
    [, total]: [string, number, number?, number?],
    cursor: number | null,
  ): Iterable<readonly [number, number]> {
    return rangeEnumerator(0, total, cursor);
  }

  async eachIteration(item: number, _key: string, _total: number, pauseMs = 0, batch?: number): Promise<void> {
    this.unrecorded.push(item);
    if (pauseMs > 0) await sleep(pauseMs);
    if (this.unrecorded.length >= (batch ?? (pauseMs > 0 ? 1 : BATCH))) await this.record();
  }

  /** Sets the bits of the unrecorded items; those already set were repeats. */
  private async record(): Promise<void> {
    if (this.unrecorded.length === 0) return;
    const key = String(this.arguments[0]);
    const ops = this.unrecorded.flatMap((item) => ["SET", "u1", String(item), "1"]);
    this.unrecorded = [];
    const { redis } = defaultClient();
    const old = (await redis.call("BITFIELD", `${key}:seen`, ...ops)) as number[];
    const repeated = old.filter((bit) => bit === 1).length;
    if (repeated > 0) await redis.incrby(`${key}:repeats`, repeated);
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

  /** Records the batch, then the hook. */
  private async hook(name: string): Promise<void> {
    await this.record();
    const { redis } = defaultClient();
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
  override async eachIteration(item: number, key: string, total: number, pauseMs = 0, batch = 1): Promise<void> {
    if (item === 5 && this.executions === 1) throw new Error("item 5 failed on the first run");
    await super.eachIteration(item, key, total, pauseMs, batch);
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

/** A walk that never waits: sync enumerator, sync no-op eachIteration. */
export class SyncWalkJob extends IterableJob<number, number, [key: string, total: number]> {
  buildEnumerator([, total]: [string, number], cursor: number | null): Iterable<readonly [number, number]> {
    return rangeEnumerator(0, total, cursor);
  }
  eachIteration(): void {}
  override async onStart(): Promise<void> {
    await defaultClient().redis.rpush(`${String(this.arguments[0])}:hooks`, "start:1");
  }
  override async onStop(): Promise<void> {
    await defaultClient().redis.rpush(`${String(this.arguments[0])}:hooks`, "stop");
  }
}
