/**
 * A paused class and the parked-list bound in a real worker, as a user sees them: jobs park instead of
 * running, `tsqctl limits` and /metrics show them, a push past the bound goes to retries with
 * ConcurrencyLimitFullError, and a worker started with the limit raised runs what was parked.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { Client } from "../../../../src/client/Client.js";
import { freePort, useRedis } from "../../../helpers/redis.js";
import { request } from "../../../metrics/http.js";
import { ROOT, eventually, startTsq } from "../../../helpers/tsqProcess.js";
import { config } from "../../../reliable/chaosRun.js";
import { tsqctl as runTsqctl } from "../../../helpers/tsqctl.js";

const handle = useRedis();
const JOBS = join(ROOT, "dist/test/jobs/limitJobs.js");

async function tsqctl(...args: string[]): Promise<string> {
  const run = await runTsqctl([...args, "--redis-url", handle.url], process.env, { stripFinalNewline: false });
  assert.equal(run.exitCode, 0, run.stderr);
  return run.stdout;
}

test("a paused class parks its jobs, up to the bound; raising the limit runs them", { timeout: 120_000 }, async (t) => {
  const cfg = config("heartbeat_interval: 1\nconcurrency_limit_max_parked: 3\n");
  const port = await freePort();
  const paused = startTsq(
    ["-r", JOBS, "-c", "4", "-q", "default", "-t", "1", "-C", cfg, "--metrics-port", String(port)],
    {
      REDIS_URL: handle.url,
    },
  );
  const client = new Client({ redis: handle.url });
  t.after(() => client.close());
  for (let i = 0; i < 5; i++) await client.push({ class: "PausedJob", args: [i] });
  await eventually(async () => (await handle.redis.zcard("retry")) === 2, 30_000, "two refused to retries");
  assert.equal(await handle.redis.llen("tsq:limit-parked:PausedJob"), 3, "three parked: the bound");
  assert.equal(await handle.redis.llen("ran"), 0, "none ran");
  const [refused] = await handle.redis.zrange("retry", 0, 0);
  const failure = JSON.parse(refused!) as { error_class: string; error_message: string };
  assert.equal(failure.error_class, "ConcurrencyLimitFullError");
  assert.match(failure.error_message, /3 jobs are already parked waiting for the class to be unpaused/);
  const parked = (await handle.redis.lrange("tsq:limit-parked:PausedJob", 0, -1)).map(
    (text) =>
      JSON.parse(text) as { args: number[]; concurrency_limit_resume: boolean; concurrency_limit_buffered_at: number },
  );
  assert.deepEqual(
    parked.map((j) => j.args[0]),
    [0, 1, 2],
    "parked in push order",
  );
  assert.ok(
    parked.every((j) => j.concurrency_limit_resume && j.concurrency_limit_buffered_at > 0),
    "GitLab's fields",
  );

  assert.deepEqual(JSON.parse(await tsqctl("limits", "--json")), [
    { class: "PausedJob", limit: -1, running: 0, parked: 3 },
  ]);
  assert.match(await tsqctl("limits"), /PausedJob\s+paused\s+0\s+3/);
  const { body } = await request(port, "/metrics");
  assert.match(body, /tsq_concurrency_limit_parked_jobs\{class="PausedJob"\} 3\b/);
  assert.match(body, /tsq_concurrency_limit\{class="PausedJob"\} -1\b/);
  const counted = await eventually(
    async () => {
      const text = (await request(port, "/metrics")).body;
      return /tsq_jobs_concurrency_limit_refused_total\{[^}]*class="PausedJob"\} 2\b/.test(text) ? text : undefined;
    },
    20_000,
    "refusals counted",
  );
  assert.match(counted, /tsq_jobs_parked_total\{queue="default",class="PausedJob"\} 3\b/);
  await paused.stop(10_000);

  // Parked jobs live in Redis: a worker deployed with the limit raised resumes them (its sweep runs
  // every heartbeat_interval), two at a time.
  const raised = startTsq(["-r", JOBS, "-c", "4", "-q", "default", "-t", "1", "-C", cfg], {
    REDIS_URL: handle.url,
    PAUSED_JOB_LIMIT: "2",
  });
  t.after(() => raised.stop(10_000));
  await eventually(async () => (await handle.redis.llen("ran")) === 3, 30_000, "the parked jobs ran");
  const samples = (await handle.redis.lrange("samples:PausedJob", 0, -1)).map(Number);
  assert.ok(Math.max(...samples) <= 2, "never more than the raised limit at once");
  assert.deepEqual(JSON.parse(await tsqctl("limits", "--json")), [
    { class: "PausedJob", limit: 2, running: 0, parked: 0 },
  ]);
});

test("a job requeued by a hard shutdown keeps its slot; its copy runs on it", { timeout: 120_000 }, async (t) => {
  const client = new Client({ redis: handle.url });
  t.after(() => client.close());
  const first = startTsq(["-r", JOBS, "-c", "2", "-q", "default", "-t", "1"], { REDIS_URL: handle.url });
  const jid = await client.push({ class: "OneAtOnceJob", args: [1, 4000] });
  await eventually(async () => (await handle.redis.llen("started")) === 1, 30_000, "the job started");
  await first.stop(20_000); // the 1 s timeout passes: the job is requeued with its jid and aborted
  assert.deepEqual(
    (await handle.redis.lrange("queue:default", 0, -1)).map((text) => (JSON.parse(text) as { jid: string }).jid),
    [jid],
    "requeued",
  );
  assert.equal(await handle.redis.hexists("tsq:lock:limit:OneAtOnceJob", jid!), 1, "the slot stays with its jid");
  const second = startTsq(["-r", JOBS, "-c", "2", "-q", "default", "-t", "1"], { REDIS_URL: handle.url });
  t.after(() => second.stop(10_000));
  await eventually(async () => (await handle.redis.llen("started")) === 2, 30_000, "the copy started");
  await client.push({ class: "OneAtOnceJob", args: [2, 0] });
  await eventually(async () => (await handle.redis.lrange("ran", 0, -1)).includes("2"), 30_000, "job 2 ran after it");
  const samples = (await handle.redis.lrange("samples:OneAtOnceJob", 0, -1)).map(Number);
  assert.deepEqual(samples.slice(1), [1, 1], "the copy and job 2 each ran alone");
  const order = await handle.redis.lrange("order:OneAtOnceJob", 0, -1);
  assert.deepEqual(order, ["1", "1", "2"], "job 2 waited for the copy");
});
