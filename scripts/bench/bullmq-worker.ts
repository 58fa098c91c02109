// One BullMQ worker process for `npm run bench -- --peer bullmq`, forked by the bench (one per --processes).
//   node dist/scripts/bench/bullmq-worker.js <redis-url> <queue> <concurrency>   (compiled from scripts/bench/bullmq-worker.ts)
// The processor does nothing for "noop" jobs; a "latency" job reports process.hrtime.bigint() minus the
// push time it carries (the same monotonic clock in every process) to the list bench:latency.
// IPC: sends {type:"ready"} once connected, and {type:"done", completed, failed} after SIGTERM closed it.
import { Worker } from "bullmq";
import { Redis } from "ioredis";
import type { BullmqWorkerMessage } from "./systems.js";

const [url, queueName, concurrencyText] = process.argv.slice(2);
if (url === undefined || queueName === undefined || concurrencyText === undefined) {
  // Without a URL ioredis would connect to 127.0.0.1:6379, which is not the bench's to touch.
  console.error("usage: node bullmq-worker.js <redis-url> <queue> <concurrency>");
  process.exit(2);
}
const concurrency = Number(concurrencyText);
const connection = new Redis(url, { maxRetriesPerRequest: null });
const reporter = new Redis(url);
let completed = 0;
let failed = 0;

// The job data comes from Redis: unknown until checked.
const worker = new Worker<unknown, void>(
  queueName,
  async (job) => {
    if (job.name === "latency") {
      const { data } = job;
      const pushedAt = typeof data === "object" && data !== null && "t" in data ? data.t : undefined;
      if (typeof pushedAt !== "string") throw new TypeError(`latency job ${job.id} carries no push time (data.t)`);
      const nanoseconds = process.hrtime.bigint() - BigInt(pushedAt);
      await reporter.rpush("bench:latency", nanoseconds.toString());
    }
  },
  { connection, concurrency },
);
worker.on("completed", () => completed++);
worker.on("failed", (job, error) => {
  failed++;
  console.error(`bullmq job ${job?.id} failed: ${error?.message}`);
});
worker.on("error", (error) => console.error(`bullmq worker error: ${error?.message ?? String(error)}`));

let closing = false;
async function close(): Promise<void> {
  if (closing) return;
  closing = true;
  await worker.close();
  await reporter.quit().catch(() => {});
  await connection.quit().catch(() => {});
  const done: BullmqWorkerMessage = { type: "done", completed, failed };
  if (process.connected && process.send) process.send(done, () => process.exit(0));
  else process.exit(0);
}
process.on("SIGTERM", close);
process.on("SIGINT", close);
// The bench is gone (even killed with SIGKILL): do not outlive it.
process.on("disconnect", () => void close().finally(() => process.exit(0)));

await worker.waitUntilReady();
const ready: BullmqWorkerMessage = { type: "ready", pid: process.pid };
process.send?.(ready);
