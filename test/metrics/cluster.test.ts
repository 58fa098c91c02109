/**
 * GET /metrics, /healthz and /readyz of a real `tsq-cluster` (issue 5, "Must show"): the supervisor
 * (bin/tsq-cluster.js) and its children run against a private redis-server; every scrape is parsed with
 * the strict text-format parser (test/metrics/promText.ts).
 */
import { test, type TestContext } from "node:test";
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { freePort, useRedis } from "../helpers/redis.js";
import { TEST_JOBS, eventually, startTsq, type TsqProcess } from "../helpers/tsqProcess.js";
import { pushJobs, scratchDir } from "../helpers/fixtures.js";
import { allSeries, parseExposition, total, type ParsedFamily, type ParsedSample } from "./promText.js";
import { request } from "./http.js";
import { withinDeadline } from "../helpers/timing.js";

const handle = useRedis();

interface Cluster {
  proc: TsqProcess;
  port: number;
}

/** `tsq-cluster <args>` with a 1 s heartbeat and /metrics on a free port; stopped after the test. */
async function startCluster(t: TestContext, args: string[]): Promise<Cluster> {
  const dir = scratchDir("tsq-metrics-cfg");
  writeFileSync(join(dir, "tsq.yml"), "heartbeat_interval: 1\n");
  const port = await freePort();
  const proc = startTsq(
    ["-r", TEST_JOBS, ...args, "-C", join(dir, "tsq.yml"), "--metrics-port", String(port)],
    { REDIS_URL: handle.url },
    "bin/tsq-cluster.js",
  );
  t.after(async () => {
    await proc.stop(15_000);
  });
  return { proc, port };
}

async function scrape(port: number): Promise<{ families: Map<string, ParsedFamily>; ms: number }> {
  const reply = await request(port, "/metrics");
  assert.equal(reply.status, 200, reply.body);
  assert.match(reply.contentType ?? "", /^text\/plain; version=0\.0\.4/);
  return { families: parseExposition(reply.body), ms: reply.ms };
}

/** Waits for /readyz 200; returns the statuses seen on the way. */
async function waitReady(cluster: Cluster, ms = 30_000): Promise<number[]> {
  const seen: number[] = [];
  await eventually(
    async () => {
      const status = await request(cluster.port, "/readyz").then(
        (r) => r.status,
        () => 0,
      );
      if (status !== 0 && seen.at(-1) !== status) seen.push(status);
      return status === 200;
    },
    ms,
    `/readyz 200; output:\n${cluster.proc.output().slice(-3000)}`,
    20,
  );
  return seen;
}

/** Every counter and histogram series (the ones that must never go backwards). */
function monotonicSeries(families: Map<string, ParsedFamily>): Map<string, ParsedSample> {
  const kept = new Map([...families].filter(([, f]) => f.type === "counter" || f.type === "histogram"));
  return allSeries(kept);
}

function assertNoCounterWentBack(before: Map<string, ParsedSample>, after: Map<string, ParsedSample>): void {
  const lower = [...before]
    .filter(([id, s]) => !((after.get(id)?.value ?? -1) >= s.value))
    .map(([id, s]) => `${id}: ${s.value} -> ${after.get(id)?.value ?? "missing"}`);
  assert.deepEqual(lower, [], "counter or histogram series lower (or gone) after the child was replaced");
}

async function childPids(): Promise<number[]> {
  const pids: number[] = [];
  for (const identity of await handle.redis.smembers("processes")) {
    const info = await handle.redis.hget(identity, "info");
    if (info) pids.push((JSON.parse(info) as { pid: number }).pid);
  }
  return pids.sort();
}

function stats(ms: number[]): string {
  const sorted = [...ms].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!.toFixed(1);
  return `n=${sorted.length} min=${at(0)} median=${at(0.5)} p95=${at(0.95)} max=${at(1)} ms`;
}

test("1,000 jobs (100 failing) on 3 children: one scrape adds up; SIGKILL of a child loses no count", async (t) => {
  const cluster = await startCluster(t, ["--processes", "3", "-c", "5", "-t", "5"]);
  const statuses = await waitReady(cluster);
  assert.equal(statuses[0], 503, `/readyz must say 503 while children boot (saw ${statuses.join(" -> ")})`);
  assert.equal(await handle.redis.scard("processes"), 3, "/readyz 200 only once every child heartbeats");
  assert.equal((await request(cluster.port, "/healthz")).status, 200);
  assert.equal((await request(cluster.port, "/nope")).status, 404);
  assert.equal((await request(cluster.port, "/metrics", "POST")).status, 405);

  await pushJobs(
    handle.url,
    "CountJob",
    Array.from({ length: 900 }, (_, i) => [i]),
  );
  await pushJobs(
    handle.url,
    "FarRetryFailJob",
    Array.from({ length: 100 }, () => []),
  );
  await pushJobs(
    handle.url,
    "RecordJob",
    Array.from({ length: 37 }, (_, i) => [i]),
    "parked",
  ); // nobody works it
  await eventually(
    async () => (await handle.redis.get("counted")) === "900" && (await handle.redis.zcard("retry")) === 100,
    60_000,
    "900 counted, 100 in retry",
  );

  const { families } = await eventually(
    async () => {
      const s = await scrape(cluster.port);
      return total(s.families, "tsq_jobs_completion_seconds_count") === 1000 ? s : undefined;
    },
    10_000,
    "tsq_jobs_completion_seconds_count summing to 1000",
  );
  const done = { job_status: "done" };
  assert.equal(total(families, "tsq_jobs_completion_seconds_count", done), 900);
  assert.equal(
    total(families, "tsq_jobs_completion_seconds_count", {
      job_status: "fail",
      class: "FarRetryFailJob",
      queue: "default",
    }),
    100,
  );
  assert.equal(total(families, "tsq_jobs_completion_seconds_bucket", { le: "+Inf" }), 1000);
  assert.equal(total(families, "tsq_jobs_queue_duration_seconds_count"), 1000);
  assert.equal(total(families, "tsq_jobs_failed_total"), 100);
  assert.equal(total(families, "tsq_jobs_retried_total", { class: "FarRetryFailJob" }), 100);
  assert.equal(total(families, "tsq_jobs_dead_total"), 0);
  assert.equal(total(families, "tsq_running_jobs"), 0);
  // Every queue × class that has run keeps its running-jobs series while idle, at 0 rather than absent.
  const running = families.get("tsq_running_jobs")?.samples ?? [];
  for (const klass of ["CountJob", "FarRetryFailJob"]) {
    const series = running.filter((s) => s.labels.class === klass && s.labels.queue === "default");
    assert.ok(series.length > 0, `tsq_running_jobs has a series for ${klass}: ${JSON.stringify(running)}`);
    assert.ok(
      series.every((s) => s.value === 0),
      `${klass} idle`,
    );
  }
  for (const queue of ["default", "parked"]) {
    assert.equal(
      total(families, "tsq_queue_size", { queue }),
      await handle.redis.llen(`queue:${queue}`),
      `tsq_queue_size{queue="${queue}"}`,
    );
  }
  assert.equal(total(families, "tsq_queue_size", { queue: "parked" }), 37);
  assert.ok(total(families, "tsq_queue_latency_seconds", { queue: "parked" }) > 0);
  assert.equal(total(families, "tsq_retry_size"), 100);
  assert.equal(total(families, "tsq_dead_size"), 0);
  assert.equal(total(families, "tsq_scheduled_size"), 0);
  assert.equal(total(families, "tsq_processes"), 3);
  // The plug-ins' Redis gauges, read by the supervisor from the list its children run.
  for (const name of ["tsq_overrated", "tsq_durable_sleeping", "tsq_durable_waiting"])
    assert.ok(families.get(name), `${name} from its plug-in`);
  assert.equal(total(families, "tsq_cluster_children", { group: "default" }), 3);
  assert.equal(total(families, "tsq_concurrency"), 15);
  for (const child of ["0", "1", "2"]) {
    assert.ok(total(families, "tsq_child_resident_memory_bytes", { child }) > 10e6, `RSS of child ${child}`);
    assert.ok(total(families, "process_cpu_seconds_total", { child }) > 0, `process metrics of child ${child}`);
  }
  assert.ok(
    families.get("process_cpu_seconds_total")!.samples.some((s) => s.labels.child === undefined),
    "the supervisor's own process metrics",
  );

  // SIGKILL one child: no final snapshot, no goodbye. Its counts must stay in the sum.
  const before = monotonicSeries(families);
  const pids = await childPids();
  process.kill(pids[1]!, "SIGKILL");
  await eventually(
    async () => {
      const s = await scrape(cluster.port);
      const up =
        total(s.families, "tsq_cluster_children") === 3 &&
        total(s.families, "tsq_cluster_child_restarts_total", { reason: "crash" }) === 1;
      return up && (await request(cluster.port, "/readyz")).status === 200 && !(await childPids()).includes(pids[1]!);
    },
    30_000,
    "the killed child replaced",
  );
  const after = await scrape(cluster.port);
  assert.equal(total(after.families, "tsq_jobs_completion_seconds_count"), 1000);
  assert.equal(total(after.families, "tsq_jobs_retried_total"), 100);
  assertNoCounterWentBack(before, monotonicSeries(after.families));

  // The replacement's counts add to what the dead child counted.
  await pushJobs(
    handle.url,
    "CountJob",
    Array.from({ length: 60 }, (_, i) => [i]),
  );
  const later = await eventually(
    async () => {
      const s = await scrape(cluster.port);
      return total(s.families, "tsq_jobs_completion_seconds_count") === 1060 ? s : undefined;
    },
    20_000,
    "1060 completions",
  );
  assertNoCounterWentBack(monotonicSeries(after.families), monotonicSeries(later.families));
  console.log(`scrape after the replacement: ${later.ms.toFixed(1)} ms, ${allSeries(later.families).size} series`);
});

test("scrapes during load answer within 2 s and see ≤ 30 running; a child SIGKILLed mid-load takes no count back", async (t) => {
  const cluster = await startCluster(t, ["--processes", "3", "-c", "10", "-t", "5"]);
  await waitReady(cluster);
  await scrape(cluster.port); // warm-up
  await pushJobs(
    handle.url,
    "NapCountJob",
    Array.from({ length: 30_000 }, (_, i) => [i, 20]),
  );
  const timings: number[] = [];
  let previous: Map<string, ParsedSample> | undefined;
  let killed = false;
  let sawRunning = 0;
  while ((await handle.redis.llen("queue:default")) > 1000 && timings.length < 40) {
    const { families, ms } = await scrape(cluster.port);
    timings.push(ms);
    // A busy machine may land a scrape between two jobs of every slot: bounds, and at least one sighting.
    const running = total(families, "tsq_running_jobs");
    assert.ok(running >= 0 && running <= 30, `${running} running on 3 children x 10 slots`);
    if (running > 0) sawRunning++;
    withinDeadline(ms, 2000, "a scrape under load (Redis and child waits)");
    const current = monotonicSeries(families);
    if (previous) assertNoCounterWentBack(previous, current);
    previous = current;
    if (timings.length === 5) {
      process.kill((await childPids())[0]!, "SIGKILL");
      killed = true;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  console.log(`scrape during load (3 children x 10 slots busy, one SIGKILLed after 5 scrapes): ${stats(timings)}`);
  assert.ok(killed && timings.length >= 8, `only ${timings.length} scrapes happened during the load`);
  assert.ok(sawRunning >= 1, "no scrape saw a running job");
});

test("a hung child does not hang the scrape: its last snapshot is served within 2 s", async (t) => {
  const cluster = await startCluster(t, ["--processes", "2", "-c", "2", "-t", "5", "--hang-threshold", "60"]);
  await waitReady(cluster);
  await pushJobs(
    handle.url,
    "CountJob",
    Array.from({ length: 50 }, (_, i) => [i]),
  );
  await eventually(
    async () => total((await scrape(cluster.port)).families, "tsq_jobs_completion_seconds_count") === 50,
    20_000,
    "50 completions",
  );
  await pushJobs(handle.url, "CpuSpinJob", [[6]]);
  await eventually(async () => (await handle.redis.llen("spinning")) === 1, 10_000, "the spin job started");
  const timings: number[] = [];
  for (let i = 0; i < 4; i++) {
    const { families, ms } = await scrape(cluster.port);
    timings.push(ms);
    assert.equal(total(families, "tsq_jobs_completion_seconds_count"), 50, "the hung child's counts are still there");
    withinDeadline(ms, 2000, "a scrape with a hung child");
  }
  // The first scrape waits CHILD_WAIT_MS (1 s) for the blocked child; later ones do not wait for it again.
  assert.ok(Math.max(...timings.slice(1)) < 500, "scrapes after the first do not wait for a stalled child");
  console.log(`scrapes while a child's event loop is blocked: ${timings.map((m) => m.toFixed(0)).join(", ")} ms`);
  await eventually(
    async () => total((await scrape(cluster.port)).families, "tsq_jobs_completion_seconds_count") === 51,
    20_000,
    "the spin job counted once it ends",
  );
});

test("a rolling restart (USR2) replaces every child; counts stay, also once the old children are folded away", async (t) => {
  const cluster = await startCluster(t, ["--processes", "2", "-c", "5", "-t", "5"]);
  await waitReady(cluster);
  await pushJobs(
    handle.url,
    "CountJob",
    Array.from({ length: 100 }, (_, i) => [i]),
  );
  const before = await eventually(
    async () => {
      const s = await scrape(cluster.port);
      return total(s.families, "tsq_jobs_completion_seconds_count") === 100 ? s : undefined;
    },
    20_000,
    "100 completions",
  );
  const oldPids = await childPids();
  cluster.proc.signal("SIGUSR2");
  const rolled = await eventually(
    async () => {
      const s = await scrape(cluster.port);
      const pids = await childPids();
      const replaced = pids.length === 2 && pids.every((p) => !oldPids.includes(p));
      return replaced &&
        total(s.families, "tsq_cluster_child_restarts_total", { reason: "rolling" }) === 2 &&
        total(s.families, "tsq_cluster_children") === 2
        ? s
        : undefined;
    },
    60_000,
    "both children replaced by USR2",
  );
  assert.equal(total(rolled.families, "tsq_jobs_completion_seconds_count"), 100);
  assertNoCounterWentBack(monotonicSeries(before.families), monotonicSeries(rolled.families));
  // A dead child's snapshot is folded into the retired totals 10 s after its exit: nothing may change.
  await new Promise((r) => setTimeout(r, 11_000));
  const folded = await scrape(cluster.port);
  assert.equal(total(folded.families, "tsq_jobs_completion_seconds_count"), 100);
  assertNoCounterWentBack(monotonicSeries(rolled.families), monotonicSeries(folded.families));
});
