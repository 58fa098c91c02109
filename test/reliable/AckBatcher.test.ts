/**
 * Reliable fetch's acknowledgements: batched per turn, exact bytes, duplicates removed once, bounded
 * when Redis lags, drained by a stop; and a graceful stop never leaves a finished job to run again.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { useRedis } from "../helpers/redis.js";
import { TEST_JOBS, eventually, startTsq } from "../helpers/tsqProcess.js";
import { pushJobs } from "../helpers/fixtures.js";
import { AckBatcher } from "../../src/server/AckBatcher.js";
import { logger } from "../../src/logger.js";

const handle = useRedis();
const KEY = "queue:sq|host:1:abc|default";

test("ack-jobs-1.lua removes each acked job once, by its bytes, keeping the rest in order", async () => {
  const binary = Buffer.from([0x7b, 0xff, 0xfe, 0x7d]);
  // Head to tail: e d c b a b(again) binary
  await handle.redis.rpush(KEY, "e", "d", "c", "b", "a", "b", binary);
  assert.equal(await handle.redis.ackJobs(KEY, "a", "b", binary, "missing"), 3);
  assert.deepEqual(
    await handle.redis.lrange(KEY, 0, -1),
    ["e", "d", "c", "b"],
    "one b removed, the one nearest the tail",
  );
  // A long list and a small batch take the LREM path: same result.
  await handle.redis.del(KEY);
  const many = Array.from({ length: 100 }, (_, i) => `job-${i}`);
  await handle.redis.rpush(KEY, ...many);
  assert.equal(await handle.redis.ackJobs(KEY, "job-3", "job-97"), 2);
  assert.deepEqual(
    await handle.redis.lrange(KEY, 0, -1),
    many.filter((j) => j !== "job-3" && j !== "job-97"),
  );
  assert.equal(await handle.redis.ackJobs(KEY, ...many.filter((j) => j !== "job-3" && j !== "job-97")), 98);
  assert.equal(await handle.redis.exists(KEY), 0, "a list acked to empty is gone");
});

test("acks of one turn go in one call; drain waits for them", async () => {
  const jobs = Array.from({ length: 300 }, (_, i) => `j${i}`);
  await handle.redis.rpush(KEY, ...jobs);
  await handle.redis.config("RESETSTAT");
  const acks = new AckBatcher(handle.redis, logger());
  await Promise.all(jobs.map((job) => acks.ack(KEY, job)));
  await acks.drain();
  assert.equal(await handle.redis.exists(KEY), 0);
  const stats = await handle.redis.info("commandstats");
  const calls = Number(/cmdstat_evalsha:calls=(\d+)/.exec(stats)?.[1] ?? /cmdstat_eval:calls=(\d+)/.exec(stats)?.[1]);
  assert.equal(calls, 2, "300 acks in one turn: two calls (256 per call at most)");
});

test("acks wait for Redis once more than 1,024 are pending", async () => {
  const acks = new AckBatcher(handle.redis, logger());
  await handle.redis.client("PAUSE", 500, "ALL"); // Redis answers nothing for 0.5 s
  const started = Date.now();
  let immediate = 0;
  const waits = [];
  for (let i = 0; i < 1100; i++) {
    const done = acks.ack(KEY, `p${i}`);
    waits.push(done);
    if (await Promise.race([done.then(() => true), new Promise((r) => setImmediate(() => r(false)))])) immediate++;
  }
  await Promise.all(waits);
  assert.ok(immediate <= 1024, `${immediate} acks returned at once`);
  assert.ok(Date.now() - started >= 400, "the rest waited for Redis");
  await acks.drain();
});

test("a graceful stop under load: every job runs exactly once (acks drained before the leftovers are requeued)", async () => {
  await pushJobs(
    handle.url,
    "CountJob",
    Array.from({ length: 20_000 }, (_, i) => [i]),
  );
  for (let round = 0; round < 3; round++) {
    const tsq = startTsq(["-r", TEST_JOBS, "--fetch", "reliable", "-c", "50"], { REDIS_URL: handle.url });
    await tsq.waitForLine((l) => l.msg === "tsq worker started");
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(await tsq.stop(), 0);
  }
  const last = startTsq(["-r", TEST_JOBS, "--fetch", "reliable", "-c", "50"], { REDIS_URL: handle.url });
  await eventually(async () => (await handle.redis.llen("queue:default")) === 0, 60_000, "the queue drained");
  assert.equal(await last.stop(), 0);
  assert.equal(await handle.redis.bitcount("counted:bits"), 20_000, "every job ran");
  assert.equal(await handle.redis.get("counted"), "20000", "and none twice");
});
