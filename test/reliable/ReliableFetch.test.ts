/** ReliableFetch and recovery against a real Redis: private lists, acks, requeues, poison pills, sweeps. */
import { test } from "node:test";
import assert from "node:assert/strict";
import { pino } from "pino";
import { useRedis } from "../helpers/redis.js";
import { connect } from "../../src/platform/redis/connection.js";
import { ReliableFetch } from "../../src/server/fetch/ReliableFetch.js";
import { recoverIdentity, sweepOrphans } from "../../src/server/fetch/recovery.js";
import { DEFAULTS } from "../../src/platform/config/defaults.js";
import { Client } from "../../src/client/Client.js";

const handle = useRedis();
const silent = pino({ level: "silent" });
const ID = "host:1:aaaaaaaaaaaa";

function fetcher(queues: { name: string; weight: number }[]): ReliableFetch {
  return new ReliableFetch(handle.redis, connect(handle.url), ID, queues, 0.2);
}

async function one(fetch: ReliableFetch) {
  return (await fetch.retrieveWork(1))[0];
}

async function push(queue: string, n: number): Promise<string[]> {
  const client = new Client({ redis: handle.url });
  const jids = (await client.pushBulk({
    class: "A",
    args: Array.from({ length: n }, (_, i) => [i]),
    queue,
  })) as string[];
  await client.close();
  return jids;
}

test("a fetched job sits in queue:sq|<identity>|<q> until acknowledged (one queue: BLMOVE)", async () => {
  const [jid] = await push("default", 1);
  const fetch = fetcher([{ name: "default", weight: 0 }]);
  const unit = (await one(fetch))!;
  assert.equal(unit.queue, "default");
  assert.ok(unit.job.includes(jid!));
  assert.equal(await handle.redis.llen("queue:default"), 0);
  assert.deepEqual(await handle.redis.lrange(`queue:sq|${ID}|default`, 0, -1), [unit.job]);
  await unit.acknowledge();
  // Acknowledgements are written in the background, batched; drain() waits for them (as a stop does).
  await fetch.drain();
  assert.equal(await handle.redis.exists(`queue:sq|${ID}|default`), 0);
  assert.deepEqual(await fetch.retrieveWork(1), [], "an empty queue times out with nothing");
  fetch.close();
});

test("several queues: strict order across them; requeue puts the job back at the front", async () => {
  await push("low", 2);
  const [high] = await push("high", 1);
  const fetch = fetcher([
    { name: "high", weight: 0 },
    { name: "low", weight: 0 },
  ]);
  const first = (await one(fetch))!;
  assert.equal(first.queue, "high");
  assert.ok(first.job.includes(high!));
  await first.requeue();
  assert.equal(await handle.redis.llen(`queue:sq|${ID}|high`), 0);
  const again = (await one(fetch))!;
  assert.equal(again.job, first.job, "the requeued job is fetched next");
  const second = (await one(fetch))!;
  assert.equal(second.queue, "low");
  await fetch.bulkRequeue([again, second]);
  assert.equal(await handle.redis.llen("queue:high"), 1);
  assert.equal(await handle.redis.llen("queue:low"), 2);
  assert.equal(await handle.redis.llen(`queue:sq|${ID}|low`), 0);
  fetch.close();
});

test("recoverIdentity returns a dead process's jobs to the front of their queues, oldest fetch first", async () => {
  const jids = await push("default", 5);
  const fetch = fetcher([{ name: "default", weight: 0 }]);
  const taken = [await one(fetch), await one(fetch), await one(fetch)];
  fetch.close();
  await handle.redis.sadd("super_processes", ID);
  const { requeued, poisoned } = await recoverIdentity(handle.redis, ID, DEFAULTS, silent);
  assert.equal(requeued, 3);
  assert.deepEqual(poisoned, []);
  assert.equal(await handle.redis.sismember("super_processes", ID), 0);
  // BRPOP order from the right end: the three recovered (in fetch order), then the two never fetched.
  const order = (await handle.redis.lrange("queue:default", 0, -1)).reverse().map((j) => JSON.parse(j).jid as string);
  assert.deepEqual(order, jids);
  assert.deepEqual(
    taken.map((u) => JSON.parse(u!.job).jid),
    jids.slice(0, 3),
  );
});

test("two recoveries of one dead process at once (supervisor and a sweep): the poison pill is buried once", async () => {
  // Each round: a poison pill on its 4th death, recovered by two callers on their own connections at
  // the same moment. Without one recovery per identity, both counted it and both moved it to dead.
  for (let round = 0; round < 20; round++) {
    await handle.redis.flushdb();
    const [jid] = await push("default", 1);
    await handle.redis.set(`tsq:recovered:${jid!}`, "3", "EX", 600);
    const fetch = fetcher([{ name: "default", weight: 0 }]);
    assert.ok(await one(fetch));
    fetch.close();
    const [a, b] = [connect(handle.url), connect(handle.url)];
    try {
      const results = await Promise.all([a, b].map((redis) => recoverIdentity(redis, ID, DEFAULTS, silent)));
      assert.equal(results.flatMap((r) => r.poisoned).length, 1, `round ${round}: reported once`);
    } finally {
      a.disconnect();
      b.disconnect();
    }
    assert.equal(await handle.redis.zcard("dead"), 1, `round ${round}: one dead entry`);
    assert.equal(await handle.redis.get(`tsq:recovered:${jid!}`), "4", `round ${round}: counted once`);
    assert.equal(await handle.redis.exists(`queue:sq|${ID}|default`), 0);
  }
});

test("a job recovered 3 times (front, then scattered in schedule) goes to dead as PoisonPillError on the 4th", async () => {
  const [jid] = await push("default", 1);
  for (let death = 1; death <= 4; death++) {
    const fetch = fetcher([{ name: "default", weight: 0 }]);
    const unit = await one(fetch);
    fetch.close();
    assert.ok(unit, `fetched before death ${death}`);
    const { requeued, poisoned } = await recoverIdentity(handle.redis, ID, DEFAULTS, silent);
    assert.equal(requeued, death <= 3 ? 1 : 0, `death ${death}`);
    assert.equal(poisoned.length, death <= 3 ? 0 : 1);
    // First recovery: straight back to the front; later ones wait 0-10 s in schedule (the poller's job).
    assert.equal(await handle.redis.llen("queue:default"), death === 1 ? 1 : 0);
    const suspect = await handle.redis.zpopmin("schedule");
    assert.equal(suspect.length, death === 2 || death === 3 ? 2 : 0, `death ${death}: scheduled as a suspect`);
    if (suspect.length > 0) {
      assert.ok(Number(suspect[1]) > Date.now() / 1000 - 1 && Number(suspect[1]) < Date.now() / 1000 + 11);
      await handle.redis.rpush("queue:default", suspect[0]!);
    }
  }
  assert.equal(await handle.redis.llen("queue:default"), 0);
  assert.equal(await handle.redis.exists(`queue:sq|${ID}|default`), 0);
  const [dead] = await handle.redis.zrange("dead", 0, -1);
  const job = JSON.parse(dead!) as Record<string, unknown>;
  assert.equal(job.jid, jid);
  assert.equal(job.error_class, "PoisonPillError");
  assert.match(job.error_message as string, /died 4 times within 259200 s/);
});

test("sweepOrphans recovers identities whose heartbeat expired, never a live one or itself", async () => {
  await push("default", 3);
  const fetch = fetcher([{ name: "default", weight: 0 }]);
  await one(fetch);
  fetch.close();
  const live = "host:2:bbbbbbbbbbbb";
  await handle.redis.lpush(
    `queue:sq|${live}|default`,
    '{"class":"A","args":[],"jid":"live00000000000000000000","queue":"default"}',
  );
  await handle.redis.hset(live, "info", "{}");
  await handle.redis.sadd("super_processes", ID, live, "me:3:cccccccccccc");
  assert.equal(await sweepOrphans(handle.redis, "me:3:cccccccccccc", DEFAULTS, silent), 1);
  assert.equal(await handle.redis.llen("queue:default"), 3);
  assert.equal(await handle.redis.llen(`queue:sq|${live}|default`), 1, "a live process keeps its jobs");
  assert.deepEqual((await handle.redis.smembers("super_processes")).sort(), [live, "me:3:cccccccccccc"].sort());
});

test("one fetch moves up to `max` jobs (the free slots) from the first non-empty queue, oldest first", async () => {
  const jids = await push("default", 5);
  const fetch = fetcher([{ name: "default", weight: 0 }]);
  const units = await fetch.retrieveWork(3);
  assert.deepEqual(
    units.map((u) => JSON.parse(u.job).jid),
    jids.slice(0, 3),
  );
  assert.equal(await handle.redis.llen(`queue:sq|${ID}|default`), 3);
  assert.equal(await handle.redis.llen("queue:default"), 2);
  assert.equal((await fetch.retrieveWork(10)).length, 2, "takes what is there, no more");
  fetch.close();
});
