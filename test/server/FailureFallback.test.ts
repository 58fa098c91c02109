/**
 * A job whose failure cannot be recorded must not spin: it goes to the end of its queue a few times,
 * then to `dead` as it is, annotated, while the other jobs of its queue run. The trigger is Redis
 * refusing the retry write (a hostile `retry` key that is not a sorted set: WRONGTYPE). Both fetch
 * strategies, real `tsq` processes. A payload nested 5,000 deep, once unrecordable, is now recorded
 * normally: its stored text is kept as it is.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { useRedis, freePort } from "../helpers/redis.js";
import { TEST_JOBS, eventually, startTsq } from "../helpers/tsqProcess.js";
import { pushJobs } from "../helpers/fixtures.js";
import { MAX_ATTEMPTS } from "../../src/server/FailureFallback.js";

const handle = useRedis();

const POISON = `{"class":"FailJob","args":["boom"],"jid":"poison-jid","queue":"default","retry":true,"created_at":1712345678.5,"enqueued_at":1712345678.5}`;
const DEPTH = 5000;
const DEEP_ARG = `${"[".repeat(DEPTH)}${"]".repeat(DEPTH)}`;
const DEEP = `{"class":"FailJob","args":["deep",${DEEP_ARG}],"jid":"deep-jid","queue":"default","retry":true,"created_at":1712345678.5,"enqueued_at":1712345678.5}`;

for (const mode of ["basic", "reliable"] as const) {
  test(`${mode} fetch: an unrecordable failure goes to dead after ${MAX_ATTEMPTS} attempts; 50 other jobs run meanwhile`, async () => {
    await handle.redis.flushdb();
    await handle.redis.set("retry", "not a sorted set"); // every ZADD retry is refused
    await handle.redis.rpush("queue:default", POISON); // at the tail: fetched first
    await pushJobs(
      handle.url,
      "RecordJob",
      Array.from({ length: 50 }, (_, i) => [i]),
    );
    const metricsPort = await freePort();
    const tsq = startTsq(["-r", TEST_JOBS, "-c", "2", "--fetch", mode, "--metrics-port", String(metricsPort)], {
      REDIS_URL: handle.url,
    });
    try {
      await eventually(
        async () => (await handle.redis.llen("ran")) === 50,
        15_000,
        `50 jobs ran; ${tsq.output().slice(-2000)}`,
      );
      const dead = await eventually(
        async () => (await handle.redis.zrange("dead", 0, -1))[0],
        15_000,
        `the job reached dead; ${tsq.output().slice(-2000)}`,
      );
      const attempts = await handle.redis.llen("failed-attempts");
      assert.equal(attempts, MAX_ATTEMPTS, "it ran exactly MAX_ATTEMPTS times, no spin");
      // The stored bytes are kept, with the error fields appended (last key wins when parsed).
      assert.ok(dead.startsWith(POISON.slice(0, -1)), "dead holds the original payload text");
      const tail = dead.slice(POISON.length - 1);
      assert.match(tail, /"error_class":"Error"/);
      assert.match(tail, /"error_message":"boom \(tsq could not record this failure 3 times: .*WRONGTYPE/);
      assert.match(tail, /"unrecorded_failure":true/);
      assert.equal(await handle.redis.llen("queue:default"), 0, "nothing left in the queue");
      if (mode === "reliable") {
        // Acks are batched (AckBatcher): the private list empties just after the job reaches dead.
        await eventually(
          async () => {
            const privates = await handle.redis.keys("queue:sq|*");
            const held = await Promise.all(privates.map((key) => handle.redis.llen(key)));
            return held.every((n) => n === 0);
          },
          10_000,
          "every private in-progress list is empty",
        );
      }
      const lines = tsq.lines.filter((l) => String(l.msg).startsWith("could not record the job's failure"));
      assert.deepEqual(
        lines.map((l) => l.attempt),
        [1, 2, 3],
        "each attempt is logged with its count",
      );
      const metrics = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
      assert.match(metrics, /tsq_jobs_failure_unrecorded_total\{queue="default",class="FailJob"\} 3/);
      assert.match(metrics, /tsq_jobs_dead_total\{queue="default",class="FailJob"\} 1/);
    } finally {
      assert.equal(await tsq.stop(), 0);
    }
  });
}

test("a payload nested 5,000 deep fails into retry with its stored text kept, no fallback", async () => {
  await handle.redis.flushdb();
  await handle.redis.rpush("queue:default", DEEP);
  const tsq = startTsq(["-r", TEST_JOBS, "-c", "2"], { REDIS_URL: handle.url });
  try {
    const retried = await eventually(
      async () => (await handle.redis.zrange("retry", 0, -1))[0],
      15_000,
      `the job reached retry; ${tsq.output().slice(-2000)}`,
    );
    assert.ok(retried.includes(DEEP_ARG), "the deep argument is stored exactly as it came");
    const parsedTail = JSON.parse(retried.replace(DEEP_ARG, "null")) as Record<string, unknown>;
    assert.equal(parsedTail.error_message, "deep");
    assert.equal(parsedTail.retry_count, 0);
    assert.equal(await handle.redis.llen("failed-attempts"), 1, "it ran once");
    assert.equal(await handle.redis.zcard("dead"), 0);
    assert.equal(
      tsq.lines.filter((l) => String(l.msg).startsWith("could not record")).length,
      0,
      "no fallback was needed",
    );
  } finally {
    assert.equal(await tsq.stop(), 0);
  }
});
