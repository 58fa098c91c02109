/**
 * The Queue API against jobs pushed by tsq's client and written directly (Sidekiq 8's millisecond
 * timestamps, a poison pill). Ruby-pushed jobs are in ruby-queues.test.ts.
 */
import { test, type TestContext } from "node:test";
import assert from "node:assert/strict";
import { Client } from "../../../src/client/Client.js";
import { Queue } from "../../../src/admin/api/index.js";
import { QUEUES, queueKey } from "../../../src/wire/keys.js";
import { useRedis } from "../../helpers/redis.js";

const redis = useRedis();

function client(t: TestContext): Client {
  const c = new Client({ redis: redis.redis });
  t.after(() => c.close());
  return c;
}

test("all() lists the known queues by name; size and newest-first paging over 120 jobs", async (t) => {
  const c = client(t);
  const jids = (await c.pushBulk({
    class: "HardJob",
    args: Array.from({ length: 120 }, (_, i) => [i]),
    queue: "bulk",
  })) as string[];
  await c.push({ class: "HardJob", args: [], queue: "alpha" });
  assert.deepEqual(
    (await Queue.all(redis.redis)).map((q) => q.name),
    ["alpha", "bulk"],
  );
  const queue = new Queue(redis.redis, "bulk");
  assert.equal(await queue.size(), 120);
  assert.equal(await queue.paused(), false);
  const seen: string[] = [];
  for await (const job of queue) {
    assert.equal(job.queue, "bulk");
    seen.push(job.jid!);
  }
  assert.deepEqual(seen, [...jids].reverse(), "LPUSH order reversed: newest first");
  const [newest] = await queue.first(1);
  assert.deepEqual([newest?.klass, newest?.args], ["HardJob", [119]]);
});

test("deleting jobs while iterating never skips one", async (t) => {
  const c = client(t);
  await c.pushBulk({ class: "HardJob", args: Array.from({ length: 125 }, (_, i) => [i]) });
  const queue = new Queue(redis.redis, "default");
  const seen = new Set<number>();
  for await (const job of queue) {
    const i = job.args[0] as number;
    seen.add(i);
    if (i % 2 === 0) assert.equal(await queue.deleteJob(job), true);
  }
  assert.equal(seen.size, 125, "every job was visited");
  const left = (await queue.first(0 + 1000)).map((job) => job.args[0] as number);
  assert.deepEqual(
    left,
    Array.from({ length: 62 }, (_, i) => 123 - 2 * i),
  );
});

test("findJob and deleteJob work on the exact stored text", async (t) => {
  const c = client(t);
  const a = await c.push({ class: "HardJob", args: ["a"] });
  const b = await c.push({ class: "HardJob", args: ["b"] });
  const queue = new Queue(redis.redis, "default");
  const found = await queue.findJob(a!);
  assert.equal(found?.jid, a);
  assert.equal(found?.value, (await redis.redis.lrange(queueKey("default"), -1, -1))[0]);
  assert.equal(await queue.findJob("missing"), null);
  assert.equal(await queue.deleteJob(found), true);
  assert.equal(await queue.deleteJob(found), false, "already gone");
  assert.deepEqual(
    (await queue.first(10)).map((j) => j.jid),
    [b],
  );
});

test("latency: seconds since the oldest job was enqueued, in either timestamp format; 0 when empty", async () => {
  const queue = new Queue(redis.redis, "default");
  assert.equal(await queue.latency(), 0);
  // Sidekiq 8 writes integer milliseconds; 6/7 write float seconds. The oldest job is at the right end.
  await redis.redis.lpush(queueKey("default"), '{"class":"A","args":[],"jid":"1","enqueued_at":1800000000000}');
  await redis.redis.lpush(queueKey("default"), '{"class":"B","args":[],"jid":"2","enqueued_at":1800000050.5}');
  assert.equal(await queue.latency(1_800_000_012.5), 12.5);
  await redis.redis.rpop(queueKey("default"));
  assert.equal(await queue.latency(1_800_000_060), 9.5);
  const [job] = await queue.first(1);
  assert.equal(job?.enqueuedAt, 1800000050.5);
  assert.equal(job?.latency(1_800_000_060), 9.5);
});

test("a poison pill is listed with its text as the only argument, and can be deleted", async () => {
  await redis.redis.lpush(queueKey("default"), "{oops");
  const queue = new Queue(redis.redis, "default");
  const [pill] = await queue.first(5);
  assert.equal(pill?.valid, false);
  assert.equal(pill?.isObject, false);
  assert.deepEqual(pill?.args, ["{oops"]);
  assert.equal(pill?.jid, undefined);
  assert.equal(await queue.latency(), 0);
  assert.equal(await queue.deleteJob(pill), true);
});

test("clear removes the list and the name from `queues`, and says how many jobs went", async (t) => {
  const c = client(t);
  await c.pushBulk({ class: "HardJob", args: [[1], [2], [3]], queue: "doomed" });
  await c.push({ class: "HardJob", args: [], queue: "kept" });
  assert.equal(await new Queue(redis.redis, "doomed").clear(), 3);
  assert.equal(await redis.redis.exists(queueKey("doomed")), 0);
  assert.deepEqual(await redis.redis.smembers(QUEUES), ["kept"]);
  assert.equal(await new Queue(redis.redis, "doomed").clear(), 0);
});
