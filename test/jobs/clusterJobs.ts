/**
 * Jobs for the Redis Cluster tests (test/platform/shards/redisCluster*.test.ts). Each run records its
 * jid in a separate plain Redis named by TSQ_RECORD_URL (the "application database"), so runs lost or
 * repeated by a fault under test show as they are.
 */
import { Job, defaultClient } from "../../src/index.js";
import { connect, type TsqRedis } from "../../src/platform/redis/connection.js";

let record: TsqRedis | undefined;

function recordRedis(): TsqRedis {
  const url = process.env.TSQ_RECORD_URL;
  if (!url) throw new Error("TSQ_RECORD_URL is not set; the cluster tests give the record Redis's URL");
  record ??= connect(url, { name: "tsq-test-record" });
  return record;
}

async function recordRun(jid: string, queue: string): Promise<void> {
  await recordRedis().multi().sadd("done", jid).incr("runs").incr(`ran:${queue}`).exec();
}

/**
 * Sleeps `ms`, then records its run, and bumps a probe in its own slot group (through the worker's
 * client), by which a fault test sees the first job completed against a promoted master.
 */
export class ClusterRecordJob extends Job {
  async perform(ms = 0): Promise<void> {
    if (ms > 0) await new Promise((resolve) => setTimeout(resolve, ms));
    await recordRun(this.jid, String(this.payload?.queue));
    // The worker's client writes the job's queue's group; a write lost in a failover is fine to lose.
    await defaultClient()
      .redisFor(String(this.payload?.queue))
      .incr("probe:completed")
      .catch(() => undefined);
  }
}

/** Fails its first run, retried a second later (through the group's retry set and poller), then records. */
export class ClusterFlakyJob extends Job {
  static retryIn(): number {
    return 1;
  }
  async perform(): Promise<void> {
    if (this.payload?.retry_count === undefined) throw new Error("fails its first run on purpose");
    await recordRun(this.jid, String(this.payload?.queue));
  }
}

/** Always fails; one retry a second later, then the group's dead set. */
export class ClusterDoomedJob extends Job {
  static override options = { retry: 1 };
  static retryIn(): number {
    return 1;
  }
  perform(): void {
    throw new Error("fails on purpose, every time");
  }
}

/** Enqueues a ClusterRecordJob on queue `to` (another slot group) through the worker's client. */
export class ClusterHopJob extends Job {
  async perform(to: string): Promise<void> {
    await ClusterRecordJob.set({ queue: to }).performAsync(0);
  }
}
