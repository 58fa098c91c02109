// Client push throughput, tsq beside BullMQ in the same run, against a private redis-server.
//
//   npm run bench:push [-- --repeat 3] [-- --json]
//
// Modes: one push awaited at a time; 100 pushes in flight; bulk (1,000 per call); scheduled bulk.
// Rounds alternate the systems (tsq, BullMQ, tsq, ...) so drift on a shared machine hits both; the
// table gives each cell's median. Every round starts from an empty database and checks afterwards that
// every job it pushed is in Redis, so a fast but lossy push cannot look good.
import { performance } from "node:perf_hooks";
import { parseArgs } from "node:util";
import type { Queue } from "bullmq";
import { Client } from "../../src/index.js";
import { cleanupAll, IN_FLIGHT, inFlight, installCleanupHandlers, messageOf, startRedis, table } from "./lib.js";

const BULK_BATCH = 1_000;
const JOBS = { sequential: 10_000, concurrent: 50_000, bulk: 100_000, scheduled: 50_000 } as const;
type Mode = keyof typeof JOBS;
const MODES: { mode: Mode; label: string }[] = [
  { mode: "sequential", label: "one at a time" },
  { mode: "concurrent", label: `${IN_FLIGHT} in flight` },
  { mode: "bulk", label: `bulk (${BULK_BATCH.toLocaleString("en-US")} per call)` },
  { mode: "scheduled", label: "scheduled bulk (1 h ahead)" },
];

const jobArgs = (i: number) => ["bob", i, { account_id: 1000 + i, notify: true, tags: ["bench"] }];

interface Pusher {
  name: string;
  /** Pushes `n` jobs in `mode`. */
  push(mode: Mode, n: number): Promise<void>;
  /** Jobs of `mode` now in Redis. */
  count(mode: Mode): Promise<number>;
  flush(): Promise<void>;
  close(): Promise<void>;
}

function tsqPusher(url: string): Pusher {
  const client = new Client({ redis: url });
  return {
    name: "tsq",
    async push(mode, n) {
      const at = Date.now() / 1000 + 3600;
      if (mode === "sequential") for (let i = 0; i < n; i++) await client.push({ class: "BenchJob", args: jobArgs(i) });
      else if (mode === "concurrent") await inFlight(n, (i) => client.push({ class: "BenchJob", args: jobArgs(i) }));
      else {
        const args = Array.from({ length: n }, (_, i) => jobArgs(i));
        await client.pushBulk({
          class: "BenchJob",
          args,
          batchSize: BULK_BATCH,
          ...(mode === "scheduled" ? { at } : {}),
        });
      }
    },
    count: (mode) => (mode === "scheduled" ? client.redis.zcard("schedule") : client.redis.llen("queue:default")),
    flush: async () => void (await client.redis.flushdb()),
    close: () => client.close(),
  };
}

async function bullmqPusher(url: string): Promise<Pusher> {
  const { Queue: BullQueue } = await import("bullmq");
  const { Redis } = await import("ioredis");
  const connection = new Redis(url, { maxRetriesPerRequest: null });
  connection.on("error", () => {});
  const queue: Queue = new BullQueue("bench", { connection });
  queue.on("error", () => {});
  await queue.waitUntilReady();
  return {
    name: "BullMQ",
    async push(mode, n) {
      const opts = mode === "scheduled" ? { delay: 3_600_000 } : {};
      if (mode === "sequential") for (let i = 0; i < n; i++) await queue.add("BenchJob", { args: jobArgs(i) });
      else if (mode === "concurrent") await inFlight(n, (i) => queue.add("BenchJob", { args: jobArgs(i) }));
      else {
        for (let start = 0; start < n; start += BULK_BATCH) {
          const size = Math.min(BULK_BATCH, n - start);
          await queue.addBulk(
            Array.from({ length: size }, (_, k) => ({ name: "BenchJob", data: { args: jobArgs(start + k) }, opts })),
          );
        }
      }
    },
    async count(mode) {
      const counts = await queue.getJobCounts("wait", "delayed");
      return mode === "scheduled" ? (counts.delayed ?? 0) : (counts.wait ?? 0);
    },
    flush: async () => void (await connection.flushdb()),
    close: async () => {
      await queue.close();
      connection.disconnect();
    },
  };
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

const USAGE = `Usage: npm run bench:push -- [options]

  --repeat <n>   alternating rounds per mode; the table gives medians (default 3)
  --json         print the rounds and the medians as JSON
  -h, --help`;

/** The options, or an exit with the usage: a typo is said plainly, not as a stack trace. */
function parseOptions(): { repeat: number; json: boolean } {
  let values: { repeat: string; json: boolean; help: boolean };
  try {
    ({ values } = parseArgs({
      options: {
        repeat: { type: "string", default: "3" },
        json: { type: "boolean", default: false },
        help: { type: "boolean", short: "h", default: false },
      },
    }));
  } catch (error) {
    process.stderr.write(`bench:push: ${messageOf(error)}\n\n${USAGE}\n`);
    process.exit(2);
  }
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    process.exit(0);
  }
  const repeat = Number(values.repeat);
  if (!Number.isInteger(repeat) || repeat < 1) {
    process.stderr.write(`bench:push: --repeat must be a whole number >= 1, got ${values.repeat}\n\n${USAGE}\n`);
    process.exit(2);
  }
  return { repeat, json: values.json };
}

async function main(): Promise<void> {
  const values = parseOptions();
  const { repeat } = values;
  installCleanupHandlers();
  const server = await startRedis();
  const pushers: Pusher[] = [tsqPusher(server.url)];
  try {
    pushers.push(await bullmqPusher(server.url));
  } catch (error) {
    process.stderr.write(`bench:push: BullMQ not measured (${messageOf(error)}); install devDependencies\n`);
  }
  try {
    // Warm-up: JIT and connections, for both, before anything is timed.
    for (const pusher of pushers) {
      await pusher.push("concurrent", 2_000);
      await pusher.push("bulk", 2_000);
      await pusher.flush();
    }
    const rates = new Map<string, number[]>(); // `${mode}/${name}` -> jobs/s per round
    for (let round = 0; round < repeat; round++) {
      for (const { mode } of MODES) {
        const order = round % 2 === 0 ? pushers : [...pushers].reverse();
        for (const pusher of order) {
          await pusher.flush();
          const started = performance.now();
          await pusher.push(mode, JOBS[mode]);
          const seconds = (performance.now() - started) / 1000;
          const found = await pusher.count(mode);
          if (found !== JOBS[mode]) throw new Error(`${pusher.name} ${mode}: pushed ${JOBS[mode]}, found ${found}`);
          const key = `${mode}/${pusher.name}`;
          rates.set(key, [...(rates.get(key) ?? []), JOBS[mode] / seconds]);
        }
      }
    }
    const result = MODES.map(({ mode, label }) => {
      const tsq = median(rates.get(`${mode}/tsq`) ?? []);
      const bull = rates.has(`${mode}/BullMQ`) ? median(rates.get(`${mode}/BullMQ`)!) : undefined;
      return { mode, label, jobs: JOBS[mode], tsq, bullmq: bull, ratio: bull ? tsq / bull : undefined };
    });
    if (values.json) {
      process.stdout.write(`${JSON.stringify({ repeat, rounds: Object.fromEntries(rates), result }, null, 2)}\n`);
      return;
    }
    console.log(`Client push, jobs/s (median of ${repeat} alternating rounds), Node ${process.version}, private Redis`);
    console.log(
      table(
        ["mode", "jobs", "tsq", "BullMQ", "tsq / BullMQ"],
        result.map((r) => [
          r.label,
          r.jobs.toLocaleString("en-US"),
          Math.round(r.tsq).toLocaleString("en-US"),
          r.bullmq === undefined ? "n/a" : Math.round(r.bullmq).toLocaleString("en-US"),
          r.ratio === undefined ? "n/a" : `${r.ratio.toFixed(2)}×`,
        ]),
      ),
    );
  } finally {
    for (const pusher of pushers) await pusher.close().catch(() => undefined);
    await cleanupAll();
  }
}

main().catch(async (error: unknown) => {
  process.stderr.write(
    `bench:push failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
  );
  await cleanupAll();
  process.exit(1);
});
