/**
 * Reliable fetch fetching ahead (FetchAhead): while a backlog lasts the next batch is already in the
 * private list; it is handed out in queue order, and given back to the front of its queue when no slot
 * takes it in time or the fetcher stops.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { useRedis } from "../helpers/redis.js";
import { eventually } from "../helpers/tsqProcess.js";
import { connect } from "../../src/platform/redis/connection.js";
import { ReliableFetch } from "../../src/server/fetch/ReliableFetch.js";
import { Client } from "../../src/client/Client.js";
import { logger } from "../../src/platform/logger.js";

const handle = useRedis();
const ID = "host:1:bbbbbbbbbbbb";
const PRIVATE = `queue:sq|${ID}|default`;

async function pushNumbered(n: number): Promise<void> {
  const client = new Client({ redis: handle.url });
  await client.pushBulk({ class: "A", args: Array.from({ length: n }, (_, i) => [i]) });
  await client.close();
}

/** A reliable fetch of the default queue that fetches 3 jobs ahead (as a capsule of concurrency 3). */
function fetcherAhead(): ReliableFetch {
  return new ReliableFetch(
    handle.redis,
    connect(handle.url),
    ID,
    [{ name: "default", weight: 0 }],
    0.2,
    logger(),
    undefined,
    3,
  );
}

const numberOf = (job: string) => (JSON.parse(job) as { args: number[] }).args[0];

test("a full fetch fetches the next batch ahead; it is handed out next, in order", async () => {
  await pushNumbered(10);
  const fetch = fetcherAhead();
  const first = await fetch.retrieveWork(3);
  assert.deepEqual(
    first.map((u) => numberOf(u.job)),
    [0, 1, 2],
  );
  await eventually(async () => (await handle.redis.llen(PRIVATE)) === 6, 2000, "three more fetched ahead");
  assert.equal(await handle.redis.llen("queue:default"), 4);
  const second = await fetch.retrieveWork(2);
  assert.deepEqual(
    second.map((u) => numberOf(u.job)),
    [3, 4],
    "the jobs fetched ahead, oldest first",
  );
  const third = await fetch.retrieveWork(3);
  assert.deepEqual(
    third.map((u) => numberOf(u.job)),
    [5],
    "what is left of them, not a new fetch",
  );
  for (const unit of [...first, ...second, ...third]) void unit.acknowledge();
  await fetch.drain();
  assert.equal(await handle.redis.llen(PRIVATE), 0, "acknowledged");
  assert.equal(await handle.redis.llen("queue:default"), 4, "no batch was fetched ahead of a partial one");
  fetch.close();
});

test("jobs fetched ahead and not taken within 100 ms go back to the front of the queue, in order", async () => {
  await pushNumbered(8);
  const fetch = fetcherAhead();
  const running = await fetch.retrieveWork(3);
  await eventually(async () => (await handle.redis.llen(PRIVATE)) === 6, 2000, "fetched ahead");
  await eventually(async () => (await handle.redis.llen(PRIVATE)) === 3, 2000, "given back");
  assert.equal(await handle.redis.llen("queue:default"), 5);
  const next = await fetch.retrieveWork(3);
  assert.deepEqual(
    next.map((u) => numberOf(u.job)),
    [3, 4, 5],
    "the given-back jobs are the next popped",
  );
  // After a give-back no fetch goes ahead for a while: the private list holds only what runs.
  await new Promise((r) => setTimeout(r, 300));
  assert.equal(await handle.redis.llen(PRIVATE), 6);
  for (const unit of [...running, ...next]) void unit.acknowledge();
  await fetch.drain();
  fetch.close();
});

test("a stop gives back the jobs fetched ahead before the acks drain", async () => {
  await pushNumbered(6);
  const fetch = fetcherAhead();
  const running = await fetch.retrieveWork(3);
  await eventually(async () => (await handle.redis.llen(PRIVATE)) === 6, 2000, "fetched ahead");
  for (const unit of running) void unit.acknowledge();
  await fetch.drain();
  assert.equal(await handle.redis.llen(PRIVATE), 0);
  assert.deepEqual(
    (await handle.redis.lrange("queue:default", 0, -1)).map(numberOf).reverse(),
    [3, 4, 5],
    "back in the queue, oldest at the tail",
  );
  fetch.close();
});
