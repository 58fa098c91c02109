/**
 * 4 separate processes × 1,000 concurrent pushes each of the same unique job (each with its own Client
 * and connection): exactly one is enqueued, every other push resolves to null (Enterprise's push returns
 * nil) and is logged; a plain class enqueues all 4,000.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { useRedis } from "../../../helpers/redis.js";
import { race as raceWith } from "../../../helpers/race.js";

const handle = useRedis();
const PROCESSES = 4;
const PER_PROCESS = 1000;

const race = (className: string) =>
  raceWith(handle, {
    module: "uniqueJobs.js",
    className,
    processes: PROCESSES,
    perProcess: PER_PROCESS,
    loggedStatus: "not_unique",
  });

for (const className of ["UniqueJob", "UntilStartJob"]) {
  test(`${className}: 4 processes × 1,000 concurrent pushes enqueue exactly 1`, { timeout: 120_000 }, async () => {
    const { jids, queued, logged } = await race(className);
    assert.equal(jids.length, PROCESSES * PER_PROCESS);
    assert.equal(queued.length, 1, `exactly one job enqueued, got ${queued.length}`);
    const accepted = jids.filter((jid) => jid !== null);
    assert.deepEqual(accepted, queued, "the one accepted push is the enqueued job; every other resolved to null");
    assert.equal(logged, PROCESSES * PER_PROCESS - 1, 'each refused push logged with job_status "not_unique"');
    const locks = await handle.redis.keys("tsq:lock:unique:*");
    assert.equal(locks.length, 1);
    assert.deepEqual(Object.keys(await handle.redis.hgetall(locks[0]!)), queued, "the lock is held by that jid");
    const ttl = await handle.redis.pttl(locks[0]!);
    assert.ok(ttl > 590_000 && ttl <= 600_000, `the lock lasts uniqueFor (600 s), PTTL ${ttl} ms`);
  });
}

test("a plain class: 4 processes × 1,000 concurrent pushes enqueue 4,000", { timeout: 120_000 }, async () => {
  const { jids, queued, logged } = await race("PlainJob");
  assert.equal(logged, 0);
  assert.equal(queued.length, PROCESSES * PER_PROCESS);
  assert.equal(new Set(jids).size, PROCESSES * PER_PROCESS, "4,000 distinct jids");
  assert.deepEqual(await handle.redis.keys("tsq:lock:*"), [], "no lock taken");
});
