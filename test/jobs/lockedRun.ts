/**
 * The run the lock-test jobs share (deduplication, unique jobs): counts and records the start in Redis
 * (`runs:<jid>`, `started`), sleeps `seconds` (only on the first run with `firstRunOnly`, stopping on
 * abort), then records the end (`ran`), so tests observe the job from outside.
 */
import { defaultClient, type Job } from "../../src/index.js";

/** The worker's own connection. */
export function redis() {
  return defaultClient().redis;
}

export async function run(job: Job, seconds: number, firstRunOnly = false): Promise<void> {
  const runs = await redis().incr(`runs:${job.jid}`);
  const klass = job.constructor.name;
  await redis().rpush("started", JSON.stringify({ jid: job.jid, class: klass, pid: process.pid, runs }));
  if (seconds > 0 && (!firstRunOnly || runs === 1)) {
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, seconds * 1000);
      job.signal.addEventListener("abort", () => {
        clearTimeout(timer);
        resolve();
      });
    });
  }
  await redis().rpush("ran", job.jid);
}
