/**
 * Expiring jobs with a real `tsq` worker: a job whose `expiresIn` has passed is dropped before perform,
 * logged with jid, class and how late, counted in tsq_jobs_expired_total and never retried; the deadline
 * counts from the scheduled time (`at`) for a scheduled job; a Ruby-style payload with only `expires_in`
 * is honoured too.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { Client } from "../../../../src/client/Client.js";
import { configureClient, closeDefaultClient } from "../../../../src/client/defaultClient.js";
import { Job } from "../../../../src/client/Job.js";
import { ArgumentError } from "../../../../src/wire/errors.js";
import { deadlineOf } from "../../../../src/features/flow/expiry/expire.js";
import { freePort, useRedis } from "../../../helpers/redis.js";
import { TEST_JOBS, eventually, startTsq } from "../../../helpers/tsqProcess.js";
import { sleep } from "../../../../src/platform/util/sleep.js";
import { scratchDir } from "../../../helpers/fixtures.js";
import { writeFileSync } from "node:fs";
import { join } from "node:path";

const handle = useRedis();

/** The worker's RecordJob (test/jobs/testJobs.ts), pushed with a class-level expiry. */
class ExpiringRecord extends Job {
  static override jobName = "RecordJob";
  static override options = { expiresIn: 1 };
  perform(): void {}
}

/** The worker's FailJob: would fail and be retried if it ran. */
class ExpiringFail extends Job {
  static override jobName = "FailJob";
  static override options = { expiresIn: 1 };
  perform(): void {}
}

async function ranJids(): Promise<string[]> {
  return (await handle.redis.lrange("ran", 0, -1)).map((text) => (JSON.parse(text) as { jid: string }).jid);
}

async function expiredMetric(port: number, klass: string): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  const line = text.split("\n").find((l) => l.startsWith("tsq_jobs_expired_total{") && l.includes(`class="${klass}"`));
  return line ? Number(line.split(" ").pop()) : 0;
}

test("expired jobs are dropped before perform, logged, counted and never retried; fresh ones run", async (t) => {
  const client = configureClient({ redis: handle.url });
  t.after(() => closeDefaultClient());
  const stale = await ExpiringRecord.performAsync(); // class option: 1 s
  const staleViaSet = await ExpiringRecord.set({ expiresIn: 0.5 }).performAsync();
  const failing = await ExpiringFail.performAsync();
  const fresh = await ExpiringRecord.set({ expiresIn: 120 }).performAsync();
  const plain = await client.push({ class: "RecordJob", args: [] });
  const stored = (await handle.redis.lrange("queue:default", 0, -1)).map(
    (text) => JSON.parse(text) as Record<string, number>,
  );
  for (const job of stored) {
    if (job.expires_in === undefined) continue;
    assert.ok(
      Math.abs(job.expires_at! - (job.created_at! + job.expires_in)) < 0.01,
      "expires_at = created_at + expires_in",
    );
  }
  await sleep(1500); // the 1 s and 0.5 s jobs expire while no worker runs

  const port = await freePort();
  const worker = startTsq(["-r", TEST_JOBS, "-c", "3", "--metrics-port", String(port)], { REDIS_URL: handle.url });
  await eventually(async () => (await ranJids()).length === 2, 20_000, "the fresh and the plain job ran");
  assert.deepEqual((await ranJids()).sort(), [fresh, plain].sort());
  const expiredLine = await worker.waitForLine((l) => l.job_status === "expired" && l.jid === stale, 20_000);
  assert.equal(expiredLine.class, "RecordJob");
  assert.ok(Number(expiredLine.late_s) > 0, JSON.stringify(expiredLine));
  await worker.waitForLine((l) => l.job_status === "expired" && l.jid === staleViaSet, 20_000);
  await worker.waitForLine((l) => l.job_status === "expired" && l.jid === failing, 20_000);
  assert.ok(!worker.lines.some((l) => l.jid === stale && l.msg === "start"), "no start line for an expired job");
  assert.equal(await handle.redis.llen("queue:default"), 0);
  assert.equal(await handle.redis.zcard("retry"), 0, "an expired job is never retried");
  assert.equal(await handle.redis.llen("failed-attempts"), 0, "FailJob's perform never ran");
  await eventually(async () => (await expiredMetric(port, "RecordJob")) === 2, 20_000, "expired counted");
  assert.equal(await expiredMetric(port, "FailJob"), 1);
  assert.equal(await worker.stop(), 0);
});

test("a scheduled job's expiry counts from its scheduled time; a Ruby-style expires_in is honoured", async (t) => {
  const client = new Client({ redis: handle.url });
  t.after(() => client.close());
  // Scheduled 8 s ahead with 7 s to live: by its creation it would be stale when due; by `at` it is not.
  // The 7 s leave room for a slow worker start on a loaded machine.
  const at = Date.now() / 1000 + 8;
  const scheduled = await client.push({ class: "RecordJob", args: ["scheduled"], at, expires_in: 7 });
  const [entry] = await handle.redis.zrange("schedule", 0, -1);
  const payload = JSON.parse(entry!) as { expires_at: number; expires_in: number };
  assert.ok(Math.abs(payload.expires_at - (at + 7)) < 0.01, `expires_at = at + expires_in: ${entry}`);
  assert.equal(payload.expires_in, 7);

  // A payload as a Ruby client writes it: only `expires_in`, enqueued 10 s ago.
  const ten = Date.now() / 1000 - 10;
  const rubyJid = "0123456789abcdef01234567";
  await handle.redis.lpush(
    "queue:default",
    JSON.stringify({
      class: "RecordJob",
      args: [],
      jid: rubyJid,
      queue: "default",
      retry: true,
      created_at: ten,
      enqueued_at: ten,
      expires_in: 5,
    }),
  );
  await handle.redis.sadd("queues", "default");
  assert.equal(
    deadlineOf({ class: "X", args: [], jid: "j", queue: "default", enqueued_at: ten, expires_in: 5 }),
    ten + 5,
  );

  // Poll every second so the scheduled job is enqueued soon after it is due.
  const config = join(scratchDir("tsq-expiry"), "tsq.yml");
  writeFileSync(config, "poll_interval_average: 1\n");
  const worker = startTsq(["-r", TEST_JOBS, "-c", "2", "-C", config], { REDIS_URL: handle.url });
  await worker.waitForLine((l) => l.job_status === "expired" && l.jid === rubyJid, 20_000);
  await eventually(async () => (await ranJids()).includes(scheduled!), 20_000, "the scheduled job ran");
  assert.ok(!(await ranJids()).includes(rubyJid));
  assert.equal(await worker.stop(), 0);
});

test("a bad expiresIn is refused at push with a named error", async (t) => {
  const client = new Client({ redis: handle.url });
  t.after(() => client.close());
  for (const bad of [0, -5, "60", 2e9]) {
    await assert.rejects(client.push({ class: "RecordJob", args: [], expires_in: bad }), ArgumentError);
  }
  assert.equal(await handle.redis.llen("queue:default"), 0);
});
