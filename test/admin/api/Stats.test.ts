/**
 * Stats against keys written as the heartbeat and the client write them. Ruby's view of the same keys
 * is compared in ruby-stats.test.ts.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { Stats } from "../../../src/admin/api/index.js";
import { ArgumentError } from "../../../src/wire/errors.js";
import { DEAD, PROCESSES, QUEUES, RETRY, SCHEDULE, queueKey } from "../../../src/wire/keys.js";
import { nowSeconds } from "../../../src/wire/timestamps.js";
import { useRedis } from "../../helpers/redis.js";

const redis = useRedis();

test("fetch reads every counter, size and busy sum, with queues largest first", async () => {
  const r = redis.redis;
  await r.mset("stat:processed", "1234", "stat:failed", "56");
  await r.zadd(SCHEDULE, "1800000000", "a", "1800000001", "b");
  await r.zadd(RETRY, "1800000000", "c");
  await r.zadd(DEAD, "1800000000", "d", "1800000001", "e", "1800000002", "f");
  await r.sadd(PROCESSES, "host:1:aaa", "host:2:bbb", "host:3:gone");
  await r.hset("host:1:aaa", "busy", "3", "info", "{}");
  await r.hset("host:2:bbb", "busy", "4", "info", "{}");
  await r.sadd(QUEUES, "default", "low", "empty");
  const enqueuedAt = nowSeconds() - 30;
  await r.lpush(queueKey("default"), `{"class":"A","args":[],"jid":"x","enqueued_at":${enqueuedAt}}`);
  await r.lpush(queueKey("low"), "{}", "{}", "{}");

  const s = await new Stats(r).fetch();
  assert.equal(s.processed, 1234);
  assert.equal(s.failed, 56);
  assert.equal(s.scheduledSize, 2);
  assert.equal(s.retrySize, 1);
  assert.equal(s.deadSize, 3);
  assert.equal(s.processesSize, 3, "SCARD, like Sidekiq: a dead identity still counts until cleanup");
  assert.equal(s.workersSize, 7);
  assert.equal(s.enqueued, 4);
  assert.ok(s.defaultQueueLatency >= 30 && s.defaultQueueLatency < 35, `latency ${s.defaultQueueLatency}`);
  assert.deepEqual(
    [...s.queues],
    [
      ["low", 3],
      ["default", 1],
      ["empty", 0],
    ],
  );
  assert.deepEqual([...(await new Stats(r).queues())], [...s.queues]);
});

test("an empty Redis reads as zeros", async () => {
  const s = await new Stats(redis.redis).fetch();
  assert.deepEqual(
    { ...s, queues: [...s.queues] },
    {
      processed: 0,
      failed: 0,
      scheduledSize: 0,
      retrySize: 0,
      deadSize: 0,
      processesSize: 0,
      workersSize: 0,
      enqueued: 0,
      defaultQueueLatency: 0,
      queues: [],
    },
  );
});

test("history reads the daily UTC keys back from a given day, 0 where a day has none", async () => {
  await redis.redis.mset(
    "stat:processed:2026-03-01",
    "10",
    "stat:processed:2026-02-28",
    "7",
    "stat:failed:2026-02-27",
    "2",
    "stat:processed:2026-02-26",
    "99",
  );
  // 00:30 UTC on 1 March: still 1 March in UTC whatever the machine's zone.
  const history = await new Stats(redis.redis).history(3, new Date("2026-03-01T00:30:00Z"));
  assert.deepEqual(history, {
    processed: { "2026-03-01": 10, "2026-02-28": 7, "2026-02-27": 0 },
    failed: { "2026-03-01": 0, "2026-02-28": 0, "2026-02-27": 2 },
  });
  assert.deepEqual(Object.keys(history.processed), ["2026-03-01", "2026-02-28", "2026-02-27"], "newest first");
  await assert.rejects(new Stats(redis.redis).history(0), ArgumentError);
  await assert.rejects(new Stats(redis.redis).history(5 * 365 + 1), ArgumentError);
});

test("reset zeroes the named lifetime counters (both by default) and leaves the daily ones", async () => {
  const r = redis.redis;
  await r.mset("stat:processed", "5", "stat:failed", "3", "stat:processed:2026-03-01", "5");
  await new Stats(r).reset("failed");
  assert.deepEqual(await r.mget("stat:processed", "stat:failed"), ["5", "0"]);
  await new Stats(r).reset();
  assert.deepEqual(await r.mget("stat:processed", "stat:failed", "stat:processed:2026-03-01"), ["0", "0", "5"]);
});
