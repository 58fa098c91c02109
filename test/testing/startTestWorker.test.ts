/**
 * startTestWorker: a real worker on its own private redis-server; drain waits for jobs pushed by jobs
 * and for due scheduled jobs; stop leaves no server, connection or timer behind.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { Job } from "tsq";
import { startTestWorker, fake, disable } from "tsq/testing";

const done: string[] = [];

class StepJob extends Job {
  async perform(n: number): Promise<void> {
    await new Promise((resolve) => setTimeout(resolve, 20));
    done.push(`step ${n}`);
    if (n > 0) await StepJob.performAsync(n - 1);
  }
}

class LaterJob extends Job {
  perform(): void {
    done.push("later");
  }
}

function alive(pid: number): boolean {
  return spawnSync("kill", ["-0", String(pid)]).status === 0;
}

test("a pushed chain of jobs and a due scheduled job have all run when drain resolves; stop leaves nothing", async () => {
  const tw = await startTestWorker({ jobs: [StepJob, LaterJob], concurrency: 2 });
  assert.match(tw.url, /^redis:\/\/127\.0\.0\.1:\d+\/0$/);
  assert.notEqual(new URL(tw.url).port, "6379");
  await StepJob.performAsync(4); // through the default client, now the private Redis
  await LaterJob.performIn(1);
  await tw.drain();
  await assert.rejects(
    tw.drain({ timeout: Number.NaN }),
    /drain\(\{ timeout \}\) must be a number of seconds > 0, got NaN/,
  );
  await assert.rejects(tw.drain({ timeout: -1 }), /drain\(\{ timeout \}\) must be seconds > 0, got -1/);
  // The scheduled job is due within a second, so drain may end before it: drain again after it is due.
  await new Promise((resolve) => setTimeout(resolve, 1100));
  await tw.drain();
  assert.deepEqual(
    done.filter((d) => d.startsWith("step")),
    ["step 4", "step 3", "step 2", "step 1", "step 0"],
  );
  assert.ok(done.includes("later"));
  const info = await tw.client.redis.info("server");
  const pid = Number(/process_id:(\d+)/.exec(info)?.[1]);
  await tw.stop();
  await tw.stop(); // idempotent
  assert.ok(!alive(pid), "redis-server still running after stop");
});

test("drain names what is left when it gives up", async () => {
  const tw = await startTestWorker({ jobs: [LaterJob], queues: ["default"] });
  try {
    await tw.worker.quiet(); // nothing fetches now
    await LaterJob.performAsync();
    await assert.rejects(tw.drain({ timeout: 0.2 }), /drain\(\) gave up after 0.2 s with 1 in queue default/);
  } finally {
    await tw.stop();
  }
});

test("startTestWorker refuses fake and inline modes, whose pushes would never reach it", async () => {
  fake();
  try {
    await assert.rejects(startTestWorker({ jobs: [LaterJob] }), /startTestWorker needs disable mode/);
  } finally {
    disable();
  }
});
