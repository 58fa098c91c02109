/**
 * Jobs used by the server tests, loaded by real `tsq` processes with `-r dist/test/jobs/testJobs.js`.
 * They report through Redis (the worker's own connection) so tests can observe them from outside.
 */
import { Job, defaultClient } from "../../src/index.js";

function redis() {
  return defaultClient().redis;
}

/** Records that it ran: RPUSH ran {jid, args, pid, queue}. */
export class RecordJob extends Job {
  async perform(...args: unknown[]): Promise<void> {
    await redis().rpush("ran", JSON.stringify({ jid: this.jid, args, pid: process.pid, queue: this.payload?.queue }));
  }
}

/**
 * Records what it ran with and the payload's timestamps as tsq read them: RPUSH payloads {jid, queue,
 * args, created_at, enqueued_at} (interop tests compare them with what a Ruby client wrote).
 */
export class PayloadJob extends Job {
  async perform(...args: unknown[]): Promise<void> {
    const { queue, created_at, enqueued_at } = this.payload ?? {};
    await redis().rpush("payloads", JSON.stringify({ jid: this.jid, queue, args, created_at, enqueued_at }));
  }
}

/** Always fails with the given message. */
export class FailJob extends Job {
  static override options = { backtrace: 5 };
  async perform(message: string): Promise<void> {
    await redis().rpush("failed-attempts", this.jid);
    throw new Error(message);
  }
}

/** Sleeps `seconds`, stopping early if the worker abandons it on hard shutdown; then records itself. */
export class SleepJob extends Job {
  async perform(seconds: number): Promise<void> {
    await redis().rpush("started", this.jid);
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, seconds * 1000);
      this.signal.addEventListener("abort", () => {
        clearTimeout(timer);
        resolve();
      });
    });
    if (!this.signal.aborted)
      await redis().rpush("ran", JSON.stringify({ jid: this.jid, args: [seconds], pid: process.pid }));
  }
}

/** Fails with a custom error class, and custom retry hooks. */
export class CustomError extends Error {}
export class HookJob extends Job {
  static retryIn(count: number): number | "kill" | "discard" {
    return count >= 1 ? "kill" : 1;
  }
  perform(): void {
    throw new CustomError("hooked");
  }
}

/** A plain class (not extending Job) is runnable too. */
export class PlainJob {
  static jobName = "Plain::Job";
  async perform(value: string): Promise<void> {
    await redis().rpush("ran", JSON.stringify({ jid: "plain", args: [value], pid: process.pid }));
  }
}

/** Throws from a timer, outside any job promise: must not take the worker down. */
export class StrayErrorJob extends Job {
  perform(): void {
    setTimeout(() => {
      throw new Error("stray timer error");
    }, 10);
    void Promise.reject(new Error("stray rejection"));
  }
}

/**
 * The TypeScript twin of test/ruby/fleet.rb's FleetJob, for the mixed Ruby + tsq fleet test: records
 * its jid in the list `fleet` and counts the run under `fleet:tsq` (Ruby counts under `fleet:ruby`).
 * Args are [pushedBy, index], e.g. ["tsq", 17].
 */
export class FleetJob extends Job {
  async perform(_pushedBy: string, _index: number): Promise<void> {
    await redis().multi().rpush("fleet", this.jid).incr("fleet:tsq").exec();
  }
}

/**
 * Cheap counter for the cluster drain tests: INCR `counted` and SETBIT `counted:bits` <index>, so a
 * test can check both the number of runs and that every index ran at least once (BITCOUNT).
 */
/** Does nothing: a job whose cost is all the worker's. */
export class NoopJob extends Job {
  perform(): void {}
}

export class CountJob extends Job {
  async perform(index: number): Promise<void> {
    await redis().multi().incr("counted").setbit("counted:bits", index, 1).exec();
  }
}

/**
 * Like CountJob but takes `ms` first (a non-blocking nap), so a queue lasts long enough to watch a
 * rolling restart under load. Args: [index, ms].
 */
export class NapCountJob extends Job {
  async perform(index: number, ms: number): Promise<void> {
    await new Promise((resolve) => setTimeout(resolve, ms));
    await redis().multi().incr("counted").setbit("counted:bits", index, 1).exec();
  }
}

/**
 * Busy-loops the CPU for `seconds`, blocking the event loop (no heartbeat, no IPC) the whole time.
 * Records {jid, pid} in the list `spinning` first. With `warmupMs`, it first waits that long without
 * blocking (so heartbeats in between can publish it as running); without, it blocks at once, as a
 * CPU-bound job usually does.
 */
export class CpuSpinJob extends Job {
  async perform(seconds: number, warmupMs = 0): Promise<void> {
    if (warmupMs > 0) await new Promise((resolve) => setTimeout(resolve, warmupMs));
    await redis().rpush("spinning", JSON.stringify({ jid: this.jid, pid: process.pid }));
    const until = Date.now() + seconds * 1000;
    let x = 0;
    while (Date.now() < until) x = (x + Math.sqrt(x + 1)) % 1e9;
    await redis().rpush("ran", JSON.stringify({ jid: this.jid, args: [seconds], pid: process.pid, spun: x > -1 }));
  }
}

/** Holds `mb` MB of touched memory for `seconds` (for --max-memory). */
export class MemoryHogJob extends Job {
  async perform(mb: number, seconds: number): Promise<void> {
    const hog = Buffer.alloc(mb * 1024 * 1024, 1);
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, seconds * 1000);
      this.signal.addEventListener("abort", () => {
        clearTimeout(timer);
        resolve();
      });
    });
    void hog.length;
  }
}

/** Naps `ms`, then records its jid in the `done` list (chaos tests count these). */
export class MarkJob extends Job {
  async perform(ms: number): Promise<void> {
    await new Promise((r) => setTimeout(r, ms));
    await redis().rpush("done", this.jid);
  }
}

/** Takes its whole process down, every time. */
export class ExitJob extends Job {
  perform(): void {
    process.exit(1);
  }
}

/** Always fails, and asks for its retry a day from now: it lands in the retry set and stays there (metrics tests). */
export class FarRetryFailJob extends Job {
  static retryIn(): number {
    return 86_400;
  }
  perform(): void {
    throw new Error("fails on purpose; retried in a day");
  }
}

/** Periodic job for the cron tests: RPUSH cron-ran {jid, cron, cron_at, pid} (cron_at = the tick, epoch s). */
export class CronTickJob extends Job {
  async perform(): Promise<void> {
    const entry = { jid: this.jid, cron: this.payload?.cron, cron_at: this.payload?.cron_at, pid: process.pid };
    await redis().rpush("cron-ran", JSON.stringify(entry));
  }
}
