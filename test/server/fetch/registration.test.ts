/**
 * A reliable-fetch worker started while Redis is over maxmemory (noeviction) starts, says what it
 * could not write, drains the queue (which frees the memory) and registers once Redis accepts writes.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { useRedis } from "../../helpers/redis.js";
import { testLauncher } from "../../helpers/context.js";
import { Job } from "../../../src/client/Job.js";

const handle = useRedis();

test("Redis over maxmemory at start: a reliable worker starts, drains the queue and registers later", async (t) => {
  const { redis } = handle;
  t.after(() => redis.config("SET", "maxmemory", "0"));
  let ran = 0;
  class Small extends Job {
    perform(): void {
      ran++;
    }
  }
  const jobs = 20_000;
  const payloads = Array.from({ length: jobs }, (_, i) =>
    JSON.stringify({
      class: "Small",
      queue: "default",
      jid: `j${i}`,
      args: [i, "x".repeat(100)],
      retry: false,
      created_at: 1,
      enqueued_at: 1,
    }),
  );
  for (let i = 0; i < jobs; i += 1000) await redis.lpush("queue:default", ...payloads.slice(i, i + 1000));
  await redis.sadd("queues", "default");
  // Over the limit: the queue itself holds more than maxmemory allows.
  const used = Number(/used_memory:(\d+)/.exec(await redis.info("memory"))![1]);
  await redis.config("SET", "maxmemory-policy", "noeviction");
  await redis.config("SET", "maxmemory", String(used - 1_000_000));
  await assert.rejects(redis.sadd("probe", "x"), /OOM/);

  const launcher = testLauncher(handle.url, [Small], { fetch: "reliable", concurrency: 10 });
  const started = performance.now();
  await launcher.start(); // rejected with OOM before the fix
  try {
    const deadline = Date.now() + 120_000;
    while ((await redis.llen("queue:default")) > 0 || ran < jobs) {
      if (Date.now() > deadline) throw new Error(`drained ${ran} of ${jobs} jobs in 120 s`);
      await new Promise((r) => setTimeout(r, 100));
    }
    t.diagnostic(`${jobs} jobs drained in ${((performance.now() - started) / 1000).toFixed(1)} s`);
    const deadline2 = Date.now() + 60_000;
    while (!(await redis.sismember("super_processes", launcher.identity))) {
      if (Date.now() > deadline2) throw new Error("never registered in super_processes after memory was freed");
      await new Promise((r) => setTimeout(r, 100));
    }
  } finally {
    await launcher.stop();
  }
  assert.equal(ran, jobs);
});
