// Starts a worker from code, runs one job and stops.
import { Job, Worker } from "tsq";

class Hello extends Job {
  perform(name: string) {
    console.log("hello " + name);
  }
}

const worker = new Worker({ redis: process.env.REDIS_URL, jobs: [Hello], queues: ["default"], concurrency: 2 });
const ended = new Promise<string>((resolve) => worker.on("job:end", (e) => resolve(e.status)));
await worker.start();
const jid = await Hello.performAsync("esm");
const status = await ended;
await worker.stop({ timeout: 1 });
console.log("RAN " + jid + " " + status);
process.exit(0);
