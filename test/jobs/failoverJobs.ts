/**
 * Jobs for the Sentinel failover test. Each run records its jid in a separate, plain Redis named by
 * TSQ_RECORD_URL (the "application database"): what it records must not depend on the failover under
 * test, so lost or repeated runs show up as they are.
 */
import { Job, defaultClient } from "../../src/index.js";
import { connect, type TsqRedis } from "../../src/platform/redis/connection.js";

let record: TsqRedis | undefined;

function recordRedis(): TsqRedis {
  const url = process.env.TSQ_RECORD_URL;
  if (!url) throw new Error("TSQ_RECORD_URL is not set; the failover test gives the record Redis's URL");
  record ??= connect(url, { name: "tsq-test-record" });
  return record;
}

/** Sleeps `ms`, records its jid (SADD done) and its run (INCR runs), and bumps a probe on tsq's Redis. */
export class FailoverJob extends Job {
  async perform(ms: number): Promise<void> {
    await new Promise((resolve) => setTimeout(resolve, ms));
    await recordRedis().multi().sadd("done", this.jid).incr("runs").exec();
    // Lets the test see the first job that completes against the new primary; a write refused by the
    // demoted one is fine to lose (the probe is not the record).
    await defaultClient()
      .redis.incr("probe:completed")
      .catch(() => undefined);
  }
}
