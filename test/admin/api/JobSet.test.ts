/**
 * The sorted-set API (ScheduledSet / RetrySet / DeadSet) against entries written straight into a
 * private Redis: ordering, paging with deletes, lookups, and every action's exact effect on Redis.
 * The Ruby-made and Ruby-read side is in ruby-sets.test.ts.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { Client } from "../../../src/client/Client.js";
import { DeadSet, RetrySet, ScheduledSet, type SortedEntry } from "../../../src/admin/api/index.js";
import { InvalidPayloadError } from "../../../src/wire/errors.js";
import { DEAD, QUEUES, RETRY, SCHEDULE, queueKey } from "../../../src/wire/keys.js";
import type { JobPayload } from "../../../src/wire/payload.js";
import { useRedis } from "../../helpers/redis.js";

const redis = useRedis();

/** A retry entry as Sidekiq 6/7 writes it: float timestamps, Ruby-only number text in args. */
function retryJson(jid: string, extra = ""): string {
  return (
    `{"retry":true,"queue":"default","class":"HardJob","args":[1.0,"${jid}-arg"],"jid":"${jid}",` +
    `"created_at":1795264707.355663,"enqueued_at":1795264707.355889,"error_message":"boom","error_class":"RuntimeError",` +
    `"failed_at":1795264710.5,"retry_count":2,"retried_at":1795264790.25${extra}}`
  );
}

const jid = (i: number) => `jid${String(i).padStart(21, "0")}`;

async function fill(set: string, count: number, base = 1_800_000_000): Promise<void> {
  const args: (string | number)[] = [];
  for (let i = 0; i < count; i++) args.push(base + i + 0.5, retryJson(jid(i)));
  await redis.redis.zadd(set, ...args);
}

async function collect(iterable: AsyncIterable<SortedEntry>): Promise<SortedEntry[]> {
  const found: SortedEntry[] = [];
  for await (const entry of iterable) found.push(entry);
  return found;
}

test("iteration is newest first over several 50-entry pages, with exact scores and parsed fields", async () => {
  await fill(RETRY, 120);
  const set = new RetrySet(redis.redis);
  assert.equal(await set.size(), 120);
  const entries = await collect(set);
  assert.deepEqual(
    entries.map((e) => e.jid),
    Array.from({ length: 120 }, (_, i) => jid(119 - i)),
  );
  const first = entries[0]!;
  assert.equal(first.score, 1_800_000_119.5);
  assert.equal(first.at.toISOString(), new Date(1_800_000_119_500).toISOString());
  assert.equal(first.id, `1800000119.5|${jid(119)}`);
  assert.equal(first.klass, "HardJob");
  assert.equal(first.queue, "default");
  assert.deepEqual(first.args, [1, `${jid(119)}-arg`]);
  assert.equal(first.retryCount, 2);
  assert.equal(first.errorClass, "RuntimeError");
  assert.equal(first.errorMessage, "boom");
  assert.equal(first.failedAt, 1795264710.5);
  assert.equal(first.retriedAt, 1795264790.25);
  assert.equal(first.isError, true);
  assert.equal(first.value, retryJson(jid(119)), "the stored text is kept verbatim");
  assert.deepEqual(
    (await set.first(3)).map((e) => e.jid),
    [jid(119), jid(118), jid(117)],
  );
});

test("deleting every entry while iterating visits each exactly once", async () => {
  await fill(DEAD, 130);
  const set = new DeadSet(redis.redis);
  const seen: string[] = [];
  for await (const entry of set) {
    seen.push(entry.jid!);
    if (Number(entry.jid!.slice(3)) % 3 !== 0) assert.equal(await entry.delete(), true);
  }
  assert.equal(seen.length, 130);
  assert.equal(new Set(seen).size, 130);
  const left = (await collect(set)).map((e) => Number(e.jid!.slice(3)));
  assert.deepEqual(
    left,
    Array.from({ length: 44 }, (_, i) => 129 - (129 % 3) - 3 * i),
  );
});

test("fetch(score, jid) picks one of several entries sharing a score; deleteByJid removes only it", async () => {
  await redis.redis.zadd(
    RETRY,
    "1800000000.25",
    retryJson("a"),
    "1800000000.25",
    retryJson("b"),
    "1800000000.25",
    retryJson("c"),
    "1800000001",
    retryJson("d"),
  );
  const set = new RetrySet(redis.redis);
  assert.deepEqual((await set.fetch(1800000000.25)).map((e) => e.jid).sort(), ["a", "b", "c"]);
  const [b] = await set.fetch(1800000000.25, "b");
  assert.equal(b?.value, retryJson("b"));
  assert.equal(await set.deleteByJid(1800000000.25, "b"), true);
  assert.equal(await set.deleteByJid(1800000000.25, "b"), false);
  assert.deepEqual((await redis.redis.zrange(RETRY, 0, -1)).map((v) => JSON.parse(v).jid).sort(), ["a", "c", "d"]);
});

test("scan matches a literal substring (glob characters escaped) and findJob matches the jid exactly", async () => {
  await redis.redis.zadd(
    SCHEDULE,
    "1800000000",
    retryJson("x1", ',"note":"a[b]?c"'),
    "1800000001",
    retryJson("x2", ',"note":"abc"'),
    "1800000002",
    retryJson("x10"),
  );
  const set = new ScheduledSet(redis.redis);
  assert.deepEqual(
    (await collect(set.scan("a[b]?c"))).map((e) => e.jid),
    ["x1"],
  );
  assert.deepEqual(
    (await collect(set.scan('*"note":"a*c"*'))).map((e) => e.jid).sort(),
    ["x1", "x2"],
    "a pattern with * is used as given",
  );
  assert.equal((await set.findJob("x1"))?.jid, "x1", "x10 contains x1 but is not it");
  assert.equal((await set.findJob("x10"))?.score, 1800000002);
  assert.equal(await set.findJob("nope"), null);
});

test("retry pushes to the queue with retry_count - 1 and a new enqueued_at, keeping the other fields' text", async () => {
  await redis.redis.zadd(RETRY, "1800000000.5", retryJson("r1"));
  const entry = await new RetrySet(redis.redis).findJob("r1");
  assert.ok(entry);
  const before = Date.now() / 1000;
  assert.equal(await entry.retry(), true);
  assert.equal(await redis.redis.zcard(RETRY), 0);
  assert.deepEqual(await redis.redis.smembers(QUEUES), ["default"]);
  const [text] = await redis.redis.lrange(queueKey("default"), 0, -1);
  assert.ok(text);
  assert.match(text, /"args":\[1\.0,"r1-arg"\]/, "Ruby's 1.0 survives");
  assert.match(text, /"created_at":1795264707\.355663/);
  assert.match(text, /"failed_at":1795264710\.5/);
  const job = JSON.parse(text) as JobPayload;
  assert.equal(job.retry_count, 1);
  assert.ok(job.enqueued_at! >= before && job.enqueued_at! <= Date.now() / 1000 + 1, `enqueued_at ${job.enqueued_at}`);
  assert.equal(await entry.retry(), false, "a second retry of the same entry finds nothing");
  assert.equal(await redis.redis.llen(queueKey("default")), 1);
});

test("two admins retrying the same entry at once enqueue it once", async () => {
  await redis.redis.zadd(RETRY, "1800000000.5", retryJson("race"));
  const [a, b] = await Promise.all([
    new RetrySet(redis.redis).findJob("race"),
    new RetrySet(redis.redis).findJob("race"),
  ]);
  const results = await Promise.all([a!.retry(), b!.retry()]);
  assert.deepEqual(results.sort(), [false, true]);
  assert.equal(await redis.redis.llen(queueKey("default")), 1);
});

test("addToQueue keeps retry_count; a scheduled job goes to its own queue", async () => {
  await redis.redis.zadd(
    SCHEDULE,
    "1800000000",
    '{"class":"Later","args":[],"jid":"s1","queue":"low","retry":3,"created_at":1795264707.5}',
  );
  const entry = (await new ScheduledSet(redis.redis).first(1))[0]!;
  assert.equal(entry.retryCount, undefined);
  assert.equal(await entry.addToQueue(), true);
  const job = JSON.parse((await redis.redis.lrange(queueKey("low"), 0, -1))[0]!) as JobPayload;
  assert.deepEqual([job.jid, job.queue, job.retry, job.retry_count], ["s1", "low", 3, undefined]);
  assert.equal(await redis.redis.zcard(SCHEDULE), 0);
});

test("kill moves the entry to dead, runs only the death handlers given, and trims like Sidekiq", async () => {
  await fill(RETRY, 5);
  const calls: [string, string][] = [];
  const set = new RetrySet(redis.redis, { deadMaxJobs: 3 });
  const entries = await set.first(5);
  assert.equal(await entries[0]!.kill(), true);
  assert.equal(
    await entries[1]!.kill({ deathHandlers: [(job, error) => void calls.push([job.jid, error.message])] }),
    true,
  );
  assert.deepEqual(calls, [[jid(3), "Job killed by API"]]);
  const now = Date.now() / 1000;
  const [value, score] = await redis.redis.zrange(DEAD, -1, -1, "WITHSCORES");
  assert.equal(value, retryJson(jid(3)), "the dead entry is the exact text");
  assert.ok(Math.abs(Number(score) - now) < 5, `died at ${score}, now ${now}`);
  for (const entry of entries.slice(2)) await entry.kill();
  // ZREMRANGEBYRANK dead 0 -3 keeps the newest deadMaxJobs - 1 = 2.
  assert.deepEqual(
    (await redis.redis.zrange(DEAD, 0, -1)).map((v) => JSON.parse(v).jid),
    [jid(1), jid(0)],
  );
  assert.equal(await redis.redis.zcard(RETRY), 0);
});

test("reschedule moves an entry to a new time but never re-creates one that is gone", async () => {
  await redis.redis.zadd(RETRY, "1800000000.5", retryJson("m1"));
  const entry = (await new RetrySet(redis.redis).findJob("m1"))!;
  assert.equal(await entry.reschedule(new Date(1_900_000_000_250)), true);
  assert.equal(await redis.redis.zscore(RETRY, retryJson("m1")), "1900000000.25");
  assert.equal(await entry.reschedule(1_900_000_000.25), true, "same time: still there");
  await redis.redis.del(RETRY);
  assert.equal(await entry.reschedule(1_950_000_000), false);
  assert.equal(await redis.redis.exists(RETRY), 0);
});

test("retryAll and killAll empty the set (ZPOPMIN); entries that are not jobs stay put on retryAll", async () => {
  await fill(RETRY, 4);
  await redis.redis.zadd(RETRY, "1700000000", "{not json");
  const set = new RetrySet(redis.redis);
  assert.equal(await set.retryAll(), 4);
  assert.deepEqual(await redis.redis.zrange(RETRY, 0, -1, "WITHSCORES"), ["{not json", "1700000000"]);
  const queued = (await redis.redis.lrange(queueKey("default"), 0, -1)).map((v) => JSON.parse(v) as JobPayload);
  assert.deepEqual(
    queued.map((j) => [j.jid, j.retry_count]),
    [3, 2, 1, 0].map((i) => [jid(i), 1]),
  );

  await fill(RETRY, 2);
  assert.equal(await set.killAll(), 3, "killAll takes the poison pill too");
  assert.equal(await redis.redis.zcard(RETRY), 0);
  assert.equal(await redis.redis.zcard(DEAD), 3);
  assert.ok((await redis.redis.zrange(DEAD, 0, -1)).includes("{not json"));
});

test("retry of an entry that is not a job throws and leaves it; clear reports what it removed", async () => {
  await redis.redis.zadd(DEAD, "1700000000", '{"class":"X"}', "1700000001", retryJson("ok"));
  const set = new DeadSet(redis.redis);
  const [ok, bad] = await set.first(2);
  assert.equal(bad!.valid, false);
  assert.deepEqual(bad!.args, [], "a JSON object without args has none (as Sidekiq's JobRecord#args)");
  await assert.rejects(bad!.retry(), InvalidPayloadError);
  assert.equal(await redis.redis.zcard(DEAD), 2);
  assert.equal(ok!.valid, true);
  assert.equal(await set.clear(), 2);
  assert.equal(await redis.redis.exists(DEAD), 0);
  assert.equal(await set.clear(), 0);
});

test("a client middleware that refuses the push puts the entry back where it was", async (t) => {
  await redis.redis.zadd(RETRY, "1800000000.5", retryJson("kept"));
  const client = new Client({ redis: redis.redis });
  t.after(() => client.close());
  client.middleware.add(async () => {}); // never calls next(): the push is refused
  const entry = (await new RetrySet(redis.redis, { client }).findJob("kept"))!;
  await assert.rejects(entry.retry(), /client middleware refused/);
  assert.deepEqual(await redis.redis.zrange(RETRY, 0, -1, "WITHSCORES"), [retryJson("kept"), "1800000000.5"]);
  assert.equal(await redis.redis.llen(queueKey("default")), 0);
});
