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

test("tsq started with Redis down stops on TERM at once", async () => {
  const down = `redis://127.0.0.1:${await freePort()}/0`;
  const tsq = startTsq(["-r", TEST_JOBS, "-t", "5"], { REDIS_URL: down });
  await tsq.waitForLine((l) => l.msg === "starting tsq");
  await new Promise((r) => setTimeout(r, 1000));
  const [code, seconds] = await timedStop(tsq);
  assert.equal(code, 0, tsq.output());
  assert.ok(seconds < 3, `stopped in ${seconds.toFixed(1)} s`);
});

test("tsq-cluster started with Redis down stops on TERM within -t", async () => {
  const down = `redis://127.0.0.1:${await freePort()}/0`;
  const cluster = startTsq(
    ["-r", TEST_JOBS, "-t", "3", "--processes", "2", "--metrics-port", "0", "-q", "default"],
    { REDIS_URL: down },
    "bin/tsq-cluster.js",
  );
  await new Promise((r) => setTimeout(r, 3000));
  const [, seconds] = await timedStop(cluster);
  assert.ok(seconds < 3 + 1, `stopped in ${seconds.toFixed(1)} s:\n${cluster.output().slice(-2000)}`);
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
    const [code, seconds] = await timedStop(tsq);
    assert.ok(seconds < 2 + 3, `stopped in ${seconds.toFixed(1)} s (-t 2):\n${tsq.output().slice(-3000)}`);
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
  assert.ok(seconds < 3, `stopped in ${seconds.toFixed(1)} s despite -t 25`);
  const [queued] = await handle.redis.lrange("queue:default", 0, -1);
  assert.ok(queued, `requeued; ${JSON.stringify(await handle.redis.keys("*"))}\n${tsq.output().slice(-3000)}`);
  assert.equal((JSON.parse(queued) as { jid: string }).jid, jid, "the job was requeued");
});
