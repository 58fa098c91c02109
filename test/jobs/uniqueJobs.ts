/**
 * Unique job classes (Sidekiq Enterprise's API) for the unique-job tests, loaded by real `tsq` processes
 * and by the pusher children. Each records its runs in Redis (`started`, `ran` lists) so tests observe
 * them from outside.
 */
import { Job } from "../../src/index.js";
import { redis, run } from "./lockedRun.js";

/** Enterprise's default: unique until success. The id alone identifies it (uniqueContext). */
export class UniqueJob extends Job {
  static override options = { uniqueFor: 600 };
  static uniqueContext(args: unknown[]): unknown[] {
    return ["UniqueJob", args[0]];
  }
  async perform(_id: number, seconds = 0): Promise<void> {
    await run(this, seconds, true);
  }
}

/** Released at start. */
export class UntilStartJob extends Job {
  static override options = { uniqueFor: 600, uniqueUntil: "start" as const };
  static uniqueContext(args: unknown[]): unknown[] {
    return ["UntilStartJob", args[0]];
  }
  async perform(_id: number, seconds = 0): Promise<void> {
    await run(this, seconds);
  }
}

/** Fails on its first run (retried after 1 s), succeeds after. */
export class FlakyUniqueJob extends Job {
  static override options = { uniqueFor: 600 };
  static retryIn(): number {
    return 1;
  }
  static uniqueContext(args: unknown[]): unknown[] {
    return ["FlakyUniqueJob", args[0]];
  }
  async perform(_id: number): Promise<void> {
    const runs = await redis().incr(`runs:${this.jid}`);
    await redis().rpush("started", JSON.stringify({ jid: this.jid, class: "FlakyUniqueJob", runs }));
    if (runs === 1) throw new Error("first run fails");
    await redis().rpush("ran", this.jid);
  }
}

/** Always fails, retried after 1 s; releases its lock at failure (`uniqueRetries: false`). */
export class ReleasingRetryJob extends Job {
  static override options = { uniqueFor: 600, uniqueRetries: false };
  static retryIn(): number {
    return 30;
  }
  async perform(_id: number): Promise<void> {
    await redis().rpush("started", JSON.stringify({ jid: this.jid, class: "ReleasingRetryJob" }));
    throw new Error("always fails");
  }
}

/** Always fails; no retries, straight to the dead set. */
export class DyingUniqueJob extends Job {
  static override options = { uniqueFor: 600, retry: 0 };
  async perform(_id: number): Promise<void> {
    await redis().rpush("started", JSON.stringify({ jid: this.jid, class: "DyingUniqueJob" }));
    throw new Error("this job always dies");
  }
}

/** A plain class: never unique. */
export class PlainJob extends Job {
  async perform(_id: number): Promise<void> {
    await run(this, 0);
  }
}

/** A 3 s lock: a job lost with its process blocks its duplicates for 3 s from its push. */
export class ShortUniqueJob extends Job {
  static override options = { uniqueFor: 3 };
  static uniqueContext(args: unknown[]): unknown[] {
    return ["ShortUniqueJob", args[0]];
  }
  async perform(_id: number, seconds = 0): Promise<void> {
    await run(this, seconds);
  }
}

/** Dropped by a kill switch in the tests. */
export class SwitchedUniqueJob extends Job {
  static override options = { uniqueFor: 600 };
  async perform(_id: number): Promise<void> {
    await run(this, 0);
  }
}
