// Throughput with one Redis vs two shards, same processes, same jobs, same run.
//
//   npm run bench:shards [-- --jobs 2000] [-- --sleep-ms 1] [-- --repeat 3]
//
// Two queues, a and b, each worked by one tsq-cluster child (concurrency 20). "1 shard": both queues on
// one redis-server. "2 shards": b moved to a second redis-server (config shards:), so each child has a
// Redis of its own. Jobs are pushed once both children are up; the clock runs from the first push to the
// last job counted. Rounds alternate the two layouts; each figure is the median.
//
// Redis-bound: each job costs its Redis `--sleep-ms` of server time (DEBUG SLEEP blocks the server
// without using a core: this machine has two cores, and two busy redis-servers would leave the workers
// none, so CPU-heavy Redis work could not show what a second server buys on a real fleet). Worker-bound:
// jobs that only INCR, where the workers' CPU is the limit and a second Redis changes little.
import { writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { performance } from "node:perf_hooks";
import { Redis } from "ioredis";
import { Client } from "../../src/library/Client.js"; // every built-in feature, as an app's
import { ShardMap } from "../../src/platform/shards/ShardMap.js";
import {
  cleanupAll,
  installCleanupHandlers,
  makeTempDir,
  medianOf,
  messageOf,
  sleep,
  spawnTracked,
  startRedis,
  stopTracked,
  table,
  type PrivateRedis,
} from "./lib.js";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "../../..");
const { values } = parseArgs({
  options: {
    jobs: { type: "string", default: "2000" },
    "sleep-ms": { type: "string", default: "1" },
    repeat: { type: "string", default: "3" },
  },
});
const JOBS = Number(values.jobs); // per queue
const SLEEP_MS = Number(values["sleep-ms"]);
const REPEAT = Number(values.repeat);
const CONCURRENCY = 20;

type Layout = "1 shard" | "2 shards";
type Load = "redis-bound" | "worker-bound";

async function round(one: PrivateRedis, two: PrivateRedis, layout: Layout, load: Load): Promise<number> {
  const servers = [new Redis(one.url), new Redis(two.url)];
  try {
    for (const server of servers) await server.flushdb();
    const dir = makeTempDir("tsq-bench-shards-");
    const shards = layout === "2 shards" ? `shards:\n  two: { url: "${two.url}", queues: [b] }\n` : "";
    writeFileSync(join(dir, "tsq.yml"), `redis_url: ${one.url}\nheartbeat_interval: 1\n${shards}`);
    const cluster = spawnTracked(
      "tsq-cluster",
      process.execPath,
      [
        join(ROOT, "bin/tsq-cluster.js"),
        "-r",
        join(ROOT, "dist/scripts/bench/shardJobs.js"),
        "-C",
        join(dir, "tsq.yml"),
        "-c",
        String(CONCURRENCY),
        "a",
        "b",
      ],
      { env: { ...process.env, REDIS_URL: one.url } },
    );
    try {
      const used = layout === "2 shards" ? servers : [servers[0]!];
      const started = performance.now();
      while (true) {
        const counts = await Promise.all(used.map((server) => server.scard("processes")));
        if (counts.reduce((a, b) => a + b, 0) === 2) break;
        if (performance.now() - started > 30_000)
          throw new Error(`the cluster did not start: ${cluster.output().tail.join("\n")}`);
        await sleep(50);
      }
      const map = new ShardMap(one.url, layout === "2 shards" ? [{ name: "two", url: two.url, queues: ["b"] }] : []);
      const client = new Client({ redis: one.url, shards: { map } });
      const klass = load === "redis-bound" ? "RedisBoundJob" : "CountOnlyJob";
      // Worker-bound jobs are ~100× cheaper: ten times as many keep the round long enough to measure.
      const count = load === "redis-bound" ? JOBS : 10 * JOBS;
      const args = Array.from({ length: count }, () => (load === "redis-bound" ? [SLEEP_MS] : []));
      const t0 = performance.now();
      await Promise.all([
        client.pushBulk({ class: klass, args, queue: "a" }),
        client.pushBulk({ class: klass, args, queue: "b" }),
      ]);
      await client.close();
      for (;;) {
        const done = await Promise.all(used.map(async (server) => Number(await server.get("bench:done"))));
        if (done.reduce((a, b) => a + b, 0) >= 2 * count) break;
        await sleep(10);
      }
      return (2 * count) / ((performance.now() - t0) / 1000);
    } finally {
      await stopTracked(cluster, { graceMs: 15_000 });
    }
  } finally {
    for (const server of servers) server.disconnect();
  }
}

async function main(): Promise<void> {
  installCleanupHandlers();
  const one = await startRedis(["--enable-debug-command", "local"]);
  const two = await startRedis(["--enable-debug-command", "local"]);
  const results = new Map<string, number[]>();
  for (let r = 0; r < REPEAT; r++) {
    for (const load of ["redis-bound", "worker-bound"] as const) {
      for (const layout of (r % 2 === 0 ? ["1 shard", "2 shards"] : ["2 shards", "1 shard"]) as Layout[]) {
        const rate = await round(one, two, layout, load);
        const key = `${load}|${layout}`;
        results.set(key, [...(results.get(key) ?? []), rate]);
        process.stderr.write(`round ${r + 1}: ${load}, ${layout}: ${Math.round(rate)} jobs/s\n`);
      }
    }
  }
  const rows = (["redis-bound", "worker-bound"] as const).map((load) => {
    const single = medianOf(results.get(`${load}|1 shard`)!);
    const double = medianOf(results.get(`${load}|2 shards`)!);
    const what = load === "redis-bound" ? `${load} (${SLEEP_MS} ms of Redis per job)` : `${load} (INCR only)`;
    return [what, Math.round(single), Math.round(double), `${(double / single).toFixed(2)}×`];
  });
  process.stdout.write(
    `${2 * JOBS} Redis-bound and ${20 * JOBS} worker-bound jobs per round over queues a and b, 2 children × concurrency ${CONCURRENCY}, median of ${REPEAT}\n` +
      `${table(["workload", "1 shard jobs/s", "2 shards jobs/s", "2 shards / 1"], rows)}\n`,
  );
}

main()
  .catch((error: unknown) => {
    process.stderr.write(`bench:shards failed: ${messageOf(error)}\n`);
    process.exitCode = 1;
  })
  .finally(() => cleanupAll());
