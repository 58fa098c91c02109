/**
 * The supervisor's merge of its children's metrics (src/metrics/MergedSeries.ts), seen from outside: a
 * real `tsq-cluster` of 2 children against a private redis-server, scraped over HTTP and parsed with
 * the strict text-format parser. docs/metrics.md promises that counters never go backwards and that a
 * dead child's last counts stay, with its replacement's added on top: so exact sums, before and after a
 * SIGKILL, and after the dead child's counts are final (10 s after its exit).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { freePort, useRedis } from "../helpers/redis.js";
import { TEST_JOBS, eventually, startTsq } from "../helpers/tsqProcess.js";
import { pushJobs, scratchDir } from "../helpers/fixtures.js";
import { parseExposition, total, type ParsedFamily } from "./promText.js";
import { request } from "./http.js";

const handle = useRedis();

/** ms after a child's exit when its counts are final (ClusterMetrics DEAD_GRACE_MS), plus a margin. */
const PAST_DEAD_GRACE_MS = 11_000;

async function scrape(port: number): Promise<Map<string, ParsedFamily>> {
  const reply = await request(port, "/metrics");
  assert.equal(reply.status, 200, reply.body);
  return parseExposition(reply.body);
}

async function childPids(): Promise<number[]> {
  const pids: number[] = [];
  for (const identity of await handle.redis.smembers("processes")) {
    const info = await handle.redis.hget(identity, "info");
    if (info) pids.push((JSON.parse(info) as { pid: number }).pid);
  }
  return pids.sort((a, b) => a - b);
}

/** The job counters the test checks, from one scrape. */
function counts(families: Map<string, ParsedFamily>): { done: number; waited: number; inf: number } {
  const job = { class: "NapCountJob", queue: "default" };
  return {
    done: total(families, "tsq_jobs_completion_seconds_count", { ...job, job_status: "done" }),
    waited: total(families, "tsq_jobs_queue_duration_seconds_count", job),
    inf: total(families, "tsq_jobs_completion_seconds_bucket", { ...job, job_status: "done", le: "+Inf" }),
  };
}

test("2 children: merged counters sum exactly; a SIGKILLed child's counts stay once, under its replacement's", async (t) => {
  const dir = scratchDir("tsq-merge-cfg");
  writeFileSync(join(dir, "tsq.yml"), "heartbeat_interval: 1\n");
  const port = await freePort();
  const proc = startTsq(
    ["-r", TEST_JOBS, "--processes", "2", "-c", "2", "-C", join(dir, "tsq.yml"), "--metrics-port", String(port)],
    { REDIS_URL: handle.url },
    "bin/tsq-cluster.js",
  );
  t.after(async () => {
    await proc.stop(15_000);
  });
  await eventually(
    async () => (await request(port, "/readyz").catch(() => undefined))?.status === 200,
    30_000,
    `/readyz 200; output:\n${proc.output().slice(-3000)}`,
  );
  const [first, second] = await childPids();
  assert.ok(first !== undefined && second !== undefined, "2 children heartbeating");

  // 2 slots per child and 50 ms per job: both children take a share of the 100.
  await pushJobs(
    handle.url,
    "NapCountJob",
    Array.from({ length: 100 }, (_, i) => [i, 50]),
  );
  await eventually(async () => (await handle.redis.get("counted")) === "100", 30_000, "100 jobs run");
  await eventually(async () => counts(await scrape(port)).done === 100, 10_000, "100 completions in /metrics");
  assert.deepEqual(counts(await scrape(port)), { done: 100, waited: 100, inf: 100 }, "every series sums both children");

  // SIGKILL: no final snapshot. The scrape above asked both children for theirs, so nothing is lost.
  process.kill(first, "SIGKILL");
  const killedAt = performance.now();
  await eventually(
    async () => {
      const pids = await childPids();
      const families = await scrape(port);
      const replaced = pids.length === 2 && !pids.includes(first) && pids.includes(second);
      return replaced && total(families, "tsq_cluster_child_restarts_total", { reason: "crash" }) === 1;
    },
    30_000,
    "the killed child replaced",
  );
  assert.deepEqual(counts(await scrape(port)), { done: 100, waited: 100, inf: 100 }, "neither lost nor doubled");

  // The replacement's counts add on top of the dead child's.
  await pushJobs(
    handle.url,
    "NapCountJob",
    Array.from({ length: 50 }, (_, i) => [100 + i, 50]),
  );
  await eventually(async () => (await handle.redis.get("counted")) === "150", 30_000, "150 jobs run");
  await eventually(async () => counts(await scrape(port)).done === 150, 10_000, "150 completions in /metrics");

  // Scrape until the dead child's counts are final and past it: every scrape holds exactly 150.
  const seen = new Set<string>();
  await eventually(
    async () => {
      seen.add(JSON.stringify(counts(await scrape(port))));
      return performance.now() - killedAt > PAST_DEAD_GRACE_MS;
    },
    60_000,
    "the dead child's counts to be final",
    500,
  );
  assert.deepEqual([...seen], [JSON.stringify({ done: 150, waited: 150, inf: 150 })]);
});
