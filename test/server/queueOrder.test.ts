/** Queue order: strict, random and weighted exactly as Sidekiq computes them, and observed end to end. */
import { test } from "node:test";
import assert from "node:assert/strict";
import { QueueOrder, queueMode } from "../../src/server/fetch/queueOrder.js";
import { useRedis } from "../helpers/redis.js";
import { TEST_JOBS, eventually, startTsq } from "../helpers/tsqProcess.js";
import { Client } from "../../src/client/Client.js";

const handle = useRedis();

test("modes: no weights is strict, all weights 1 is random, anything else is weighted", () => {
  assert.equal(
    queueMode([
      { name: "a", weight: 0 },
      { name: "b", weight: 0 },
    ]),
    "strict",
  );
  assert.equal(
    queueMode([
      { name: "a", weight: 1 },
      { name: "b", weight: 1 },
    ]),
    "random",
  );
  assert.equal(
    queueMode([
      { name: "a", weight: 3 },
      { name: "b", weight: 1 },
    ]),
    "weighted",
  );
});

test("strict keeps the listed order; random and weighted de-duplicate every fetch", () => {
  const strict = new QueueOrder([
    { name: "a", weight: 0 },
    { name: "b", weight: 0 },
    { name: "c", weight: 0 },
  ]);
  for (let i = 0; i < 10; i++) assert.deepEqual(strict.next(), ["a", "b", "c"]);
  const weighted = new QueueOrder([
    { name: "a", weight: 3 },
    { name: "b", weight: 1 },
  ]);
  let aFirst = 0;
  for (let i = 0; i < 20_000; i++) {
    const order = weighted.next();
    assert.deepEqual([...order].sort(), ["a", "b"]);
    if (order[0] === "a") aFirst++;
  }
  assert.ok(Math.abs(aFirst / 20_000 - 0.75) < 0.02, `a first in ${aFirst / 200}% of fetches`);
  const random = new QueueOrder([
    { name: "a", weight: 1 },
    { name: "b", weight: 1 },
  ]);
  let randomA = 0;
  for (let i = 0; i < 20_000; i++) if (random.next()[0] === "a") randomA++;
  assert.ok(Math.abs(randomA / 20_000 - 0.5) < 0.02);
});

test("-q a,3 -q b,1 with both queues full: about 75% of the first 4,000 jobs come from a", async () => {
  const client = new Client({ redis: handle.url });
  const args = Array.from({ length: 4000 }, (_, i) => [i]);
  await client.pushBulk({ class: "RecordJob", args, queue: "a" });
  await client.pushBulk({ class: "RecordJob", args, queue: "b" });
  await client.close();
  // One slot, so jobs run in the order they were fetched.
  const worker = startTsq(["-r", TEST_JOBS, "-c", "1", "-q", "a,3", "-q", "b,1", "-t", "1"], { REDIS_URL: handle.url });
  await eventually(async () => (await handle.redis.llen("ran")) >= 4000, 60_000, "4,000 jobs ran");
  await worker.stop();
  const first = (await handle.redis.lrange("ran", 0, 3999)).map((e) => JSON.parse(e).queue as string);
  const share = first.filter((q) => q === "a").length / first.length;
  console.log(`queue a share of the first 4,000 fetches: ${(share * 100).toFixed(1)}%`);
  assert.ok(share > 0.72 && share < 0.78, `share ${share}`);
});
