/**
 * Idempotent job classes for the deduplication tests, loaded by real `tsq` processes and by the pusher
 * children. Each records its runs in Redis (`ran` list) so tests observe them from outside.
 */
import { Job } from "../../src/index.js";
import { redis, run } from "./lockedRun.js";

/** The default strategy: until_executing. */
export class UntilExecutingJob extends Job {
  static idempotent = true;
  async perform(_id: number, seconds = 0): Promise<void> {
    await run(this, seconds);
  }
}

export class UntilExecutedJob extends Job {
  static idempotent = true;
  static deduplicate = { strategy: "until_executed" as const };
  async perform(_id: number, seconds = 0): Promise<void> {
    await run(this, seconds);
  }
}

/** Opted out: every push is enqueued. */
export class NoDedupJob extends Job {
  static idempotent = true;
  static deduplicate = { strategy: "none" as const };
  async perform(_id: number): Promise<void> {
    await run(this, 0);
  }
}

/** until_executed with a 3 s lock: a lost job's lock is gone 3 s after the push. The id alone identifies it. */
export class ShortLockJob extends Job {
  static idempotent = true;
  static deduplicate = { strategy: "until_executed" as const, ttl: 3 };
  static idempotencyArguments(args: unknown[]): unknown[] {
    return args.slice(0, 1);
  }
  async perform(_id: number, seconds = 0): Promise<void> {
    await run(this, seconds);
  }
}

/** Sleeps only on its first run, so a recovered copy finishes. The id alone identifies it. */
export class RecoverableJob extends Job {
  static idempotent = true;
  static deduplicate = { strategy: "until_executed" as const };
  static idempotencyArguments(args: unknown[]): unknown[] {
    return args.slice(0, 1);
  }
  async perform(_id: number, seconds: number): Promise<void> {
    await run(this, seconds, true);
  }
}

/** Always fails; no retries, straight to the dead set. */
export class DyingJob extends Job {
  static override options = { retry: 0 };
  static idempotent = true;
  static deduplicate = { strategy: "until_executed" as const };
  async perform(_id: number): Promise<void> {
    await redis().rpush("started", JSON.stringify({ jid: this.jid }));
    throw new Error("this job always dies");
  }
}

/** Locked while scheduled too. */
export class ScheduledDedupJob extends Job {
  static idempotent = true;
  static deduplicate = { includingScheduled: true };
  async perform(_id: number): Promise<void> {
    await run(this, 0);
  }
}

/** A duplicate dropped while it runs makes it run once more. */
export class RescheduleOnceJob extends Job {
  static idempotent = true;
  static deduplicate = { strategy: "until_executed" as const, ifDeduplicated: "reschedule_once" as const };
  async perform(_id: number, seconds = 0): Promise<void> {
    await run(this, seconds);
  }
}

/** Only the first argument identifies a duplicate. */
export class FirstArgJob extends Job {
  static idempotent = true;
  static idempotencyArguments(args: unknown[]): unknown[] {
    return args.slice(0, 1);
  }
  async perform(_id: number, _note: string): Promise<void> {
    await run(this, 0);
  }
}

/** Not idempotent: never deduplicated. */
export class PlainRecordJob extends Job {
  async perform(_id: number): Promise<void> {
    await run(this, 0);
  }
}
