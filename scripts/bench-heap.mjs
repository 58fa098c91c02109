// `npm run bench:heap`: the leak check behind the RSS figures of `npm run bench`. One in-process worker
// (Launcher with job metrics, as a tsq-cluster child runs, concurrency 50) drains 1,000,000 no-op jobs
// in rounds of 100,000 on a private redis-server. After each round it forces two full garbage collections and prints the live heap and
// RSS: a leak is live heap that grows with the number of jobs, which RSS alone (a saw-tooth of
// collections and of pages V8 keeps) shows only late and noisily.
import { join, dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { pino } from "pino";

if (typeof globalThis.gc !== "function") {
  console.error("bench-heap: run with node --expose-gc (npm run bench:heap does)");
  process.exit(2);
}
const ROUND = 100_000;
const ROUNDS = Number(process.argv[2] ?? 10);
const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const { Launcher } = await import(join(root, "dist/src/server/Launcher.js"));
const { Registry } = await import(join(root, "dist/src/server/Registry.js"));
const { JobMetrics } = await import(join(root, "dist/src/metrics/JobMetrics.js"));
const { Client } = await import(join(root, "dist/src/index.js"));
const { cleanupAll, inProcessWorkerOptions, installCleanupHandlers, startRedis } = await import(
  join(root, "dist/scripts/bench/lib.js")
);

installCleanupHandlers(); // Ctrl-C stops the private redis-server too
const { url } = await startRedis();
const mb = (bytes) => (bytes / 1048576).toFixed(1);
let launcher, metrics, client;
try {
  const options = inProcessWorkerOptions(url, 50);
  const registry = new Registry();
  registry.register(
    class NoopJob {
      perform() {}
    },
  );
  launcher = new Launcher(options, registry, { logger: pino({ level: "silent" }) });
  metrics = new JobMetrics(launcher.ctx);
  await launcher.start();
  client = new Client({ redis: url });
  const redis = launcher.ctx.redis;
  const rows = [];
  for (let round = 1; round <= ROUNDS; round++) {
    for (let i = 0; i < ROUND; i += 50_000)
      await client.pushBulk({ class: "NoopJob", args: Array.from({ length: 50_000 }, () => []) });
    while ((await redis.llen("queue:default")) > 0 || launcher.ctx.state.busy > 0)
      await new Promise((r) => setTimeout(r, 20));
    globalThis.gc();
    globalThis.gc();
    const { heapUsed, rss } = process.memoryUsage();
    rows.push({ jobs: round * ROUND, heapUsed, rss });
    console.log(
      `${(round * ROUND).toLocaleString("en-US").padStart(9)} jobs: live heap ${mb(heapUsed)} MB, RSS ${mb(rss)} MB`,
    );
  }
  const first = rows[0],
    last = rows.at(-1);
  const pct = (a, b) => `${b >= a ? "+" : ""}${(((b - a) / a) * 100).toFixed(1)}%`;
  console.log(
    `after ${last.jobs.toLocaleString("en-US")} vs after ${first.jobs.toLocaleString("en-US")} jobs: live heap ${pct(first.heapUsed, last.heapUsed)} (${((last.heapUsed - first.heapUsed) / (last.jobs - first.jobs)).toFixed(2)} bytes/job), RSS ${pct(first.rss, last.rss)}`,
  );
} finally {
  await launcher?.stop();
  metrics?.stop();
  await client?.close();
  await cleanupAll();
}
