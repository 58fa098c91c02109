/**
 * Durable job classes for test/features/durable and scripts/bench/durable.ts. Each records in Redis under
 * the key prefix it is given as its first argument:
 *
 *   <key>:effects  HASH  "<jid>:<step>" -> how many times the step's side effect committed (in the step's
 *                        own MULTI, through ctx.tx: exactly once, or the test fails)
 *   <key>:calls    HASH  "<jid>:<step>" -> how many times the step's function was called
 *   <key>:runs     LIST  one entry per execution, what it saw ("run", "got:<json>", "timeout", ...)
 *   <key>:done     SET   jids that finished
 */
import { setTimeout as sleep } from "node:timers/promises";
import { defaultClient } from "../../src/client/defaultClient.js";
import { DurableJob } from "../../src/features/durable/DurableJob.js";
import { EventTimeoutError } from "../../src/features/durable/errors.js";
import { Job } from "../../src/client/Job.js";

const redis = () => defaultClient().redis;

/** Five steps, each pausing up to `pauseMs` inside its function, so a SIGKILL can land anywhere. */
export class FiveStepJob extends DurableJob {
  async perform(key: string, pauseMs = 20): Promise<void> {
    let total = 0;
    for (const name of ["charge", "reserve", "label", "notify", "close"]) {
      total += await this.step(name, async ({ tx }) => {
        await redis().hincrby(`${key}:calls`, `${this.jid}:${name}`, 1);
        await sleep(Math.random() * pauseMs);
        tx.hincrby(`${key}:effects`, `${this.jid}:${name}`, 1);
        return 1;
      });
    }
    await redis().sadd(`${key}:done`, this.jid);
    if (total !== 5) throw new Error(`the steps returned ${total}, not 5`);
  }
}

/** step "a", sleep, step "b": two executions, each step once. */
export class SleepyJob extends DurableJob {
  async perform(key: string, seconds: number): Promise<void> {
    await redis().rpush(`${key}:runs`, "run");
    const a = await this.step("a", ({ tx }) => {
      tx.hincrby(`${key}:effects`, "a", 1);
      return { at: Date.now() };
    });
    await this.sleep(seconds);
    await this.step("b", ({ tx }) => {
      tx.hincrby(`${key}:effects`, "b", 1);
      tx.set(`${key}:a-seen-by-b`, JSON.stringify(a));
    });
    await redis().sadd(`${key}:done`, this.jid);
  }
}

/** step "before", waitFor(event), step "after"; a timeout is caught and recorded. */
export class WaitingJob extends DurableJob {
  async perform(key: string, event: string, timeout: number): Promise<void> {
    await redis().rpush(`${key}:runs`, "run");
    await this.step("before", ({ tx }) => void tx.hincrby(`${key}:effects`, "before", 1));
    let seen: string;
    try {
      seen = `got:${JSON.stringify(await this.waitFor(event, { timeout }))}`;
    } catch (error) {
      if (!(error instanceof EventTimeoutError)) throw error;
      seen = "timeout";
    }
    await redis().rpush(`${key}:runs`, seen);
    await this.step("after", ({ tx }) => void tx.hincrby(`${key}:effects`, "after", 1));
    await redis().sadd(`${key}:done`, this.jid);
  }
}

/** A durable job whose steps came in another order than the journal has (a deploy changed them). */
export class ReorderedJob extends DurableJob {
  async perform(key: string, order: string[]): Promise<void> {
    for (const name of order) await this.step(name, ({ tx }) => void tx.hincrby(`${key}:effects`, name, 1));
  }
}

/** A plain job that runs until its signal aborts, then throws the reason. */
export class PoliteJob extends Job {
  async perform(key: string): Promise<void> {
    await redis().rpush(`${key}:runs`, "started");
    while (!this.signal.aborted) await sleep(20);
    await redis().rpush(`${key}:runs`, `aborted:${(this.signal.reason as Error).name}`);
    throw this.signal.reason;
  }
}

/** Times out after 1 s and ignores its signal: abandoned after a 0.5 s grace. */
export class DeafJob extends Job {
  static timeout = 1;
  static abortGrace = 0.5;
  static override options = { retry: 1 };
  async perform(key: string): Promise<void> {
    await redis().rpush(`${key}:runs`, "started");
    await new Promise<void>((resolve) => setTimeout(resolve, 60_000).unref());
  }
}

/** Times out after 1 s and honours its signal. */
export class TimedJob extends Job {
  static timeout = 1;
  static override options = { retry: 1 };
  async perform(key: string): Promise<void> {
    await redis().rpush(`${key}:runs`, "started");
    while (!this.signal.aborted) await sleep(20);
    throw this.signal.reason;
  }
}

/** Counts its runs: a plain job, to show the worker keeps serving. */
/** Counts its runs; one that starts with its signal already aborted is recorded (<key>:stale). */
export class CountJob extends Job {
  async perform(key: string): Promise<void> {
    if (this.signal.aborted) await redis().rpush(`${key}:stale`, this.jid);
    await redis().incr(`${key}:count`);
  }
}

/** Records when each execution starts (<key>:starts:<jid>, epoch ms), then waits for `event`. */
export class WakeTimedJob extends DurableJob {
  async perform(key: string, event: string): Promise<void> {
    await redis().rpush(`${key}:starts:${this.jid}`, String(Date.now()));
    await this.waitFor(event, { timeout: 3600 });
    await redis().sadd(`${key}:done`, this.jid);
  }
}

/**
 * A durable job that runs until its signal aborts: records its pid on start (<key>:runs) and the epoch
 * ms at which the abort reached it (<key>:aborted_at), then throws the reason.
 */
export class AbortTimedJob extends DurableJob {
  async perform(key: string): Promise<void> {
    await this.step("begin", () => true);
    // Read the clock in the abort listener itself: what is measured is the abort, not a later await.
    const abortedAt = new Promise<number>((resolve) => {
      if (this.signal.aborted) resolve(Date.now());
      else this.signal.addEventListener("abort", () => resolve(Date.now()), { once: true });
    });
    await redis().rpush(`${key}:runs`, `started:${process.pid}`);
    await redis().set(`${key}:aborted_at`, String(await abortedAt));
    throw this.signal.reason;
  }
}
