/**
 * Jobs for the batch and workflow tests, loaded by real tsq processes (`-r dist/test/jobs/batchJobs.js`).
 * They report through Redis so the tests observe them from outside.
 */
import { Batch, Job, defaultClient } from "../../src/index.js";

function redis() {
  return defaultClient().redis;
}

/** A batch member: records its runs; fails its first attempt when `failOnce`, always when `dieAlways`. */
export class MemberJob extends Job {
  static override options = { retry: 3 };
  static retryIn(): number {
    return 1; // seconds (plus Sidekiq's jitter): keep the tests short
  }
  async perform(i: number, mode: "ok" | "failOnce" | "dieUntilHealed" = "ok", sleepMs = 0): Promise<number> {
    const bid = String(this.payload?.bid);
    await redis().sadd(`ran:${bid}`, this.jid);
    if (sleepMs > 0) await new Promise((r) => setTimeout(r, sleepMs));
    if (mode === "dieUntilHealed" && (await redis().get(`healed:${this.jid}`)) === null)
      throw new Error(`member ${i} dies until healed`);
    if (mode === "failOnce" && this.payload?.retry_count === undefined) throw new Error(`member ${i} fails (${mode})`);
    await redis().sadd(`succeeded:${bid}`, this.jid);
    return i * 10;
  }
}

/** A batch member that never retries: its first failure is its death. */
export class FragileJob extends Job {
  static override options = { retry: 0 };
  perform(): void {
    throw new Error("fragile member died");
  }
}

/** A callback: records the event with what the batch's members had done by then. */
export class CallbackJob extends Job {
  async perform(status: { bid: string; event: string }, options: Record<string, unknown>): Promise<void> {
    const [ran, succeeded] = await Promise.all([
      redis().scard(`ran:${status.bid}`),
      redis().scard(`succeeded:${status.bid}`),
    ]);
    // enqueued_at is written by the Lua call that fires the callback: two firings would differ in it,
    // while a re-run of one pushed callback (reliable fetch after a SIGKILL) repeats it.
    const pushedAt = this.payload?.enqueued_at;
    await redis().rpush("callbacks", JSON.stringify({ ...status, options, ran, succeeded, jid: this.jid, pushedAt }));
  }
}

/** A member that reopens its batch and adds `extra` members, then opens a child batch of `kids` members. */
export class FanJob extends Job {
  async perform(extra: number, kids: number, kidMode: "ok" | "die" = "ok"): Promise<void> {
    await this.batch!.jobs(async () => {
      for (let i = 0; i < extra; i++) await MemberJob.performAsync(i, "ok", 50);
    });
    if (kids === 0) return;
    const child = new Batch({ description: "child of a fan job" });
    child.on("success", CallbackJob, { level: "child" }).on("death", CallbackJob, { level: "child" });
    await child.jobs(async () => {
      for (let i = 0; i < kids; i++) {
        if (i === 0 && kidMode === "die") await FragileJob.performAsync();
        else await MemberJob.performAsync(i, "ok", 300);
      }
    });
    await redis().rpush("children", child.bid);
  }
}

/** Workflow steps: each returns a value the next stage reads. */
export class FetchStep extends Job {
  perform(n: number): number {
    return n;
  }
}

export class PartStep extends Job {
  static override options = { retry: 0 }; // a failure is a death: the policy tests stay short
  async perform(factor: number, die = false): Promise<number> {
    if (die) throw new Error(`part ${factor} fails for good`);
    const { FetchStep: n } = (await this.workflow!.results()) as { FetchStep: number };
    return n * factor;
  }
}

export class MergeStep extends Job {
  async perform(): Promise<number> {
    const results = await this.workflow!.results();
    const sum = Object.entries(results)
      .filter(([name]) => name.startsWith("PartStep"))
      .reduce((total, [, value]) => total + Number(value), 0);
    await redis().rpush("merged", JSON.stringify({ id: this.workflow!.id, sum, seen: Object.keys(results).sort() }));
    return sum;
  }
}

/** A member of a class limited to one at a time: the others are parked, then resumed. */
export class LimitedMemberJob extends Job {
  static concurrencyLimit = 1;
  async perform(): Promise<void> {
    const bid = String(this.payload?.bid);
    await redis().sadd(`ran:${bid}`, this.jid);
    await new Promise((r) => setTimeout(r, 200));
    await redis().sadd(`succeeded:${bid}`, this.jid);
  }
}

/**
 * Opens a child batch and, on its first run only, hangs inside the child's block (after pushing) until
 * the test SIGKILLs the process: reliable fetch runs it again, with the same jid.
 */
export class HangInBlockJob extends Job {
  async perform(): Promise<void> {
    const child = new Batch({ description: "child opened by a job that gets killed" });
    child.on("success", CallbackJob, { level: "child" });
    await child.jobs(async () => {
      for (let i = 0; i < 2; i++) await MemberJob.performAsync(i);
      await redis().rpush("children", child.bid);
      if ((await redis().incr(`runs:${this.jid}`)) === 1) await new Promise(() => undefined); // killed here
    });
  }
}
