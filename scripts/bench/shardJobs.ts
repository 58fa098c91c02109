// Jobs of `npm run bench:shards`, loaded by the tsq-cluster children with -r. Each reports on the Redis
// of the process that ran it (its shard's), so the bench can count finished jobs per shard.
import { Job, defaultClient } from "../../src/index.js";

/** Costs its shard's Redis `ms` of server time (DEBUG SLEEP), then counts itself: a Redis-bound job. */
export class RedisBoundJob extends Job {
  async perform(ms: number): Promise<void> {
    const redis = defaultClient().redis;
    await redis.call("DEBUG", "SLEEP", String(ms / 1000));
    await redis.incr("bench:done");
  }
}

/** Only counts itself: the worker-bound case, where a second Redis should change little. */
export class CountOnlyJob extends Job {
  async perform(): Promise<void> {
    await defaultClient().redis.incr("bench:done");
  }
}
