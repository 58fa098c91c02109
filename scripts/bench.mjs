// `npm run bench`: worker throughput. Starts a private redis-server, enqueues N no-op jobs with the
// bulk client, then times a real `tsq` process draining them (first job fetched -> queue empty).
// Usage: npm run bench [-- --jobs 50000 --concurrency 10 --fetch basic]
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join, dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const { values } = parseArgs({
  options: {
    jobs: { type: "string", default: "50000" },
    concurrency: { type: "string", default: "10" },
    fetch: { type: "string", default: "basic" },
  },
});
const jobs = Number(values.jobs);
const tsq = await import(join(root, "dist/src/index.js"));

const port = await new Promise((resolve) => {
  const s = createServer().listen(0, "127.0.0.1", () => {
    const { port } = s.address();
    s.close(() => resolve(port));
  });
});
const dir = mkdtempSync(join(tmpdir(), "tsq-bench-"));
const server = spawn("redis-server", ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--dir", dir], { stdio: "ignore" });
const url = `redis://127.0.0.1:${port}/0`;
let worker;
try {
  for (let i = 0; i < 100; i++) {
    if (spawnSync("redis-cli", ["-p", String(port), "ping"]).stdout?.toString().trim() === "PONG") break;
    await new Promise((r) => setTimeout(r, 50));
  }
  const client = new tsq.Client({ redis: url });
  const pushStart = performance.now();
  await client.pushBulk({ class: "NoopJob", args: Array.from({ length: jobs }, () => []) });
  const pushSeconds = (performance.now() - pushStart) / 1000;

  worker = spawn(process.execPath, [join(root, "bin/tsq.js"), "-r", join(root, "dist/examples/demoJobs.js"), "-c", values.concurrency, "--fetch", values.fetch, "-t", "5"], {
    env: { ...process.env, REDIS_URL: url, TSQ_LOG_LEVEL: "warn" },
    stdio: ["ignore", "ignore", "inherit"],
  });
  // Timing starts when the worker takes its first job, so process boot is not counted.
  while ((await client.redis.llen("queue:default")) === jobs) await new Promise((r) => setTimeout(r, 2));
  const start = performance.now();
  while ((await client.redis.llen("queue:default")) > 0) await new Promise((r) => setTimeout(r, 5));
  const drainSeconds = (performance.now() - start) / 1000;
  await client.close();
  const redisVersion = spawnSync("redis-server", ["--version"]).stdout.toString().split(" ")[2];
  console.log(`tsq ${tsq.VERSION} | node ${process.version} | redis ${redisVersion} | ${jobs} no-op jobs, concurrency ${values.concurrency}, fetch ${values.fetch}`);
  console.log(`  enqueue (pushBulk)  ${(jobs / pushSeconds).toFixed(0).padStart(8)} jobs/s  (${pushSeconds.toFixed(2)} s)`);
  console.log(`  drain (one worker)  ${(jobs / drainSeconds).toFixed(0).padStart(8)} jobs/s  (${drainSeconds.toFixed(2)} s)`);
} finally {
  worker?.kill("SIGTERM");
  if (worker) await new Promise((r) => worker.on("exit", r));
  server.kill();
  rmSync(dir, { recursive: true, force: true });
}
