/**
 * Redis goes away mid-run and comes back: the worker recovers by itself. With reliable fetch nothing is
 * lost. With basic fetch, as with Sidekiq's, the jobs of a fetch Redis served just before it stopped can
 * be lost with the unsent reply (BLMPOP popped them, the shutdown dropped the answer): at most one fetch,
 * `-c` jobs.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { useRedis } from "../helpers/redis.js";
import { TEST_JOBS, eventually, startTsq } from "../helpers/tsqProcess.js";
import { Client } from "../../src/client/Client.js";

const handle = useRedis();

const CONCURRENCY = 5;

for (const fetch of ["basic", "reliable"] as const) {
  test(`${fetch} fetch: Redis stopped for 5 s and restarted mid-run: the worker logs the outage once, recovers, finishes every job`, async () => {
    const client = new Client({ redis: handle.url });
    const jids = (await client.pushBulk({
      class: "RecordJob",
      args: Array.from({ length: 20_000 }, (_, i) => [i]),
    })) as string[];
    await client.close();
    const worker = startTsq(["-r", TEST_JOBS, "-c", String(CONCURRENCY), "-t", "2", "--fetch", fetch], {
      REDIS_URL: handle.url,
    });
    await eventually(async () => (await handle.redis.llen("ran")) > 2000, 30_000, "work under way");
    handle.redis.disconnect();
    await handle.restart(5000);
    handle.redis.connect().catch(() => {});
    const ranJids = async () =>
      new Set((await handle.redis.lrange("ran", 0, -1)).map((e) => JSON.parse(e).jid as string));
    // Basic fetch may lose one fetch's jobs to the shutdown (see above); reliable fetch loses none.
    const mayLose = fetch === "basic" ? CONCURRENCY : 0;
    await eventually(
      async () =>
        (await ranJids()).size >= jids.length - mayLose && (await handle.redis.llen("queue:default")) === 0
          ? ranJids()
          : undefined,
      60_000,
      "every job ran after the outage",
      500,
    ).catch(async (error: unknown) => {
      // Say where the missing jobs are, so a failure tells a lost job from a slow run.
      const seen = await ranJids();
      const missing = jids.filter((jid) => !seen.has(jid));
      const places = await Promise.all([
        handle.redis.llen("queue:default"),
        handle.redis.zcard("retry"),
        handle.redis.zcard("dead"),
        handle.redis.zcard("schedule"),
      ]);
      throw new Error(
        `${String(error)}; ${missing.length} of ${jids.length} jobs never ran (queue ${places[0]}, retry ${places[1]}, dead ${places[2]}, schedule ${places[3]}): ${missing.slice(0, 5).join(", ")}\n` +
          worker.output().slice(-3000),
      );
    });
    await new Promise((r) => setTimeout(r, 1000)); // the last jobs in flight report
    const seen = await ranJids();
    const missing = jids.filter((jid) => !seen.has(jid)).length;
    assert.ok(missing <= mayLose, `${missing} jobs never ran`);
    if (missing > 0) console.log(`${missing} jobs of one basic fetch were lost with Redis's unsent reply`);
    const lost = worker.lines.filter(
      (l) => l.msg === "Redis connection lost; retrying with back-off, jobs in flight are kept",
    );
    const restored = worker.lines.filter((l) => l.msg === "Redis connection restored; resuming");
    assert.equal(lost.length, 1, worker.output().slice(-3000));
    assert.equal(restored.length, 1);
    console.log(
      `outage logged for ${String(restored[0]!.outage_s)} s; ${(await handle.redis.llen("ran")) - jids.length} duplicate runs`,
    );
    assert.equal(await worker.stop(), 0);
  });
}
