/**
 * Enterprise-style limiters inside jobs on a real 4-child tsq-cluster, recorded by the jobs themselves:
 * a `concurrent(…, 5)` limiter is never seen above 5, and a `window(…, 100, 1)` limiter admits at most
 * 100 in every sliding second over 20 s (checked at every admission, on the limiter's Redis clock).
 */
import { after, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "../../../../src/client/Client.js";
import { useRedis } from "../../../helpers/redis.js";
import { ROOT, eventually, startTsq, type TsqProcess } from "../../../helpers/tsqProcess.js";

const handle = useRedis();
const JOBS = join(ROOT, "dist/test/jobs/rateLimitJobs.js");
const CHILDREN = 4;
const THREADS = 5; // per child: 20 worker slots, 4x the concurrent limit
let cluster: TsqProcess | undefined;

/** The cluster both tests share, started by the first (after the private Redis is up). */
function startCluster(): TsqProcess {
  if (cluster) return cluster;
  assert.match(handle.url, /^redis:\/\/127\.0\.0\.1:\d+\/0$/, "the private Redis is up");
  const dir = mkdtempSync(join(tmpdir(), "tsq-ratelimit-"));
  const cfg = join(dir, "tsq.yml");
  // Rescheduled jobs come back within about a second (the poller's average interval, per process).
  writeFileSync(cfg, "poll_interval_average: 1\n");
  cluster = startTsq(
    [
      "-r",
      JOBS,
      "--processes",
      String(CHILDREN),
      "-c",
      String(THREADS),
      "-q",
      "default",
      "-t",
      "5",
      "-C",
      cfg,
      "--metrics-port",
      "0",
    ],
    { REDIS_URL: handle.url },
    "bin/tsq-cluster.js",
  );
  return cluster;
}
after(() => cluster?.stop(10_000));

/** `eventually`, with the cluster's last log lines when it times out. */
async function waitFor(check: () => Promise<boolean>, ms: number, message: string): Promise<void> {
  try {
    await eventually(check, ms, message, 250);
  } catch (error) {
    console.log(`cluster output (last 3000 characters):\n${cluster?.output().slice(-3000)}`);
    throw error;
  }
}

async function push(klass: string, args: unknown[][]): Promise<void> {
  const client = new Client({ redis: handle.url });
  try {
    await client.pushBulk({ class: klass, args });
  } finally {
    await client.close();
  }
}

test(
  "concurrent(five, 5) on 4x5 slots, 300 jobs of 100 ms: never above 5 inside, all ran",
  { timeout: 120_000 },
  async () => {
    const count = 300;
    const startedAt = Date.now();
    startCluster();
    await push(
      "FiveAtOnceJob",
      Array.from({ length: count }, (_, i) => [i, 100]),
    );
    await waitFor(async () => (await handle.redis.llen("ran:five")) === count, 100_000, `all ${count} ran`);
    const seconds = (Date.now() - startedAt) / 1000;
    const samples = (await handle.redis.lrange("samples:five", 0, -1)).map(Number);
    const ran = new Set(await handle.redis.lrange("ran:five", 0, -1));
    const overrated = Number((await handle.redis.get("tsq:stat:overrated")) ?? 0);
    console.log(
      `concurrent 5: ${count} jobs of 100 ms in ${seconds.toFixed(1)} s (ideal ${(count * 0.1) / 5} s), ` +
        `max inside ${Math.max(...samples)}, ${samples.length} runs, reschedules ${overrated}`,
    );
    assert.equal(Math.max(...samples), 5, "at most 5 inside the limiter at once, and the limit was reached");
    assert.equal(samples.length, count, "each job ran its limited section once");
    assert.equal(ran.size, count, "every job ran");
    assert.equal(await handle.redis.hlen("tsq:lock:rate:c:five"), 0, "every lease given back");
  },
);

test(
  "window(per-second, 100, 1): at most 100 admissions in every sliding second over 20+ s",
  { timeout: 120_000 },
  async () => {
    const count = 2_100;
    startCluster();
    await push(
      "WindowJob",
      Array.from({ length: count }, (_, i) => [i]),
    );
    await waitFor(async () => (await handle.redis.llen("admitted:window")) === count, 100_000, `all ${count} admitted`);
    const records = (await handle.redis.lrange("admitted:window", 0, -1)).map((line) => line.split(":").map(Number));
    const at = records.map(([redisMs]) => redisMs!).sort((a, b) => a - b);
    assert.equal(new Set(records.map((r) => r[1])).size, count, "each job admitted once");
    // Every sliding second [t, t + 1000 ms) starting at an admission: the busiest such window.
    let busiest = 0;
    for (let i = 0, j = 0; i < at.length; i++) {
      while (j < at.length && at[j]! < at[i]! + 1000) j++;
      busiest = Math.max(busiest, j - i);
    }
    const span = (at[at.length - 1]! - at[0]!) / 1000;
    const inFirst20 = at.filter((t) => t < at[0]! + 20_000).length;
    // The same check on the jobs' own clock (recorded after admission, so later by a variable delay).
    const wall = records.map((r) => r[2]!).sort((a, b) => a - b);
    let busiestWall = 0;
    for (let i = 0, j = 0; i < wall.length; i++) {
      while (j < wall.length && wall[j]! < wall[i]! + 1000) j++;
      busiestWall = Math.max(busiestWall, j - i);
    }
    const overrated = Number((await handle.redis.get("tsq:stat:overrated")) ?? 0);
    console.log(
      `window 100/s: ${count} admissions over ${span.toFixed(1)} s, busiest sliding second ${busiest} ` +
        `(${busiestWall} by the jobs' own clock, recorded after admission), ${inFirst20} in the first 20 s, reschedules ${overrated}`,
    );
    assert.ok(busiest <= 100, `no sliding second admits more than 100 (busiest ${busiest})`);
    assert.ok(busiest >= 90, `the limiter was the bottleneck (busiest second ${busiest})`);
    assert.ok(span >= 20, `the run spans at least 20 s (${span.toFixed(1)} s)`);
    assert.ok(inFirst20 >= 1_500, `close to 100/s for 20 s (${inFirst20} in the first 20 s)`);
  },
);
