/**
 * Job classes for test/features/durable/ends.test.ts, race.test.ts and lifetime.test.ts: where a durable job's pauses, deadlines, cancels
 * and timeouts meet. Each records in Redis under the key prefix it is given as its first argument:
 *
 *   <key>:effects  HASH  "<jid>:<step>" -> how many times the step committed (through ctx.tx: exactly once)
 *   <key>:runs     LIST  one entry per execution, or what it saw ("got:<json>", "timeout")
 *   <key>:done     SET   jids whose perform returned
 */
import { setTimeout as sleep } from "node:timers/promises";
import { defaultClient } from "../../src/client/defaultClient.js";
import { Job } from "../../src/client/Job.js";
import { DurableJob, type StepContext } from "../../src/features/durable/DurableJob.js";
import { EventTimeoutError } from "../../src/features/durable/errors.js";

const redis = () => defaultClient().redis;

function counted(key: string, jid: string | undefined, name: string) {
  return ({ tx }: StepContext) => {
    tx.hincrby(`${key}:effects`, `${jid}:${name}`, 1);
    return name;
  };
}

/** step "a", sleep(seconds), step "b", with a journal TTL of 3 s: shorter than the sleep. */
export class ShortJournalJob extends DurableJob {
  static override journalTtl = 3;
  async perform(key: string, seconds: number): Promise<void> {
    await redis().rpush(`${key}:runs`, "run");
    await this.step("a", counted(key, this.jid, "a"));
    await this.sleep(seconds);
    await this.step("b", counted(key, this.jid, "b"));
    await redis().sadd(`${key}:done`, this.jid);
  }
}

/**
 * step "a", then fails on its first attempt (retried in 600 s; its journal TTL is 3 s), then step "b".
 * `inFirstStep`: the first attempt fails inside step "a" instead, so nothing is recorded.
 */
export class RetryingJournalJob extends DurableJob {
  static override journalTtl = 3;
  static override retryIn(count: number, error: Error): unknown {
    return super.retryIn(count, error) ?? 600; // seconds
  }
  async perform(key: string, inFirstStep = false): Promise<void> {
    const first = (await redis().incr(`${key}:attempts:${this.jid}`)) === 1;
    await this.step("a", (ctx) => {
      if (first && inFirstStep) throw new Error("the first attempt fails in step a");
      return counted(key, this.jid, "a")(ctx);
    });
    if (first) throw new Error("the first attempt fails after step a");
    await this.step("b", counted(key, this.jid, "b"));
  }
}

/** step "charge", waitFor(`shipped:<id>`), sleep(1), step "email"; returns the order and its shipment. */
export class OrderJob extends DurableJob {
  static override options = { result: { ttl: 600 } };
  async perform(key: string, orderId: string): Promise<{ orderId: string; shipment: unknown; email: string }> {
    await redis().rpush(`${key}:runs`, "run");
    await this.step("charge", counted(key, this.jid, "charge"));
    const shipment = await this.waitFor(`shipped:${orderId}`, { timeout: 3600 });
    await this.sleep(1);
    const email = await this.step("email", counted(key, this.jid, "email"));
    return { orderId, shipment, email };
  }
}

/**
 * Six steps of 300 ms each that ignore this.signal (a long grace, so it is never abandoned). Records
 * "<key>:started" when its second step starts. Opted in to outcomes.
 */
export class DeafStepsJob extends DurableJob {
  static abortGrace = 30; // seconds
  static override options = { result: { ttl: 600 } };
  async perform(key: string): Promise<string> {
    for (let i = 1; i <= 6; i++) {
      await this.step(`s${i}`, async (ctx) => {
        if (i === 2) await redis().set(`${key}:started`, "1");
        await sleep(300); // ignores the signal
        return counted(key, this.jid, `s${i}`)(ctx);
      });
    }
    await redis().sadd(`${key}:done`, this.jid);
    return "finished";
  }
}

/** A plain job that ignores its 1 s timeout and returns at 2.5 s, inside its 5 s grace. */
export class LateJob extends Job {
  static timeout = 1; // seconds
  static abortGrace = 5; // seconds
  static override options = { retry: 3, result: { ttl: 600 } };
  async perform(key: string): Promise<string> {
    await sleep(2500);
    await redis().sadd(`${key}:done`, this.jid ?? "");
    return "late";
  }
}

/** Waits for `event` until the whole second `deadlineMs` (epoch ms), then records what it saw, once. */
export class RaceJob extends DurableJob {
  async perform(key: string, event: string, deadlineMs: number): Promise<void> {
    const timeout = Math.max(0, (deadlineMs - Date.now()) / 1000);
    let seen: string;
    try {
      seen = `got:${JSON.stringify(await this.waitFor(event, { timeout }))}`;
    } catch (error) {
      if (!(error instanceof EventTimeoutError)) throw error;
      seen = "timeout";
    }
    await this.step("after", ({ tx }) => {
      tx.rpush(`${key}:seen:${this.jid}`, seen);
    });
    await redis().sadd(`${key}:done`, this.jid);
  }
}
