/**
 * The worker's lifecycle with real `tsq` processes: TERM within -t, hard shutdown requeue, a second
 * INT, TSTP quiet, TTIN busy dump, startup errors, and stray job errors.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { useRedis } from "../helpers/redis.js";
import { TEST_JOBS, eventually, startTsq } from "../helpers/tsqProcess.js";
import { pushJobs, scratchDir } from "../helpers/fixtures.js";
import { withinDeadline } from "../helpers/timing.js";

const handle = useRedis();

/** A config file with a 1 s heartbeat so quiet/busy show up fast. */
function fastConfig(): string {
  const dir = scratchDir("tsq-cfg");
  const path = join(dir, "tsq.yml");
  writeFileSync(path, "heartbeat_interval: 1\n");
  return path;
}

const push = (className: string, argsList: unknown[][], queue = "default") =>
  pushJobs(handle.url, className, argsList, queue);

test("TERM with 20 long jobs and -t 2: exits 0 within ~3 s, every job back in its queue, a new worker runs them", async () => {
  const jids = await push(
    "SleepJob",
    Array.from({ length: 20 }, () => [60]),
  );
  const worker = startTsq(["-r", TEST_JOBS, "-c", "20", "-t", "2", "-C", fastConfig()], { REDIS_URL: handle.url });
  await eventually(async () => (await handle.redis.llen("started")) === 20, 15_000, "20 jobs started");
  const identity = (await handle.redis.smembers("processes"))[0]!;
  const started = performance.now();
  worker.signal("SIGTERM");
  const code = await worker.exited;
  const seconds = (performance.now() - started) / 1000;
  console.log(`TERM -> exit in ${seconds.toFixed(2)} s`);
  assert.equal(code, 0, worker.output().slice(-2000));
  withinDeadline(seconds * 1000, 2000, "TERM with -t 2 and 20 running jobs");
  const queued = (await handle.redis.lrange("queue:default", 0, -1)).map((j) => JSON.parse(j).jid as string);
  assert.deepEqual(queued.sort(), [...jids].sort());
  assert.equal(await handle.redis.sismember("processes", identity), 0);
  assert.equal(await handle.redis.exists(`${identity}:work`), 0);
  assert.equal(await handle.redis.llen("ran"), 0);

  await handle.redis.del("started");
  const again = startTsq(["-r", TEST_JOBS, "-c", "20", "-t", "1"], { REDIS_URL: handle.url });
  await eventually(async () => (await handle.redis.llen("started")) === 20, 15_000, "requeued jobs started again");
  assert.deepEqual((await handle.redis.lrange("started", 0, -1)).sort(), [...jids].sort());
  assert.equal(await again.stop(), 0);
});

test("a second INT requeues running jobs at once instead of waiting for -t", async () => {
  await push("SleepJob", [[60], [60]]);
  const worker = startTsq(["-r", TEST_JOBS, "-c", "2", "-t", "30"], { REDIS_URL: handle.url });
  await eventually(async () => (await handle.redis.llen("started")) === 2, 15_000, "jobs started");
  const started = performance.now();
  worker.signal("SIGINT");
  await worker.waitForLine((l) => l.msg === "shutting down");
  worker.signal("SIGINT");
  assert.equal(await worker.exited, 0);
  assert.ok(performance.now() - started < 5000);
  assert.equal(await handle.redis.llen("queue:default"), 2);
});

test("TSTP quiets: no new jobs are fetched, the heartbeat says quiet; TTIN logs busy jobs", async () => {
  const [jid] = await push("SleepJob", [[30]]);
  const worker = startTsq(["-r", TEST_JOBS, "-c", "2", "-t", "1", "-C", fastConfig()], { REDIS_URL: handle.url });
  await eventually(async () => (await handle.redis.llen("started")) === 1, 15_000, "job started");
  worker.signal("SIGTTIN");
  const dump = await worker.waitForLine((l) => l.msg === "busy jobs (TTIN)");
  const jobs = dump.jobs as { jid: string; class: string; running_s: number }[];
  assert.equal(dump.busy, 1);
  assert.equal(jobs[0]!.jid, jid);
  assert.equal(jobs[0]!.class, "SleepJob");
  assert.equal(typeof jobs[0]!.running_s, "number");

  worker.signal("SIGTSTP");
  await worker.waitForLine((l) => l.msg === "quieting: no new jobs will be fetched");
  const identity = (await handle.redis.smembers("processes"))[0]!;
  await eventually(async () => (await handle.redis.hget(identity, "quiet")) === "true", 5000, "quiet=true");
  await push("RecordJob", [["after-quiet"]]);
  await new Promise((r) => setTimeout(r, 1500));
  assert.equal(await handle.redis.llen("queue:default"), 1, "a quiet worker must not fetch");
  assert.equal(await handle.redis.hget(identity, "busy"), "1");
  assert.equal(await worker.stop(), 0);
});

test("a job module that fails to load is a clear startup error (exit 1); a bad flag exits 2 with usage", async () => {
  const missing = startTsq(["-r", "/nonexistent/jobs.js"], { REDIS_URL: handle.url });
  assert.equal(await missing.exited, 1);
  assert.match(missing.output(), /could not load the job module \/nonexistent\/jobs\.js/);

  const bad = startTsq(["--concurrency", "many"], { REDIS_URL: handle.url });
  assert.equal(await bad.exited, 2);
  assert.match(bad.output(), /tsq: .*concurrency/);
  assert.match(bad.output(), /Usage: tsq/);
});

test("a stray error thrown from a job's timer or an unhandled rejection does not kill the worker", async () => {
  await push("StrayErrorJob", [[]]);
  const worker = startTsq(["-r", TEST_JOBS, "-t", "1"], { REDIS_URL: handle.url });
  await worker.waitForLine((l) => l.msg === "uncaught exception; the worker keeps running");
  await worker.waitForLine((l) => l.msg === "unhandled promise rejection; the worker keeps running");
  await push("RecordJob", [["still alive"]]);
  await eventually(async () => (await handle.redis.llen("ran")) === 1, 10_000, "worker still runs jobs");
  assert.equal(await worker.stop(), 0);
});
