/**
 * OverLimitError out of perform, with a real `tsq` worker: the same job (same jid) is rescheduled with
 * `overrated` counting up and `tsq:stat:overrated` counting, up to the limiter's cap; past it the error
 * goes to ordinary retries with `overrated` cleared, so the retry gets its own reschedules.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "../../../../src/client/Client.js";
import { Limiter } from "../../../../src/features/locks/enterprise-rate-limits/index.js";
import { useRedis } from "../../../helpers/redis.js";
import { ROOT, eventually, startTsq } from "../../../helpers/tsqProcess.js";

const handle = useRedis();
const JOBS = join(ROOT, "dist/test/jobs/rateLimitJobs.js");

test(
  "over the limit: rescheduled twice (the cap), then to the retry set, never run",
  { timeout: 120_000 },
  async (t) => {
    assert.match(handle.url, /^redis:\/\/127\.0\.0\.1:\d+\/0$/, "the private Redis is up");
    // Fill the job's limiter (1 per hour) from here: every run of the job is over it.
    await Limiter.window("rare", 1, "hour", { redis: handle.redis }).withinLimit(() => undefined);
    const cfg = join(mkdtempSync(join(tmpdir(), "tsq-overrated-")), "tsq.yml");
    writeFileSync(cfg, "poll_interval_average: 1\n");
    const worker = startTsq(["-r", JOBS, "-c", "2", "-q", "default", "-t", "1", "-C", cfg], { REDIS_URL: handle.url });
    t.after(() => worker.stop(5_000));
    const client = new Client({ redis: handle.url });
    const jid = await client.push({ class: "OverratedJob", args: [7] });
    await client.close();
    const retried = await eventually(
      async () => (await handle.redis.zrange("retry", 0, -1))[0],
      60_000,
      "the job reached the retry set",
      200,
    );
    const attempts = (await handle.redis.lrange("attempts:overrated", 0, -1)).map(
      (line) => JSON.parse(line) as { overrated: number },
    );
    const job = JSON.parse(retried) as Record<string, unknown>;
    console.log(`attempts with overrated = ${attempts.map((a) => a.overrated).join(", ")}; then retry set`);
    assert.deepEqual(
      attempts.map((a) => a.overrated),
      [0, 1, 2],
      "run, rescheduled with overrated 1, 2, then the cap",
    );
    assert.equal(job.jid, jid, "the same job throughout");
    assert.equal(job.error_class, "OverLimitError");
    assert.match(String(job.error_message), /rate limiter window rare is over its limit/);
    assert.equal(job.overrated, undefined, "overrated cleared for the retry (Enterprise #6010)");
    assert.equal(Number(await handle.redis.get("tsq:stat:overrated")), 2, "two reschedules counted");
    assert.equal(await handle.redis.llen("ran:overrated"), 0, "the limited section never ran");
    const line = await worker.waitForLine((l) => l.job_status === "overrated", 5_000);
    assert.equal(line.limiter, "window rare");
  },
);
