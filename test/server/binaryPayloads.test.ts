/**
 * Payloads whose bytes are not UTF-8 (a Ruby client can push an ASCII-8BIT string). Everything removed
 * by value must be removed by the exact bytes it was read as: a job that ran must not stay in the
 * private list (and run again at the next recovery), a malformed one must go to `dead` and nowhere
 * else, and the admin API must delete, retry and kill such entries.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { useRedis } from "../helpers/redis.js";
import { TEST_JOBS, eventually, startTsq } from "../helpers/tsqProcess.js";
import { DeadSet, RetrySet, Queue } from "../../src/admin/api/index.js";

const handle = useRedis();

const BAD = Buffer.from([0xff, 0xfe, 0xc3, 0x28]); // not UTF-8
const job = (klass: string, jid: string, extra = ""): Buffer =>
  Buffer.concat([
    Buffer.from(`{"class":"${klass}","args":["`),
    BAD,
    Buffer.from(`"],"jid":"${jid}","queue":"default","retry":1${extra},"enqueued_at":1712345678.5}`),
  ]);
const MALFORMED = Buffer.concat([Buffer.from('{"class":"RecordJob","args":['), BAD]);

async function privateListLengths(): Promise<number> {
  let total = 0;
  for (const key of await handle.redis.keys("queue:sq|*")) total += await handle.redis.llen(key);
  return total;
}

for (const mode of ["basic", "reliable"] as const) {
  test(`${mode} fetch: non-UTF-8 jobs are acknowledged, retried and buried by their exact bytes`, async (t) => {
    await handle.redis.flushdb(); // a test that failed before leaves nothing for the next
    await handle.redis.lpush("queue:default", job("RecordJob", "ok-1"), job("FailJob", "fail-1"), MALFORMED);
    await handle.redis.sadd("queues", "default");
    const tsq = startTsq(["-r", TEST_JOBS, "--fetch", mode], { REDIS_URL: handle.url });
    t.after(() => tsq.stop());
    // Generous: a worker's start takes seconds on a loaded machine.
    await eventually(async () => (await handle.redis.llen("ran")) === 1, 30_000, "the job ran");
    await eventually(async () => (await handle.redis.zcard("retry")) === 1, 30_000, "the failing job is in retry");
    await eventually(async () => (await handle.redis.zcard("dead")) === 1, 30_000, "the malformed job is in dead");
    await eventually(async () => (await privateListLengths()) === 0, 10_000, "nothing left in the private lists");
    assert.equal(await tsq.stop(), 0);

    // A second worker (reliable: it recovers every expired identity first) finds nothing to run again.
    const again = startTsq(["-r", TEST_JOBS, "--fetch", mode], { REDIS_URL: handle.url });
    t.after(() => again.stop());
    await again.waitForLine((l) => l.msg === "tsq worker started");
    await new Promise((r) => setTimeout(r, 1500));
    assert.equal(await again.stop(), 0);

    assert.equal(await handle.redis.llen("ran"), 1, "the job ran once, not again after the stop or a recovery");
    assert.equal(await handle.redis.llen("queue:default"), 0, "the malformed job was not requeued");
    const [dead] = await handle.redis.zrangeBuffer("dead", 0, -1);
    assert.deepEqual(dead, MALFORMED, "dead holds the malformed job's exact bytes");
  });
}

test("the admin API deletes, retries and kills entries by their exact bytes", async () => {
  await handle.redis.flushdb();
  const retries = new RetrySet(handle.redis);
  await handle.redis.zadd("retry", "100", job("RecordJob", "r-1", ',"retry_count":0'));
  await handle.redis.zadd("retry", "200", job("RecordJob", "r-2", ',"retry_count":0'));
  await handle.redis.zadd("retry", "300", MALFORMED);

  const first = await retries.findJob("r-1");
  assert.ok(first && (await first.delete()), "deleted by its exact bytes");
  const second = await retries.findJob("r-2");
  assert.ok(second && (await second.retry()), "retried (moved to its queue)");
  assert.equal(await handle.redis.llen("queue:default"), 1);
  // The one left is not a job: retryAll puts it back byte for byte.
  assert.equal(await retries.retryAll(), 0);
  assert.deepEqual(await handle.redis.zrangeBuffer("retry", 0, -1), [MALFORMED]);
  assert.equal(await retries.killAll(), 1);
  assert.deepEqual(await handle.redis.zrangeBuffer("dead", 0, -1), [MALFORMED], "killed with its bytes intact");

  const dead = new DeadSet(handle.redis);
  const [entry] = await dead.first(1);
  assert.ok(entry && (await entry.delete()), "a non-UTF-8 dead entry can be deleted");
  assert.equal(await handle.redis.zcard("dead"), 0);

  await handle.redis.lpush("queue:default", job("RecordJob", "q-1"));
  const queue = new Queue(handle.redis, "default");
  const found = await queue.findJob("q-1");
  assert.ok(found && (await queue.deleteJob(found)), "a queued non-UTF-8 job can be deleted");
});
