/**
 * Job classes with sidekiq-unique-jobs options for the interop tests, loaded by real `tsq` processes.
 * Each records its runs in Redis (`started`, `ran`, via lockedRun) so tests observe them from outside;
 * the while_executing ones also record how many runs of their class overlapped (`suj:max:<class>`).
 */
import { Job } from "../../src/index.js";
import { rubyFloat } from "../../src/features/locks/sidekiq-unique-jobs/index.js";
import { redis, run } from "./lockedRun.js";

export class SujExecutedJob extends Job {
  static override options = { lock: "until_executed", lockTtl: 600 };
  async perform(_id: unknown, seconds = 0): Promise<void> {
    await run(this, seconds);
  }
}

export class SujExecutingJob extends Job {
  static override options = { lock: "until_executing", lockTtl: 600 };
  async perform(_id: unknown, seconds = 0): Promise<void> {
    await run(this, seconds);
  }
}

/** Held 5 s from the push, whatever the run does. */
export class SujExpiredJob extends Job {
  static override options = { lock: "until_expired", lockTtl: 5 };
  async perform(_id: unknown): Promise<void> {
    await run(this, 0);
  }
}

/** Its first argument is a Ruby Float in the digest: pushes of `perform_async(2.0)` from Ruby collide with it. */
export class SujFloatJob extends Job {
  static override options = { lock: "until_executed", lockTtl: 600 };
  static lockArgs(args: unknown[]): unknown[] {
    return [rubyFloat(args[0] as number)];
  }
  async perform(_amount: number): Promise<void> {
    await run(this, 0);
  }
}

/** Records how many runs of the class overlap (`suj:running:<class>`) and the most seen (`suj:max:<class>`). */
async function exclusive(job: Job, seconds: number): Promise<void> {
  const klass = job.constructor.name;
  const now = await redis().incr(`suj:running:${klass}`);
  const raise =
    "if tonumber(redis.call('get', KEYS[1]) or 0) < tonumber(ARGV[1]) then redis.call('set', KEYS[1], ARGV[1]) end";
  await redis().eval(raise, 1, `suj:max:${klass}`, now);
  try {
    await run(job, seconds);
  } finally {
    await redis().decr(`suj:running:${klass}`);
  }
}

/** One runs at a time per args; a duplicate found running is pushed again for 5 s later. */
export class SujWhileJob extends Job {
  static override options = { lock: "while_executing", lockTtl: 60, onConflict: "reschedule" as const };
  async perform(_id: unknown, seconds = 0): Promise<void> {
    await exclusive(this, seconds);
  }
}

/** One runs at a time per args; a duplicate found running goes to the dead set. */
export class SujWhileRejectJob extends Job {
  static override options = { lock: "while_executing", lockTtl: 60, onConflict: "reject" as const };
  async perform(_id: unknown, seconds = 0): Promise<void> {
    await exclusive(this, seconds);
  }
}

/** One runs at a time per args; a duplicate found running is dropped (the gem's default, log). */
export class SujWhileLogJob extends Job {
  static override options = { lock: "while_executing", lockTtl: 60 };
  async perform(_id: unknown, seconds = 0): Promise<void> {
    await exclusive(this, seconds);
  }
}

/** until_executed with each conflict strategy on the push side. */
export class SujRaiseJob extends Job {
  static override options = { lock: "until_executed", lockTtl: 600, onConflict: "raise" as const };
  async perform(): Promise<void> {
    await run(this, 0);
  }
}
export class SujRejectJob extends Job {
  static override options = { lock: "until_executed", lockTtl: 600, onConflict: "reject" as const };
  async perform(): Promise<void> {
    await run(this, 0);
  }
}
export class SujReplaceJob extends Job {
  static override options = { lock: "until_executed", lockTtl: 600, onConflict: "replace" as const };
  async perform(): Promise<void> {
    await run(this, 0);
  }
}
export class SujRescheduleJob extends Job {
  static override options = { lock: "until_executed", lockTtl: 600, onConflict: "reschedule" as const };
  async perform(_id: unknown, seconds = 0): Promise<void> {
    await run(this, seconds);
  }
}

/** A plain class, for the bench's baseline. */
export class PlainBenchJob extends Job {
  async perform(): Promise<void> {}
}

/** until_executed, for the bench. */
export class SujBenchJob extends Job {
  static override options = { lock: "until_executed", lockTtl: 600 };
  async perform(): Promise<void> {}
}

/** until_executing that always fails: its lock is taken again for the retry (waiting 60 s). */
export class SujFailingJob extends Job {
  static override options = { lock: "until_executing", lockTtl: 600, retry: 1 };
  static retryIn(): number {
    return 60;
  }
  async perform(_id: unknown): Promise<void> {
    await redis().rpush("started", JSON.stringify({ jid: this.jid, class: "SujFailingJob" }));
    throw new Error("always fails");
  }
}

/** until_executing that fails with no retries: straight to the dead set. */
export class SujDyingJob extends Job {
  static override options = { lock: "until_executing", lockTtl: 600, retry: 0 };
  async perform(_id: unknown): Promise<void> {
    await redis().rpush("started", JSON.stringify({ jid: this.jid, class: "SujDyingJob" }));
    throw new Error("dies");
  }
}

/** Declares no lock in tsq: a Ruby app may still push it with the gem's lock fields. */
export class SujUndeclaredJob extends Job {
  async perform(_id: unknown, seconds = 0): Promise<void> {
    await run(this, seconds);
  }
}

/** until_executed that sleeps only on its first run: the SIGKILL test kills it then and it recovers. */
export class SujRecoverJob extends Job {
  static override options = { lock: "until_executed", lockTtl: 600 };
  async perform(_id: unknown, seconds = 0): Promise<void> {
    await run(this, seconds, true);
  }
}

/** while_executing that sleeps only on its first run. */
export class SujWhileRecoverJob extends Job {
  static override options = { lock: "while_executing", lockTtl: 600 };
  async perform(_id: unknown, seconds = 0): Promise<void> {
    await run(this, seconds, true);
  }
}
