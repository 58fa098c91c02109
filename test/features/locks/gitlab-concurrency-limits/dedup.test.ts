/**
 * Concurrency limits and deduplication together, in a real worker: a parked job has not started, so it
 * keeps its dedup lock (a push of the same job meanwhile is its duplicate) until it runs, for both
 * strategies; then the lock is released as the strategy says.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { Client } from "../../../../src/client/Client.js";
import { useRedis } from "../../../helpers/redis.js";
import { ROOT, eventually, startTsq } from "../../../helpers/tsqProcess.js";
import { LimitedExecutedJob, LimitedExecutingJob } from "../../../jobs/limitJobs.js";

const handle = useRedis();
const JOBS = join(ROOT, "dist/test/jobs/limitJobs.js");

for (const klass of [LimitedExecutedJob, LimitedExecutingJob]) {
  test(`${klass.name}: a parked job keeps its dedup lock until it runs`, { timeout: 120_000 }, async (t) => {
    const client = new Client({ redis: handle.url });
    t.after(() => client.close());
    const worker = startTsq(["-r", JOBS, "-c", "3", "-q", "default", "-t", "1"], { REDIS_URL: handle.url });
    t.after(() => worker.stop(10_000));
    await client.push({ class: klass, args: [1, 3000] });
    await eventually(async () => (await handle.redis.llen("started")) === 1, 30_000, "the long job holds the one slot");
    const parked = await client.push({ class: klass, args: [2, 0] });
    await eventually(
      async () => (await handle.redis.llen(`tsq:limit-parked:${klass.name}`)) === 1,
      30_000,
      "the second job parks",
    );
    assert.equal(
      await client.push({ class: klass, args: [2, 0] }),
      parked,
      "while parked, a push of it is a duplicate",
    );
    await eventually(async () => (await handle.redis.lrange("ran", 0, -1)).includes("2"), 30_000, "the parked job ran");
    assert.equal(await handle.redis.llen("ran"), 2, "the duplicate never ran");
    await eventually(async () => (await handle.redis.keys("tsq:lock:dedup:*")).length === 0, 10_000, "lock released");
    const next = await client.push({ class: klass, args: [2, 0] });
    assert.ok(next !== null && next !== parked, "accepted once the parked job has run");
  });
}
