/**
 * A durable job's journal outlives every time the job is due back (a sleep, a wait's deadline, a retry),
 * a journal gone anyway is refused by name instead of running the steps again, and a cancel of a jid
 * without a journal leaves a mark that lives an hour at most. Real Redis, real worker.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { useRedis } from "../../helpers/redis.js";
import { testLauncher } from "../../helpers/context.js";
import { eventually } from "../../helpers/tsqProcess.js";
import { cancel, CANCEL_MARK_TTL } from "../../../src/features/durable/cancel.js";
import { JOURNAL_TTL } from "../../../src/features/durable/Journal.js";
import { RetryingJournalJob, ShortJournalJob } from "../../jobs/durableEdgeJobs.js";
import { SleepyJob, WaitingJob } from "../../jobs/durableJobs.js";

const handle = useRedis();
const CLASSES = [ShortJournalJob, RetryingJournalJob, SleepyJob, WaitingJob];
const DAY = 86_400; // seconds

function worker() {
  return testLauncher(handle.url, CLASSES, { concurrency: 2, pollIntervalAverage: 0.2 });
}

const ttl = (jid: string) => handle.redis.ttl(`tsq:durable:${jid}`);

test("a sleep longer than the journal's TTL: the journal outlives the wake; each step once; the job ends", async (t) => {
  const launcher = worker();
  await launcher.start();
  t.after(() => launcher.stop());
  const jid = (await launcher.ctx.client.push({ class: "ShortJournalJob", args: ["short", 6] }))!;
  await eventually(async () => (await handle.redis.zcard("schedule")) === 1, 10_000, "asleep");
  const left = await ttl(jid);
  // The wake time is rounded up to the second: 6 to 7 s away, plus the 3 s TTL.
  assert.ok(left >= 8 && left <= 10, `the journal lives past the 6 s sleep plus its 3 s TTL (ttl ${left} s)`);
  await eventually(async () => (await handle.redis.sismember("short:done", jid)) === 1, 20_000, "finished");
  assert.deepEqual(await handle.redis.hgetall("short:effects"), { [`${jid}:a`]: "1", [`${jid}:b`]: "1" });
  assert.deepEqual(await handle.redis.lrange("short:runs", 0, -1), ["run", "run"], "two executions, no loop");
});

test("a month's sleep, a month's wait and a retry in 10 minutes each keep the journal past their time", async (t) => {
  const launcher = worker();
  await launcher.start();
  t.after(() => launcher.stop());
  const { client } = launcher.ctx;
  const sleeper = (await client.push({ class: "SleepyJob", args: ["month", 30 * DAY] }))!;
  const waiter = (await client.push({ class: "WaitingJob", args: ["month", "never", 30 * DAY] }))!;
  const retried = (await client.push({ class: "RetryingJournalJob", args: ["month"] }))!;
  // A first step that throws writes no journal: its retry carries no mark (it starts afresh, not refused).
  const fresh = (await client.push({ class: "RetryingJournalJob", args: ["month", true] }))!;
  await eventually(async () => (await handle.redis.zcard("schedule")) === 2, 10_000, "both parked");
  await eventually(async () => (await handle.redis.zcard("retry")) === 2, 10_000, "retrying");
  const flat = await handle.redis.zrange("retry", 0, -1, "WITHSCORES");
  const retries = new Map<unknown, { job: Record<string, unknown>; at: number }>();
  for (let i = 0; i < flat.length; i += 2) {
    const job = JSON.parse(flat[i]!) as Record<string, unknown>;
    retries.set(job.jid, { job, at: Number(flat[i + 1]) });
  }
  assert.equal(retries.get(fresh)?.job.durable_journal, undefined, "no journal, no mark");
  assert.equal(await handle.redis.exists(`tsq:durable:${fresh}`), 0);
  for (const jid of [sleeper, waiter]) {
    const left = await ttl(jid);
    assert.ok(left > 30 * DAY + JOURNAL_TTL - 60, `journal of ${jid} lives 30 days + its TTL (ttl ${left} s)`);
  }
  const retryIn = retries.get(retried)!.at - Date.now() / 1000;
  const left = await ttl(retried);
  assert.ok(left >= retryIn + 3 - 2, `the journal lives past the retry (in ${retryIn} s) plus 3 s (ttl ${left} s)`);
  assert.equal(retries.get(retried)!.job.durable_journal, 1, "the retry carries the mark");
});

test("a journal deleted while its job sleeps: JournalLostError, dead set, no step runs again", async (t) => {
  const launcher = worker();
  await launcher.start();
  t.after(() => launcher.stop());
  const jid = (await launcher.ctx.client.push({ class: "SleepyJob", args: ["lost", 1] }))!;
  await eventually(async () => (await handle.redis.zcard("schedule")) === 1, 10_000, "asleep");
  const [parked] = await handle.redis.zrange("schedule", 0, 0);
  assert.equal((JSON.parse(parked!) as Record<string, unknown>).durable_journal, 1, "the parked copy is marked");
  await handle.redis.del(`tsq:durable:${jid}`);
  await eventually(async () => (await handle.redis.zcard("dead")) === 1, 20_000, "dead");
  const [dead] = await handle.redis.zrange("dead", 0, 0);
  const payload = JSON.parse(dead!) as { error_class: string; error_message: string };
  assert.equal(payload.error_class, "JournalLostError");
  assert.match(payload.error_message, new RegExp(`journal tsq:durable:${jid} of job ${jid} is gone`));
  assert.deepEqual(await handle.redis.hgetall("lost:effects"), { a: "1" }, "step a ran once, b never");
  assert.equal(await handle.redis.zcard("retry"), 0, "not retried: retrying cannot bring the journal back");
});

test("cancel of an unknown jid leaves a mark that lives an hour at most; a journal keeps its own TTL", async () => {
  const jids = Array.from({ length: 100 }, (_, i) => `unknown${String(i).padStart(4, "0")}`);
  for (const jid of jids) await cancel(jid, { redis: handle.redis });
  for (const jid of jids) {
    const left = await ttl(jid);
    assert.ok(left > 0 && left <= CANCEL_MARK_TTL, `mark of ${jid} expires within an hour (ttl ${left} s)`);
  }
  assert.equal(CANCEL_MARK_TTL, 3600);
  const known = "knownjid0000000000000001";
  await handle.redis.hset(`tsq:durable:${known}`, "s:a", "0|v|1");
  await handle.redis.expire(`tsq:durable:${known}`, 5 * DAY);
  await cancel(known, { redis: handle.redis });
  assert.ok((await ttl(known)) > 5 * DAY - 60, "an existing journal keeps its TTL");
  assert.ok(Number(await handle.redis.hget(`tsq:durable:${known}`, "cancelled")) > 0, "and is marked");
});
