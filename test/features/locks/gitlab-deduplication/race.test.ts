/**
 * 1,000 concurrent pushes of the same idempotent job from 4 separate processes (each with its own Client
 * and connection): exactly one is enqueued per deduplicating strategy, and every push resolves to that
 * job's jid; with strategy none all 1,000 are enqueued.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { useRedis } from "../../../helpers/redis.js";
import { race as raceWith } from "../../../helpers/race.js";

const handle = useRedis();
const PROCESSES = 4;
const PER_PROCESS = 250;

const race = (className: string) =>
  raceWith(handle, {
    module: "dedupJobs.js",
    className,
    processes: PROCESSES,
    perProcess: PER_PROCESS,
    loggedStatus: "deduplicated",
  });

for (const className of ["UntilExecutingJob", "UntilExecutedJob"]) {
  test(`${className}: 1,000 concurrent pushes from 4 processes enqueue exactly 1`, { timeout: 120_000 }, async () => {
    const { jids, queued, logged } = await race(className);
    assert.equal(jids.length, PROCESSES * PER_PROCESS);
    assert.equal(logged, PROCESSES * PER_PROCESS - 1, 'each dropped push logged with job_status "deduplicated"');
    assert.equal(queued.length, 1, `exactly one job enqueued, got ${queued.length}`);
    assert.deepEqual(new Set(jids), new Set(queued), "every push resolves to the enqueued job's jid");
    const lock = await handle.redis.keys("tsq:lock:dedup:default:*");
    assert.equal(lock.length, 1);
    assert.deepEqual(Object.keys(await handle.redis.hgetall(lock[0]!)), queued, "the lock is held by that jid");
  });
}

test("strategy none: 1,000 concurrent pushes from 4 processes enqueue 1,000", { timeout: 120_000 }, async () => {
  const { jids, queued, logged } = await race("NoDedupJob");
  assert.equal(logged, 0);
  assert.equal(queued.length, PROCESSES * PER_PROCESS);
  assert.equal(new Set(jids).size, PROCESSES * PER_PROCESS, "1,000 distinct jids");
  assert.deepEqual(await handle.redis.keys("tsq:lock:*"), [], "no lock taken");
});
