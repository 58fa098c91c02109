/**
 * GitLab's LimitedCapacity pattern in a real worker: performWithCapacity pushes maxRunningJobs copies,
 * they keep re-enqueuing themselves until the work is done, and extra copies find no slot and skip, so
 * no more than maxRunningJobs ever run at once.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { configureClient, defaultClient } from "../../../../src/client/defaultClient.js";
import { Client } from "../../../../src/client/Client.js";
import { useRedis } from "../../../helpers/redis.js";
import { ROOT, eventually, startTsq } from "../../../helpers/tsqProcess.js";
import { DrainJob } from "../../../jobs/limitJobs.js";

const handle = useRedis();
const JOBS = join(ROOT, "dist/test/jobs/limitJobs.js");

test(
  "two copies drain 20 units of work; extra copies skip; never more than 2 at once",
  { timeout: 120_000 },
  async (t) => {
    configureClient(new Client({ redis: handle.url }));
    t.after(() => defaultClient().close());
    await handle.redis.rpush("work", ...Array.from({ length: 20 }, (_, i) => String(i)));
    const jids = await DrainJob.performWithCapacity();
    assert.equal(jids.length, 2, "maxRunningJobs copies pushed");
    await DrainJob.performWithCapacity(); // two more: they must find the slots taken, or take freed ones
    const worker = startTsq(["-r", JOBS, "-c", "6", "-q", "default", "-t", "1"], { REDIS_URL: handle.url });
    t.after(() => worker.stop(10_000));
    await eventually(async () => (await handle.redis.llen("ran")) === 20, 60_000, "all 20 units done");
    await eventually(async () => (await handle.redis.llen("queue:default")) === 0, 10_000, "no copy left queued");
    const samples = (await handle.redis.lrange("samples:DrainJob", 0, -1)).map(Number);
    assert.equal(Math.max(...samples), 2, "two at once, never more");
    assert.deepEqual(
      (await handle.redis.lrange("ran", 0, -1)).map(Number).sort((a, b) => a - b),
      [...Array(20).keys()],
    );
    await eventually(
      async () => Object.keys(await handle.redis.hgetall("tsq:lock:limit:DrainJob")).length === 0,
      10_000,
      "slots given back",
    );
    assert.equal(await handle.redis.hget("tsq:limits", "DrainJob"), "2", "visible to tsqctl limits");
  },
);
