/**
 * The slot script (limit-slot-4.lua) through ConcurrencyLimiter, against a real Redis: the limit holds,
 * a freed slot goes to the oldest parked job in the same step, a paused class parks everything, the
 * parked list is bounded, expired slots are reclaimed, and removing a limit resumes what was parked.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { pino } from "pino";
import { ConcurrencyLimiter } from "../../../../src/features/locks/gitlab-concurrency-limits/ConcurrencyLimiter.js";
import { readLimits } from "../../../../src/features/locks/gitlab-concurrency-limits/status.js";
import { useRedis } from "../../../helpers/redis.js";

const handle = useRedis();
const SLOTS = "tsq:lock:limit:IndexJob";
const PARKED = "tsq:limit-parked:IndexJob";

function limiter(slotTtl = 60, maxParked = 100): ConcurrencyLimiter {
  return new ConcurrencyLimiter(handle.redis, { slotTtl, refreshInterval: 60, maxParked }, pino({ level: "silent" }));
}

function job(jid: string): string {
  return JSON.stringify({ class: "IndexJob", args: [], jid, queue: "default", concurrency_limit_resume: true });
}

const enter = (l: ConcurrencyLimiter, jid: string, limit: number, resumed = false) =>
  l.enter("IndexJob", jid, limit, job(jid), resumed);
const queued = async () =>
  (await handle.redis.lrange("queue:default", 0, -1)).map((t) => (JSON.parse(t) as { jid: string }).jid);

test("limit 2: two run, the rest park in order; a freed slot goes to the oldest parked job at once", async () => {
  const l = limiter();
  assert.equal(await enter(l, "a", 2), "run");
  assert.equal(await enter(l, "b", 2), "run");
  assert.equal(await enter(l, "c", 2), "parked");
  assert.equal(await enter(l, "d", 2), "parked");
  assert.deepEqual(Object.keys(await handle.redis.hgetall(SLOTS)).sort(), ["a", "b"]);
  await l.leave("IndexJob", "a", 2);
  assert.deepEqual(Object.keys(await handle.redis.hgetall(SLOTS)).sort(), ["b", "c"], "c holds the freed slot");
  assert.deepEqual(await queued(), ["c"], "c is back in its queue");
  assert.deepEqual(await handle.redis.sismember("queues", "default"), 1);
  assert.equal(await enter(l, "e", 2), "parked", "a newcomer does not jump the queue");
  assert.equal(await enter(l, "c", 2, true), "run", "c runs on the slot handed to it");
  assert.deepEqual(await handle.redis.lrange(PARKED, 0, -1), [job("d"), job("e")]);
  assert.deepEqual(await readLimits(handle.redis), [{ class: "IndexJob", limit: 2, running: 2, parked: 2 }]);
});

test("a negative limit pauses the class: every job parks, and raising the limit resumes them", async () => {
  const l = limiter();
  for (const jid of ["a", "b", "c"]) assert.equal(await enter(l, jid, -1), "parked");
  await l.leave("IndexJob", "", -1);
  assert.equal(await handle.redis.llen("queue:default"), 0, "nothing resumes while paused");
  assert.equal((await readLimits(handle.redis))[0]?.limit, -1);
  await l.leave("IndexJob", "", 2); // the sweep with the limit raised to 2
  assert.deepEqual(await queued(), ["b", "a"], "the two oldest resumed (LPUSH: a is popped first)");
  await l.leave("IndexJob", "", 0); // no limit any more: the rest resume without slots
  assert.equal(await handle.redis.llen(PARKED), 0);
  assert.equal(await handle.redis.llen("queue:default"), 3);
});

test("the parked list is bounded: past the maximum a job is refused, not parked", async () => {
  const l = limiter(60, 2);
  assert.equal(await enter(l, "a", 1), "run");
  assert.equal(await enter(l, "b", 1), "parked");
  assert.equal(await enter(l, "c", 1), "parked");
  assert.equal(await enter(l, "d", 1), "refused");
  assert.equal(await handle.redis.llen(PARKED), 2);
});

test("an expired slot (its process died) is reclaimed by the next job of the class", async () => {
  const l = limiter(0.3);
  assert.equal(await enter(l, "dead", 1), "run");
  assert.equal(await enter(l, "b", 1), "parked");
  await new Promise((r) => setTimeout(r, 400));
  assert.equal(await enter(l, "c", 1), "parked", "c parks behind b");
  assert.deepEqual(Object.keys(await handle.redis.hgetall(SLOTS)), ["b"], "the dead holder's slot went to b");
  assert.deepEqual(await queued(), ["b"]);
});

test("a lowered limit never lets a handed-on job run over it; it parks again at the head", async () => {
  const l = limiter();
  assert.equal(await enter(l, "a", 2), "run");
  assert.equal(await enter(l, "b", 2), "run");
  assert.equal(await enter(l, "b", 1, true), "parked", "b would be the second of 1");
  assert.equal(await enter(l, "x", 1), "parked");
  assert.deepEqual(await handle.redis.lrange(PARKED, 0, 0), [job("b")], "b keeps its turn");
});
