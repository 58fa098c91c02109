/**
 * Jobs for the shard tests (test/shards): a job on the default shard that enqueues one on the other
 * shard, and a counter. Each records on the Redis of the process that ran it, its shard's.
 */
import { Job, defaultClient } from "../../src/index.js";

function redis() {
  return defaultClient().redis;
}

/** Counts its run (`ran:<queue>` and a bit per index) on the shard that ran it. */
export class ShardCountJob extends Job {
  async perform(index: number): Promise<void> {
    const queue = String(this.payload?.queue);
    await redis().multi().incr(`ran:${queue}`).setbit(`ran:${queue}:bits`, index, 1).exec();
  }
}

/** Runs on queue `a` and enqueues a ShardCountJob on queue `b`, which lives on another shard. */
export class HopJob extends Job {
  static override options = { queue: "a" };

  async perform(index: number): Promise<void> {
    await redis().incr("hopped");
    await ShardCountJob.set({ queue: "b" }).performAsync(index);
  }
}
