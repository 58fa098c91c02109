/**
 * Reliable push against a real Redis outage: Redis goes down for 5 s while two producers push 10,000
 * jobs at a steady rate; every job lands exactly once, each producer's order is kept, and a worker runs
 * them all. The buffer is bounded (a named error names the limit) and reports what it could not push.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { Client } from "../../../../src/client/Client.js";
import { PushBufferFullError } from "../../../../src/features/flow/reliable-push/errors.js";
import { resolveReliablePush } from "../../../../src/features/flow/reliable-push/settings.js";
import { useRedis } from "../../../helpers/redis.js";
import { TEST_JOBS, eventually, startTsq } from "../../../helpers/tsqProcess.js";
import { sleep } from "../../../../src/platform/util/sleep.js";

const handle = useRedis();

const TOTAL = 10_000;
const PRODUCERS = 2;

test("Redis down 5 s while 2 producers push 10,000 jobs: all land once, in order per producer, and run", async (t) => {
  const client = new Client({ redis: handle.url, reliablePush: { maxBuffered: TOTAL } });
  t.after(() => client.close());
  let maxBuffered = 0;
  let outageStarted = false;
  const watch = setInterval(() => {
    if (outageStarted) maxBuffered = Math.max(maxBuffered, client.bufferedJobs);
  }, 10);
  t.after(() => clearInterval(watch));

  const perProducer = TOTAL / PRODUCERS;
  const produce = async (producer: number): Promise<void> => {
    for (let i = 0; i < perProducer; i++) {
      await client.push({ class: "RecordJob", args: [producer, i], queue: "rp" });
      if (i % 10 === 9) await sleep(5); // a steady ~1,000-2,000 jobs/s per producer
    }
  };
  const producing = Promise.all(Array.from({ length: PRODUCERS }, (_, p) => produce(p)));
  await eventually(async () => (await handle.redis.llen("queue:rp")) >= 1000, 30_000, "pushes flow before the outage");
  outageStarted = true;
  const outage = handle.restart(5000);
  await producing;
  await outage;
  console.log(`most jobs held in memory during the outage: ${maxBuffered}`);
  assert.ok(maxBuffered > 1000, `pushes made during the 5 s outage were held in memory (${maxBuffered})`);
  await eventually(async () => client.bufferedJobs === 0, 30_000, "the buffer flushed");

  const queued = (await handle.redis.lrange("queue:rp", 0, -1)).reverse(); // oldest first
  assert.equal(queued.length, TOTAL);
  const jids = new Set(queued.map((text) => (JSON.parse(text) as { jid: string }).jid));
  assert.equal(jids.size, TOTAL, "each job landed once");
  for (let producer = 0; producer < PRODUCERS; producer++) {
    const order = queued
      .map((text) => (JSON.parse(text) as { args: [number, number] }).args)
      .filter(([p]) => p === producer)
      .map(([, i]) => i);
    assert.deepEqual(
      order,
      Array.from({ length: perProducer }, (_, i) => i),
      `producer ${producer}'s order`,
    );
  }

  const worker = startTsq(["-r", TEST_JOBS, "-c", "10", "-q", "rp"], { REDIS_URL: handle.url });
  await eventually(async () => (await handle.redis.llen("ran")) === TOTAL, 120_000, "a worker ran them all");
  const ran = new Set(
    (await handle.redis.lrange("ran", 0, -1)).map((text) => (JSON.parse(text) as { jid: string }).jid),
  );
  assert.equal(ran.size, TOTAL, "each ran once");
  assert.equal(await worker.stop(), 0);
});

test("TSQ_RELIABLE_PUSH turns it on for clients created without the option", () => {
  assert.equal(resolveReliablePush(undefined, undefined), undefined);
  assert.equal(resolveReliablePush(undefined, "false"), undefined);
  assert.equal(resolveReliablePush(undefined, "true")?.maxBuffered, 10_000);
  assert.equal(resolveReliablePush(undefined, "2500")?.maxBuffered, 2500);
  assert.equal(resolveReliablePush(false, "true"), undefined);
  assert.throws(() => resolveReliablePush(undefined, "lots"), /TSQ_RELIABLE_PUSH/);
  assert.throws(() => resolveReliablePush({ maxBuffered: 0 }), /maxBuffered/);
});

// Last: it stops this file's Redis for good.
test("over maxBuffered a push throws PushBufferFullError naming the limit; close() reports what is left", async () => {
  const client = new Client({ redis: handle.url, reliablePush: { maxBuffered: 3, closeTimeoutMs: 200 } });
  await client.push({ class: "RecordJob", args: ["before"] });
  await handle.kill();
  await eventually(async () => client.redis.status !== "ready", 10_000, "the client saw Redis go");
  // Pushes are held until the buffer holds 3 jobs (a write cut off by the outage may already be one of
  // them); the next one is refused, by name, and nothing beyond the bound is held.
  let refused: unknown;
  for (let i = 0; i <= 3 && refused === undefined; i++) {
    await client.push({ class: "RecordJob", args: [i] }).catch((error: unknown) => (refused = error));
  }
  assert.ok(refused instanceof PushBufferFullError, `a push over the bound was refused: ${String(refused)}`);
  assert.match(refused.message, /maxBuffered = 3/);
  assert.match(refused.message, /NOT enqueued/);
  assert.equal(client.bufferedJobs, 3);
  await client.close(); // Redis stays down: the 3 held payloads go to the log
  assert.equal(client.bufferedJobs, 0);
});
