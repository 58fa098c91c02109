// One BullMQ worker process for `npm run bench -- --peer bullmq`, forked by the bench (one per --processes).
//   node bullmq-worker.mjs <redis-url> <queue> <concurrency>
// The processor does nothing for "noop" jobs; a "latency" job reports process.hrtime.bigint() minus the
// push time it carries (the same monotonic clock in every process) to the list bench:latency.
// IPC: sends {type:"ready"} once connected, and {type:"done", completed, failed} after SIGTERM closed it.
import { Worker } from "bullmq";
import { Redis } from "ioredis";

const [url, queueName, concurrencyText] = process.argv.slice(2);
const concurrency = Number(concurrencyText);
const connection = new Redis(url, { maxRetriesPerRequest: null });
const reporter = new Redis(url);
let completed = 0;
let failed = 0;

const worker = new Worker(
  queueName,
  async (job) => {
    if (job.name === "latency") {
      const nanoseconds = process.hrtime.bigint() - BigInt(job.data.t);
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
worker.on("error", (error) => console.error(`bullmq worker error: ${error?.message ?? error}`));

let closing = false;
async function close() {
  if (closing) return;
  closing = true;
  await worker.close();
  await reporter.quit().catch(() => {});
  await connection.quit().catch(() => {});
  if (process.connected) process.send({ type: "done", completed, failed }, () => process.exit(0));
  else process.exit(0);
}
process.on("SIGTERM", close);
process.on("SIGINT", close);
// The bench is gone (even killed with SIGKILL): do not outlive it.
process.on("disconnect", () => void close().finally(() => process.exit(0)));

await worker.waitUntilReady();
process.send?.({ type: "ready", pid: process.pid });
