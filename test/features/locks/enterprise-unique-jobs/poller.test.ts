/**
 * The scheduled poller re-pushes due jobs with their own jid: a scheduled unique job holds its lock
 * through the move (not refused as its own duplicate, Ent #2499) and keeps it for uniqueFor from then;
 * a due retry that released its lock (uniqueRetries: false) takes it again, or is refused if an
 * identical job holds it. Refused pushes are counted in the worker's /metrics.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { Client } from "../../../../src/client/Client.js";
import { freePort, useRedis } from "../../../helpers/redis.js";
import { request } from "../../../metrics/http.js";
import { ROOT, eventually, startTsq } from "../../../helpers/tsqProcess.js";
import { config } from "../../../reliable/chaosRun.js";
import { ReleasingRetryJob, UniqueJob } from "../../../jobs/uniqueJobs.js";

const handle = useRedis();
const JOBS = join(ROOT, "dist/test/jobs/uniqueJobs.js");

test("due unique jobs keep their lock when the poller moves them", { timeout: 120_000 }, async (t) => {
  const client = new Client({ redis: handle.url });
  t.after(() => client.close());
  const soon = Date.now() / 1000 + 2;
  const scheduled = (await client.push({ class: UniqueJob, args: [1], at: soon }))!;
  assert.equal(await client.push({ class: UniqueJob, args: [1] }), null, "locked while scheduled");
  assert.match((await handle.redis.zrange("schedule", 0, 0))[0] ?? "", /"unique_for":600/, "Enterprise's field");

  // Two failed jobs that released their locks at failure (uniqueRetries: false), waiting in `retry`: one
  // (`other`) is an identical copy of a job pushed again meanwhile, the other (`released`) has no rival.
  const queued = (await client.push({ class: ReleasingRetryJob, args: [2] }))!;
  const released = (await client.push({ class: ReleasingRetryJob, args: [3] }))!;
  type Stored = { jid: string; tsq_unique_key: string; [field: string]: unknown };
  const jobs = (await handle.redis.lrange("queue:default", 0, -1)).map((text) => JSON.parse(text) as Stored);
  await handle.redis.del("queue:default");
  const copy = jobs.find((job) => job.jid === queued)!;
  const free = jobs.find((job) => job.jid === released)!;
  const other = { ...copy, jid: "0123456789abcdef01234567", retry_count: 0 };
  for (const job of [other, free]) await handle.redis.zadd("retry", String(Date.now() / 1000 + 2), JSON.stringify(job));
  await handle.redis.hdel(copy.tsq_unique_key, queued);
  await handle.redis.hdel(free.tsq_unique_key, released);
  const holder = (await client.push({ class: ReleasingRetryJob, args: [2] }))!;
  assert.ok(holder !== null, "accepted: the failed copy released the lock");

  // The worker polls but runs another queue, so the moved jobs stay queued for the test to see.
  const port = await freePort();
  const worker = startTsq(
    ["-r", JOBS, "-q", "other", "-t", "1", "-C", config("poll_interval_average: 1\n"), "--metrics-port", String(port)],
    { REDIS_URL: handle.url },
  );
  t.after(() => worker.stop(5000));
  await eventually(
    async () => (await handle.redis.zcard("schedule")) + (await handle.redis.zcard("retry")) === 0,
    30_000,
    "the poller moved every due job",
  );
  const line = await worker.waitForLine((l) => l.jid === other.jid && l.job_status === "not_unique");
  assert.equal(line.lock_holder, holder, "the due retry is refused: an identical job holds the lock");
  assert.ok(!worker.lines.some((l) => l.jid === scheduled && l.job_status === "not_unique"), "never its own duplicate");
  // A job that names a lock leaves its set in the poller's script and reaches its queue through the
  // client a round trip later, so the refusal above can be logged before the scheduled job is queued.
  const expected = [scheduled, holder, released].sort();
  const inQueue = await eventually(
    async () => {
      const jids = (await handle.redis.lrange("queue:default", 0, -1)).map(
        (j) => (JSON.parse(j) as { jid: string }).jid,
      );
      return jids.length >= expected.length ? jids : undefined;
    },
    30_000,
    "the moved jobs reach queue:default",
  );
  assert.deepEqual(inQueue.sort(), expected, "moved: the scheduled job and the free retry");

  // Each queued job holds its lock; the scheduled job's now lasts uniqueFor (600 s) from the move.
  const holds = new Map<string, string>();
  for (const key of await handle.redis.keys("tsq:lock:unique:*"))
    for (const jid of Object.keys(await handle.redis.hgetall(key))) holds.set(jid, key);
  assert.deepEqual([...holds.keys()].sort(), [scheduled, holder, released].sort(), "each queued job holds its lock");
  const ttl = await handle.redis.pttl(holds.get(scheduled)!);
  assert.ok(ttl > 590_000 && ttl <= 600_000, `the moved job's lock lasts uniqueFor from the move, PTTL ${ttl} ms`);

  const metrics = await eventually(
    async () => {
      const { body } = await request(port, "/metrics");
      return body.includes("tsq_jobs_unique_rejected_total") ? body : undefined;
    },
    20_000,
    "the worker's /metrics counts the refused push",
  );
  assert.match(metrics, /tsq_jobs_unique_rejected_total\{queue="default",class="ReleasingRetryJob"\} 1\b/);
});
