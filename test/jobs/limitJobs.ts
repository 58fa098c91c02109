/**
 * Concurrency-limited job classes for the limit tests, loaded by real `tsq` / `tsq-cluster` processes.
 * Each records in Redis what it saw, so tests observe from outside: `inflight` (INCR on start, DECR on
 * end) with every value it read on start pushed to `samples`, its argument pushed to `order` on start,
 * and `{jid, pid}` to `started`. Ids are push positions: on start a job also pushes to `behind` how many
 * jobs of lower id have not finished (`finished` holds the ids of those that did).
 */
import { Job, LimitedCapacityJob, defaultClient } from "../../src/index.js";

function redis() {
  return defaultClient().redis;
}

async function run(job: Job, id: number, ms: number): Promise<void> {
  const name = job.constructor.name;
  const inflight = await redis().incr(`inflight:${name}`);
  const replies = await redis()
    .multi()
    .rpush(`samples:${name}`, String(inflight))
    .rpush(`order:${name}`, String(id))
    .rpush("started", JSON.stringify({ jid: job.jid, id, pid: process.pid }))
    .zcount(`finished:${name}`, "-inf", `(${id}`)
    .exec();
  await redis().rpush(`behind:${name}`, String(id - Number(replies?.[3]?.[1] ?? 0)));
  if (ms > 0) {
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms);
      job.signal.addEventListener("abort", () => {
        clearTimeout(timer);
        resolve();
      });
    });
  }
  await redis().decr(`inflight:${name}`);
  await redis().multi().zadd(`finished:${name}`, id, String(id)).rpush("ran", String(id)).exec();
}

/** At most 3 at once across every process. */
export class ThreeAtOnceJob extends Job {
  static concurrencyLimit = 3;
  async perform(id: number, ms = 50): Promise<void> {
    await run(this, id, ms);
  }
}

/** One at a time: a mutex. */
export class OneAtOnceJob extends Job {
  static concurrencyLimit = 1;
  async perform(id: number, ms = 0): Promise<void> {
    await run(this, id, ms);
  }
}

/** Paused (a negative limit) unless the worker was started with PAUSED_JOB_LIMIT set. */
export class PausedJob extends Job {
  static concurrencyLimit = (): number => Number(process.env.PAUSED_JOB_LIMIT ?? -1);
  async perform(id: number): Promise<void> {
    await run(this, id, 0);
  }
}

/** No limit: the bench's baseline. */
export class UnlimitedJob extends Job {
  async perform(id: number, ms = 0): Promise<void> {
    await run(this, id, ms);
  }
}

/** LimitedCapacity: 2 copies drain the `work` list, one item per run, 100 ms each. */
export class DrainJob extends LimitedCapacityJob {
  async performWork(): Promise<void> {
    const item = await redis().lpop("work");
    if (item === null) return;
    await run(this, Number(item), 100);
  }
  async remainingWorkCount(): Promise<number> {
    return redis().llen("work");
  }
  maxRunningJobs(): number {
    return 2;
  }
}

/** Limited and deduplicated (until_executed): a parked job keeps its dedup lock. */
export class LimitedExecutedJob extends Job {
  static concurrencyLimit = 1;
  static idempotent = true;
  static deduplicate = { strategy: "until_executed" as const };
  async perform(id: number, ms = 0): Promise<void> {
    await run(this, id, ms);
  }
}

/** Limited and deduplicated (until_executing): the lock is released when the job starts, not when it parks. */
export class LimitedExecutingJob extends Job {
  static concurrencyLimit = 1;
  static idempotent = true;
  async perform(id: number, ms = 0): Promise<void> {
    await run(this, id, ms);
  }
}
