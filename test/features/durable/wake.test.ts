/**
 * Durable sleeps and wait deadlines wake on time: the process that parked the job polls at its due
 * time, not at its next random poll. The poll interval here is 60 s (polls 30–90 s apart), so a job
 * back within 20 s of its due time was moved by the alarm.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { useRedis } from "../../helpers/redis.js";
import { testLauncher } from "../../helpers/context.js";
import { eventually } from "../../helpers/tsqProcess.js";
import { PROCESS_CLEANUP } from "../../../src/wire/keys.js";
import { SleepyJob, WaitingJob } from "../../jobs/durableJobs.js";

const handle = useRedis();

test("a sleep and a wait's deadline come back at their due time, not at the next poll", async (t) => {
  const launcher = testLauncher(handle.url, [SleepyJob, WaitingJob], { concurrency: 2, pollIntervalAverage: 60 });
  await launcher.start();
  t.after(() => launcher.stop());
  // The first poll comes within 5 s of the start and prunes processes; the next is 30–90 s after it.
  await eventually(async () => (await handle.redis.exists(PROCESS_CLEANUP)) === 1, 15_000, "the first poll");
  const pushed = Date.now();
  const sleeper = (await launcher.ctx.client.push({ class: "SleepyJob", args: ["w", 2] }))!;
  const waiter = (await launcher.ctx.client.push({ class: "WaitingJob", args: ["v", "nobody", 2] }))!;
  await eventually(async () => (await handle.redis.zcard("schedule")) === 2, 10_000, "both parked");
  await eventually(
    async () =>
      (await handle.redis.sismember("w:done", sleeper)) + (await handle.redis.sismember("v:done", waiter)) === 2,
    25_000,
    "both back before the next random poll (30 s at the earliest)",
  );
  const ms = Date.now() - pushed;
  assert.ok(ms >= 1_000, `not before they were due (${ms} ms)`);
  assert.deepEqual(await handle.redis.lrange("v:runs", 0, -1), ["run", "run", "timeout"]);
  assert.equal(await handle.redis.zcard("schedule"), 0);
});
