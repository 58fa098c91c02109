/** BasicFetch: BRPOP for one slot, BLMPOP for several (oldest first, first non-empty queue in order). */
import { test } from "node:test";
import assert from "node:assert/strict";
import { useRedis } from "../helpers/redis.js";
import { pushJobs } from "../helpers/fixtures.js";
import { connect } from "../../src/platform/redis/connection.js";
import { BasicFetch } from "../../src/server/fetch/BasicFetch.js";

const handle = useRedis();

function fetcher(queues: string[]): BasicFetch {
  return new BasicFetch(
    handle.redis,
    connect(handle.url),
    queues.map((name) => ({ name, weight: 0 })),
    0.2,
  );
}

test("several free slots: one fetch takes up to that many jobs, oldest first, from the first non-empty queue", async () => {
  const low = await pushJobs(handle.url, "A", [[1], [2], [3]], "low");
  const high = await pushJobs(handle.url, "A", [[4], [5]], "high");
  const fetch = fetcher(["high", "low"]);
  const first = await fetch.retrieveWork(10);
  assert.deepEqual(
    first.map((u) => u.queue),
    ["high", "high"],
    "never mixes queues in one fetch",
  );
  assert.deepEqual(
    first.map((u) => JSON.parse(u.job).jid),
    high,
  );
  const second = await fetch.retrieveWork(2);
  assert.deepEqual(
    second.map((u) => JSON.parse(u.job).jid),
    low.slice(0, 2),
  );
  const third = await fetch.retrieveWork(1);
  assert.deepEqual(
    third.map((u) => JSON.parse(u.job).jid),
    low.slice(2),
  );
  assert.deepEqual(await fetch.retrieveWork(5), [], "empty queues time out with nothing");
  fetch.close();
});

test("requeue puts a job back at the tail, so it is fetched next", async () => {
  const jids = await pushJobs(handle.url, "A", [[1], [2]]);
  const fetch = fetcher(["default"]);
  const [unit] = await fetch.retrieveWork(1);
  await unit!.requeue();
  const again = await fetch.retrieveWork(2);
  assert.deepEqual(
    again.map((u) => JSON.parse(u.job).jid),
    jids,
  );
  fetch.close();
});
