/**
 * Queue pause with real `tsq` workers: a pause written to the public `paused` set (plain SADD as Ruby's
 * Sidekiq Pro does, the admin API, tsqctl, or Ruby Sidekiq's own Redis connection) stops fetching from
 * the queue within 1 s without a restart, other queues keep flowing, and unpause resumes.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { tsqctl as runTsqctl } from "../../helpers/tsqctl.js";
import { Queue } from "../../../src/admin/api/index.js";
import { useRedis } from "../../helpers/redis.js";
import { requireRubySidekiq } from "../../helpers/ruby.js";
import { TEST_JOBS, eventually, startTsq } from "../../helpers/tsqProcess.js";
import { pushJobs } from "../../helpers/fixtures.js";
import { sleep } from "../../../src/platform/util/sleep.js";

const handle = useRedis();

async function tsqctl(...args: string[]): Promise<string> {
  const run = await runTsqctl([...args, "--redis-url", handle.url], {}, { stripFinalNewline: false });
  assert.equal(run.exitCode, 0, `tsqctl ${args.join(" ")}: ${run.stderr}`);
  return run.stdout;
}

/** Queues of the jobs that ran so far (RecordJob appends to `ran`). */
async function ranIn(queue: string): Promise<number> {
  const ran = await handle.redis.lrange("ran", 0, -1);
  return ran.filter((text) => (JSON.parse(text) as { queue?: string }).queue === queue).length;
}

/** The pause is seen within 1 s: after that, no job pushed to the queue may run. */
const APPLIED_MS = 1000;

test("SADD paused <q> stops a running worker fetching from q within 1 s; other queues flow; tsqctl unpause resumes", async () => {
  const worker = startTsq(["-r", TEST_JOBS, "-c", "5", "-q", "a", "-q", "b"], { REDIS_URL: handle.url });
  await pushJobs(handle.url, "RecordJob", [[1]], "a");
  await pushJobs(handle.url, "RecordJob", [[2]], "b");
  await eventually(async () => (await handle.redis.llen("ran")) === 2, 20_000, "both queues flow");

  // The worker is now blocked in BLMPOP on queue:a and queue:b when the pause lands.
  await handle.redis.sadd("paused", "a");
  await sleep(APPLIED_MS);
  await pushJobs(
    handle.url,
    "RecordJob",
    Array.from({ length: 5 }, (_, i) => [i]),
    "a",
  );
  await pushJobs(
    handle.url,
    "RecordJob",
    Array.from({ length: 5 }, (_, i) => [i]),
    "b",
  );
  await eventually(async () => (await ranIn("b")) === 6, 20_000, "queue b keeps flowing");
  await sleep(1000);
  assert.equal(await handle.redis.llen("queue:a"), 5, "jobs pushed after the pause stay queued");
  assert.equal(await ranIn("a"), 1);

  const listed = await tsqctl("queues");
  assert.match(listed, /PAUSED/);
  assert.match(listed, /^a\s.*paused\s*$/m, listed);
  assert.doesNotMatch(listed, /^b\s.*paused/m, listed);
  const metrics = JSON.parse(await tsqctl("queues", "--json")) as { name: string; paused: boolean }[];
  assert.deepEqual(
    metrics.map((q) => [q.name, q.paused]),
    [
      ["a", true],
      ["b", false],
    ],
  );

  assert.match(await tsqctl("unpause", "a"), /a: unpaused/);
  await eventually(async () => (await ranIn("a")) === 6, 20_000, "queue a runs again after unpause");
  assert.equal(await handle.redis.scard("paused"), 0);
  assert.equal(await worker.stop(), 0);
});

test("reliable fetch, one queue: a BLMOVE already blocked on the paused queue takes no job; tsqctl pause / Queue#unpause", async () => {
  const worker = startTsq(["-r", TEST_JOBS, "-c", "3", "-q", "solo", "--fetch", "reliable"], { REDIS_URL: handle.url });
  await pushJobs(handle.url, "RecordJob", [[0]], "solo");
  await eventually(async () => (await handle.redis.llen("ran")) === 1, 20_000, "the queue flows");

  assert.match(await tsqctl("pause", "solo"), /solo: paused/);
  assert.equal(await new Queue(handle.redis, "solo").paused(), true);
  await sleep(APPLIED_MS);
  await pushJobs(handle.url, "RecordJob", [[1], [2], [3]], "solo");
  await sleep(2500); // longer than the 2 s fetch timeout: a wait that was not ended would have taken one
  assert.equal(await handle.redis.llen("queue:solo"), 3, "no job taken while paused");
  assert.equal(await handle.redis.llen("ran"), 1);

  assert.equal(await new Queue(handle.redis, "solo").unpause(), true);
  await eventually(async () => (await handle.redis.llen("ran")) === 4, 20_000, "the queue runs again");
  const order = (await handle.redis.lrange("ran", 1, -1)).map(
    (text) => (JSON.parse(text) as { args: number[] }).args[0],
  );
  assert.deepEqual(order.sort(), [1, 2, 3]);
  assert.equal(await worker.stop(), 0);
});

test("a pause written by Ruby Sidekiq's own Redis connection is honoured by tsq", async (t) => {
  if (!requireRubySidekiq(t)) return;
  const worker = startTsq(["-r", TEST_JOBS, "-c", "2", "-q", "rb", "-q", "other"], { REDIS_URL: handle.url });
  await pushJobs(handle.url, "RecordJob", [[0]], "rb");
  await eventually(async () => (await handle.redis.llen("ran")) === 1, 20_000, "the queue flows");
  await promisify(execFile)("ruby", ["-e", "require 'sidekiq'; Sidekiq.redis { |c| c.sadd('paused', 'rb') }"], {
    env: { ...process.env, REDIS_URL: handle.url },
  });
  assert.deepEqual(await handle.redis.smembers("paused"), ["rb"]);
  await sleep(APPLIED_MS);
  await pushJobs(handle.url, "RecordJob", [[1], [2]], "rb");
  await pushJobs(handle.url, "RecordJob", [[3]], "other");
  await eventually(async () => (await ranIn("other")) === 1, 20_000, "the other queue flows");
  await sleep(1000);
  assert.equal(await handle.redis.llen("queue:rb"), 2);
  assert.equal(await worker.stop(), 0);
});
