"use strict";
// Starts a worker from code, runs one job and stops.
const { Job, Worker } = require("tsq");

class Hello extends Job {
  perform(name) {
    console.log("hello " + name);
  }
}

async function main() {
  const worker = new Worker({ redis: process.env.REDIS_URL, jobs: [Hello], queues: ["default"] });
  const ended = new Promise((resolve) => worker.on("job:end", (e) => resolve(e.status)));
  await worker.start();
  const jid = await Hello.performAsync("cjs");
  const status = await ended;
  await worker.stop({ timeout: 1 });
  console.log("RAN " + jid + " " + status);
  process.exit(0);
}
main().catch((error) => {
  console.error(error);
  process.exit(1);
});
