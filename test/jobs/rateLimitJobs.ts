/**
 * Rate-limited job classes for the rate-limit tests and bench, loaded by real `tsq` / `tsq-cluster`
 * processes. Each records in Redis what it saw, so tests observe from outside.
 */
import { setTimeout as sleep } from "node:timers/promises";
import { Job, Limiter, defaultClient } from "../../src/index.js";

function redis() {
  return defaultClient().redis;
}

/**
 * At most 5 at once through `Limiter.concurrent`: a call waits up to 1 s for a lease, else the job is
 * rescheduled 1 s later. Records the in-flight count it saw (`samples:five`), its id in `ran:five`.
 */
const five = Limiter.concurrent("five", 5, { waitTimeout: 1, lockTimeout: 30, backoff: () => 1 });
export class FiveAtOnceJob extends Job {
  async perform(id: number, ms: number): Promise<void> {
    await five.withinLimit(async () => {
      const inflight = await redis().incr("inflight:five");
      await redis().rpush("samples:five", String(inflight));
      await sleep(ms);
      await redis().decr("inflight:five");
    });
    await redis().rpush("ran:five", String(id));
  }
}

/**
 * 100 in any sliding second through `Limiter.window`: waits up to 2 s, else rescheduled 1 s later.
 * Records each admission's time on the Redis clock (`admitted:window`).
 */
const perSecond = Limiter.window("per-second", 100, 1, { waitTimeout: 2, backoff: () => 1 });
export class WindowJob extends Job {
  async perform(id: number): Promise<void> {
    await perSecond.withinLimit(async (grant) => {
      await redis().rpush("admitted:window", `${grant.at}:${id}:${Date.now()}`);
    });
  }
}

/**
 * A class limit per tenant, enforced before perform: one running per tenant, and at most 2 starts per
 * tenant in any second. Records the per-tenant in-flight count (`over:tenant` counts any above 1) and,
 * per run, how often the job was parked and rescheduled (`ran:tenant`).
 */
export class TenantJob extends Job {
  static limit = { key: (args: unknown[]) => String(args[0]), concurrency: 1, rate: { limit: 2, period: 1 } };
  async perform(tenant: string, id: number, ms: number): Promise<void> {
    const inflight = await redis().hincrby("inflight:tenant", tenant, 1);
    if (inflight > 1) await redis().incr("over:tenant");
    await redis().rpush(
      "ran:tenant",
      JSON.stringify({ tenant, id, parked: this.payload?.limit_parked ?? 0, overrated: this.payload?.overrated ?? 0 }),
    );
    await sleep(ms);
    await redis().hincrby("inflight:tenant", tenant, -1);
  }
}

/** Over a 1-per-hour window the test fills first: rescheduled twice (back-off 1 s), then to retries. */
const rare = Limiter.window("rare", 1, "hour", { reschedule: 2, backoff: () => 1 });
export class OverratedJob extends Job {
  static override options = { retry: 1 };
  async perform(id: number): Promise<void> {
    await redis().rpush("attempts:overrated", JSON.stringify({ id, overrated: this.payload?.overrated ?? 0 }));
    await rare.withinLimit(() => redis().rpush("ran:overrated", String(id)));
  }
}

/** The bench's pair: a class limit high enough never to throttle, and the same job without one. */
export class LimitedBenchJob extends Job {
  static limit = {
    key: (args: unknown[]) => `k${String(args[0])}`,
    concurrency: 1_000,
    rate: { limit: 1_000_000, period: 1 },
  };
  async perform(): Promise<void> {}
}
export class PlainBenchJob extends Job {
  async perform(): Promise<void> {}
}
