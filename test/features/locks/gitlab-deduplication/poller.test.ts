/**
 * The scheduled poller re-pushes due jobs with their own jid: a job locked while scheduled holds its lock
 * through the move (it is not refused as a duplicate of itself), and a scheduled job that was not locked
 * is checked when due, as GitLab's client middleware does under Ruby's poller.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { Client } from "../../../../src/client/Client.js";
import { freePort, useRedis } from "../../../helpers/redis.js";
import { request } from "../../../metrics/http.js";
import { ROOT, eventually, startTsq } from "../../../helpers/tsqProcess.js";
import { config } from "../../../reliable/chaosRun.js";
import { ScheduledDedupJob, UntilExecutedJob } from "../../../jobs/dedupJobs.js";

const handle = useRedis();
const JOBS = join(ROOT, "dist/test/jobs/dedupJobs.js");

test("due jobs keep or take their lock when the poller moves them", { timeout: 120_000 }, async (t) => {
  const client = new Client({ redis: handle.url });
  t.after(() => client.close());
  const soon = Date.now() / 1000 + 2;
  // Locked while scheduled: the move must not refuse it as its own duplicate.
  const locked = (await client.push({ class: ScheduledDedupJob, args: [1], at: soon }))!;
  assert.equal(await client.push({ class: ScheduledDedupJob, args: [1], at: soon }), locked);
  // Not locked while scheduled (the default), but a copy is queued: dropped when due, as a duplicate.
  const queued = (await client.push({ class: UntilExecutedJob, args: [7, 0] }))!;
  const later = (await client.push({ class: UntilExecutedJob, args: [7, 0], at: soon }))!;
  assert.notEqual(later, queued, "a scheduled push is not deduplicated without includingScheduled");
  assert.match((await handle.redis.zrange("schedule", 0, 0))[0] ?? "", /"idempotency_key"/);

  // The worker polls but runs another queue, so the queued copy still holds its lock when `later` is due.
  const port = await freePort();
  const worker = startTsq(
    ["-r", JOBS, "-q", "other", "-t", "1", "-C", config("poll_interval_average: 1\n"), "--metrics-port", String(port)],
    { REDIS_URL: handle.url },
  );
  t.after(() => worker.stop(5000));
  await eventually(async () => (await handle.redis.zcard("schedule")) === 0, 30_000, "the poller moved both");
  const line = await worker.waitForLine((l) => l.jid === later && l.job_status === "deduplicated");
  assert.equal(line["duplicate-of"], queued, "the due copy is dropped as a duplicate of the queued one");
  assert.ok(!worker.lines.some((l) => l.jid === locked && l.job_status === "deduplicated"), "never its own duplicate");
  // The poller pushes a job that names a lock through the client, a round trip after its script took it
  // from the set: the duplicate's line can come before the locked job is queued.
  const inQueue = await eventually(
    async () => {
      const jids = (await handle.redis.lrange("queue:default", 0, -1)).map(
        (j) => (JSON.parse(j) as { jid: string }).jid,
      );
      return jids.length >= 2 ? jids : undefined;
    },
    30_000,
    "the locked job reaches queue:default",
  );
  assert.deepEqual(inQueue.sort(), [locked, queued].sort(), "the locked job was moved; the duplicate was not");
  const lock = (await handle.redis.keys("tsq:lock:dedup:*")).length;
  assert.equal(lock, 2, "both queued jobs hold their locks");
  const metrics = await eventually(
    async () => {
      const { body } = await request(port, "/metrics");
      return body.includes("tsq_jobs_deduplicated_total") ? body : undefined;
    },
    20_000,
    "the worker's /metrics counts the dropped duplicate",
  );
  assert.match(metrics, /tsq_jobs_deduplicated_total\{queue="default",class="UntilExecutedJob"\} 1\b/);
});
