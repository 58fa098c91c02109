// Client push throughput against a private redis-server (never the one on 6379).
//
//   npm run bench:push
//
// Uses the compiled client (dist/src/index.js). Each scenario starts from an empty database and checks
// afterwards that every job it pushed is in Redis, so a fast but lossy push cannot look good.
import { performance } from "node:perf_hooks";
import { Client } from "../dist/src/index.js";
import { cleanupAll, installCleanupHandlers, startRedis } from "../dist/scripts/bench/lib.js";

const SEQUENTIAL_JOBS = 20_000;
const CONCURRENT_JOBS = 50_000;
const IN_FLIGHT = 100;
const BULK_JOBS = 100_000;
const BULK_BATCH = 1_000;
const SCHEDULED_BULK_JOBS = 100_000;
const WARMUP_JOBS = 2_000;

const jobArgs = (i) => ["bob", i, { account_id: 1000 + i, notify: true, tags: ["bench"] }];

/** Runs `work`, returns seconds elapsed (monotonic clock). */
async function timed(work) {
  const start = performance.now();
  await work();
  return (performance.now() - start) / 1000;
}

async function expectCount(actual, expected, label) {
  const n = await actual;
  if (n !== expected) throw new Error(`${label}: expected ${expected} jobs in Redis, found ${n}`);
}

const scenarios = [
  {
    name: "push, awaited one at a time",
    jobs: SEQUENTIAL_JOBS,
    async run(client) {
      for (let i = 0; i < SEQUENTIAL_JOBS; i++) await client.push({ class: "BenchJob", args: jobArgs(i) });
    },
    count: (client) => client.redis.llen("queue:default"),
  },
  {
    name: `push, ${IN_FLIGHT} in flight`,
    jobs: CONCURRENT_JOBS,
    async run(client) {
      let next = 0;
      const lane = async () => {
        while (next < CONCURRENT_JOBS) await client.push({ class: "BenchJob", args: jobArgs(next++) });
      };
      await Promise.all(Array.from({ length: IN_FLIGHT }, lane));
    },
    count: (client) => client.redis.llen("queue:default"),
  },
  {
    name: `pushBulk (batch ${BULK_BATCH.toLocaleString("en-US")})`,
    jobs: BULK_JOBS,
    async run(client) {
      const args = Array.from({ length: BULK_JOBS }, (_, i) => jobArgs(i));
      await client.pushBulk({ class: "BenchJob", args, batchSize: BULK_BATCH });
    },
    count: (client) => client.redis.llen("queue:default"),
  },
  {
    name: "pushBulk scheduled (batch 100)",
    jobs: SCHEDULED_BULK_JOBS,
    async run(client) {
      const now = Date.now() / 1000;
      const args = Array.from({ length: SCHEDULED_BULK_JOBS }, (_, i) => jobArgs(i));
      const at = args.map((_, i) => now + 3600 + (i % 600));
      // Sidekiq's default slice when `at` is set: 100 jobs per ZADD round trip.
      await client.pushBulk({ class: "BenchJob", args, at });
    },
    count: (client) => client.redis.zcard("schedule"),
  },
];

function table(rows) {
  const header = ["scenario", "jobs", "seconds", "jobs/s"];
  const cells = rows.map((r) => [
    r.name,
    r.jobs.toLocaleString("en-US"),
    r.seconds.toFixed(2),
    Math.round(r.jobs / r.seconds).toLocaleString("en-US"),
  ]);
  const widths = header.map((h, c) => Math.max(h.length, ...cells.map((row) => row[c].length)));
  const line = (row) => row.map((cell, c) => (c === 0 ? cell.padEnd(widths[c]) : cell.padStart(widths[c]))).join("   ");
  return [line(header), widths.map((w) => "-".repeat(w)).join("   "), ...cells.map(line)].join("\n");
}

async function main() {
  let client;
  installCleanupHandlers(); // Ctrl-C stops the private redis-server too
  try {
    let server;
    server = await startRedis();
    client = new Client({ redis: server.url });
    const info = await client.redis.info("server");
    const redisVersion = /redis_version:(\S+)/.exec(info)?.[1] ?? "unknown";

    for (let i = 0; i < WARMUP_JOBS; i++) await client.push({ class: "BenchJob", args: jobArgs(i) });
    await client.pushBulk({ class: "BenchJob", args: Array.from({ length: WARMUP_JOBS }, (_, i) => jobArgs(i)) });
    const payloadBytes = Buffer.byteLength((await client.redis.lindex("queue:default", 0)) ?? "");

    console.log(`tsq client push throughput · Node ${process.version} · Redis ${redisVersion} (private, port ${server.port})`);
    console.log(`${payloadBytes} bytes per job as stored; each scenario starts from an empty database\n`);

    const rows = [];
    for (const scenario of scenarios) {
      await client.redis.flushdb();
      const seconds = await timed(() => scenario.run(client));
      await expectCount(scenario.count(client), scenario.jobs, scenario.name);
      rows.push({ name: scenario.name, jobs: scenario.jobs, seconds });
    }
    await client.redis.flushdb();
    console.log(table(rows));
  } finally {
    await client?.close();
    await cleanupAll();
  }
}

main().catch((error) => {
  console.error(`bench-push failed: ${error.stack ?? error}`);
  process.exitCode = 1;
});
