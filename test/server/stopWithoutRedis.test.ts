/**
 * TERM/INT stop a worker and a cluster within -t at every stage of life, Redis or not; a second signal
 * stops at once. What could not be written to Redis is logged; with reliable fetch the unfinished job
 * stays in Redis, recoverable.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { performance } from "node:perf_hooks";
import { freePort, useRedis } from "../helpers/redis.js";
import { TEST_JOBS, eventually, startTsq, type TsqProcess } from "../helpers/tsqProcess.js";
import { pushJobs } from "../helpers/fixtures.js";

const handle = useRedis();
/** The -t of the stops with Redis down: no job runs, so a stop that reaches it waited for Redis. */
const T_SECONDS = 20;

/** Sends TERM and resolves to [exit code, seconds until exit]. */
async function timedStop(
  proc: TsqProcess,
  signals: NodeJS.Signals[] = ["SIGTERM"],
): Promise<[number | string, number]> {
  const started = performance.now();
  for (const signal of signals) {
    proc.signal(signal);
    await new Promise((r) => setTimeout(r, 200));
  }
  const timer = setTimeout(() => proc.signal("SIGKILL"), 30_000);
  const code = await proc.exited;
  clearTimeout(timer);
  return [code, (performance.now() - started) / 1000];
}

test("tsq started with Redis down stops on TERM before its -t deadline", async () => {
  const down = `redis://127.0.0.1:${await freePort()}/0`;
  const tsq = startTsq(["-r", TEST_JOBS, "-t", String(T_SECONDS)], { REDIS_URL: down });
  await tsq.waitForLine((l) => String(l.msg).startsWith("cannot reach Redis"), 60_000);
  const [code, seconds] = await timedStop(tsq);
  assert.equal(code, 0, tsq.output());
  // No job runs, so nothing waits for -t: the stop ends long before the 20 s deadline, however loaded
  // the machine (a stop that waited for Redis would run into it).
  assert.ok(seconds < T_SECONDS, `stopped in ${seconds.toFixed(1)} s`);
  assert.ok(tsq.lines.some((l) => l.msg === "bye"));
});

test("tsq-cluster started with Redis down stops on TERM before -t, every child on its own", async () => {
  const down = `redis://127.0.0.1:${await freePort()}/0`;
  const cluster = startTsq(
    ["-r", TEST_JOBS, "-t", String(T_SECONDS), "--processes", "2", "--metrics-port", "0", "-q", "default"],
    { REDIS_URL: down },
    "bin/tsq-cluster.js",
  );
  // Both children booted and found Redis away: the stop reaches workers, not booting processes.
  await eventually(
    async () =>
      new Set(cluster.lines.filter((l) => String(l.msg).startsWith("cannot reach Redis")).map((l) => l.child)).size ===
      2,
    60_000,
    "both children started",
  );
  const [code, seconds] = await timedStop(cluster);
  const output = cluster.output().slice(-2000);
  assert.equal(code, 0, output);
  // The order that matters: every child said goodbye and the supervisor never had to kill one at its
  // deadline (-t + 5 s); it waited for nothing in Redis on the way out.
  assert.equal(cluster.lines.filter((l) => l.msg === "bye").length, 2, output);
  assert.ok(!cluster.lines.some((l) => String(l.msg).includes("SIGKILL")), output);
  assert.ok(seconds < T_SECONDS, `stopped in ${seconds.toFixed(1)} s:\n${output}`);
});

for (const mode of ["basic", "reliable"] as const) {
  test(`${mode} fetch: Redis goes away while a job runs; TERM stops within -t and says what was not written`, async () => {
    const [jid] = await pushJobs(handle.url, "SleepJob", [[60]]);
    const tsq = startTsq(["-r", TEST_JOBS, "-t", "2", "--fetch", mode], { REDIS_URL: handle.url });
    await eventually(async () => (await handle.redis.llen("started")) === 1, 10_000, "the job started");
    const outage = handle.restart(8000); // SHUTDOWN SAVE, down 8 s, back with the same data
    await eventually(
      async () => tsq.lines.some((l) => String(l.msg).startsWith("Redis connection lost")),
      5000,
      "the worker saw Redis go",
    );
    let redisBack = false;
    void outage.then(() => (redisBack = true));
    const [code, seconds] = await timedStop(tsq);
    // Order, not speed: the stop ended while Redis was still away (it did not wait for Redis to return),
    // and long before the 60 s job would have ended.
    assert.ok(
      !redisBack,
      `stopped in ${seconds.toFixed(1)} s (-t 2), after Redis came back:\n${tsq.output().slice(-3000)}`,
    );
    assert.equal(code, 0);
    await outage;
    const messages = tsq.lines.map((l) => String(l.msg));
    if (mode === "reliable") {
      assert.ok(
        messages.some((m) => m.includes("stay in this process's private lists")),
        messages.join("\n"),
      );
      const [key] = await handle.redis.keys("queue:sq|*");
      assert.ok(key, "the private list survived");
      const [kept] = await handle.redis.lrange(key, 0, -1);
      assert.equal((JSON.parse(kept!) as { jid: string }).jid, jid, "the unfinished job is in Redis, recoverable");
    } else {
      const line = tsq.lines.find((l) => String(l.msg).includes("could not be requeued"));
      assert.ok(line, messages.join("\n"));
      const jobs = line.jobs as { payload: string }[];
      assert.equal((JSON.parse(jobs[0]!.payload) as { jid: string }).jid, jid, "the lost job's payload is logged");
    }
  });
}

test("a second TERM stops at once, requeueing the running job", async () => {
  const [jid] = await pushJobs(handle.url, "SleepJob", [[60]]);
  const tsq = startTsq(["-r", TEST_JOBS, "-t", "25"], { REDIS_URL: handle.url });
  await eventually(async () => (await handle.redis.llen("started")) === 1, 10_000, "the job started");
  const [code, seconds] = await timedStop(tsq, ["SIGTERM", "SIGTERM"]);
  assert.equal(code, 0);
  // Before the 25 s deadline: the second TERM does not wait for it, however loaded the machine.
  const deadline = 25;
  assert.ok(seconds < deadline, `stopped in ${seconds.toFixed(1)} s despite -t ${deadline}`);
  const [queued] = await handle.redis.lrange("queue:default", 0, -1);
  assert.ok(queued, `requeued; ${JSON.stringify(await handle.redis.keys("*"))}\n${tsq.output().slice(-3000)}`);
  assert.equal((JSON.parse(queued) as { jid: string }).jid, jid, "the job was requeued");
});
