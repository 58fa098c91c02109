/** JobMetrics: a worker's job metrics, fed by a real in-process Launcher against the private Redis. */
import { test } from "node:test";
import assert from "node:assert/strict";
import { useRedis } from "../helpers/redis.js";
import { testLauncher } from "../helpers/context.js";
import { JobMetrics } from "../../src/metrics/JobMetrics.js";
import { renderFamilies } from "../../src/metrics/exposition.js";
import { newJid } from "../../src/wire/payload.js";
import { parseExposition, total } from "./promText.js";

const handle = useRedis();

async function until(check: () => Promise<boolean> | boolean, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error("timed out");
    await new Promise((r) => setTimeout(r, 20));
  }
}

async function scrape(metrics: JobMetrics) {
  return parseExposition(renderFamilies(await metrics.snapshot()));
}

/** LPUSHes a raw payload, as Ruby Sidekiq (or ActiveJob) would have written it. */
async function pushRaw(fields: Record<string, unknown>): Promise<void> {
  const job = { retry: true, queue: "default", args: [], jid: newJid(), created_at: Date.now() / 1000, ...fields };
  await handle.redis.sadd("queues", job.queue);
  await handle.redis.lpush(`queue:${job.queue}`, JSON.stringify(job));
}

class OkJob {
  perform(): void {}
}
class LaterJob {
  static retryIn(): number {
    return 3600;
  }
  perform(): void {
    throw new Error("later");
  }
}
class Wrapper {
  static jobName = "ActiveJob::QueueAdapters::SidekiqAdapter::JobWrapper";
  perform(): void {}
}

test("done, retried, dead and dropped jobs are counted by queue and class; ActiveJob by its wrapped class", async () => {
  const launcher = testLauncher(handle.url, [OkJob, LaterJob, Wrapper], {
    queues: [
      { name: "default", weight: 0 },
      { name: "mail", weight: 0 },
    ],
  });
  const metrics = new JobMetrics(launcher.ctx);
  const now = Date.now();
  await pushRaw({ class: "OkJob", enqueued_at: now / 1000 - 3.25 }); // Sidekiq 7: float seconds
  await pushRaw({ class: "OkJob", enqueued_at: now - 5000 }); // Sidekiq 8: integer milliseconds
  await pushRaw({ class: "LaterJob", enqueued_at: now / 1000 });
  await pushRaw({ class: "LaterJob", enqueued_at: now / 1000, retry: 0 }); // straight to dead
  await pushRaw({ class: "LaterJob", enqueued_at: now / 1000, retry: false }); // dropped
  await pushRaw({
    class: "ActiveJob::QueueAdapters::SidekiqAdapter::JobWrapper",
    wrapped: "SendMail",
    queue: "mail",
    enqueued_at: now / 1000,
  });
  await launcher.start();
  await until(
    async () =>
      (await handle.redis.zcard("retry")) === 1 &&
      (await handle.redis.zcard("dead")) === 1 &&
      total(await scrape(metrics), "tsq_jobs_completion_seconds_count") === 6,
  );
  const families = await scrape(metrics);
  await launcher.stop();
  metrics.stop();

  const ok = { queue: "default", class: "OkJob" };
  const later = { queue: "default", class: "LaterJob" };
  assert.equal(total(families, "tsq_jobs_completion_seconds_count", { ...ok, job_status: "done" }), 2);
  assert.equal(total(families, "tsq_jobs_completion_seconds_count", { ...later, job_status: "fail" }), 3);
  assert.equal(
    total(families, "tsq_jobs_completion_seconds_count", { queue: "mail", class: "SendMail", job_status: "done" }),
    1,
  );
  assert.equal(total(families, "tsq_jobs_failed_total", later), 3);
  assert.equal(total(families, "tsq_jobs_retried_total", later), 1);
  assert.equal(total(families, "tsq_jobs_dead_total", later), 1, "retry: false drops the job: failed, not dead");
  // Queue waits: both timestamp formats read as seconds (3.25 s and 5 s).
  const waited = total(families, "tsq_jobs_queue_duration_seconds_sum", ok);
  assert.ok(waited >= 8.25 && waited < 10, `OkJob waited ${waited} s in all`);
  assert.equal(total(families, "tsq_jobs_queue_duration_seconds_bucket", { ...ok, le: "2.5" }), 0);
  assert.equal(total(families, "tsq_jobs_queue_duration_seconds_bucket", { ...ok, le: "10" }), 2);
  assert.ok(families.get("process_cpu_seconds_total"), "default process metrics are in the same registry");
});

test("tsq_running_jobs counts a job while it runs, then shows 0", async () => {
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  let started = false;
  class BlockJob {
    async perform(): Promise<void> {
      started = true;
      await released;
    }
  }
  const launcher = testLauncher(handle.url, [BlockJob]);
  const metrics = new JobMetrics(launcher.ctx, { processLabels: { child: "7" } });
  await pushRaw({ class: "BlockJob", enqueued_at: Date.now() / 1000 });
  await launcher.start();
  await until(() => started);
  const during = await scrape(metrics);
  assert.equal(total(during, "tsq_running_jobs", { queue: "default", class: "BlockJob" }), 1);
  assert.ok(
    during.get("process_cpu_seconds_total")!.samples.every((s) => s.labels.child === "7"),
    "process metrics carry the child label",
  );
  release();
  await until(async () => total(await scrape(metrics), "tsq_jobs_completion_seconds_count") === 1);
  const after = await scrape(metrics);
  assert.equal(total(after, "tsq_running_jobs", { queue: "default", class: "BlockJob" }), 0);
  assert.equal(after.get("tsq_running_jobs")!.samples.length, 1, "the series stays, at 0");
  await launcher.stop();
  metrics.stop();
});
