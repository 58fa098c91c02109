/**
 * Job timeouts and abort graces past setTimeout's 24.8 days, in a real worker on a private Redis: a
 * class with `static timeout` of 30 days (and a grace of 30 days), and a push with a timeout of a year,
 * run to their end without an abort (Node would have fired both timers after 1 ms). A class whose
 * `static timeout` or `static abortGrace` is not a duration (NaN, negative, 0, 40 years) stops the worker
 * at its start, naming the class and what to do.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { setTimeout as sleep } from "node:timers/promises";
import { useRedis } from "../../helpers/redis.js";
import { testLauncher } from "../../helpers/context.js";
import { eventually } from "../../helpers/tsqProcess.js";
import { Job } from "../../../src/client/Job.js";
import { defaultClient } from "../../../src/client/defaultClient.js";
import { Worker } from "../../../src/library/Worker.js";

const handle = useRedis();
const DAY = 86_400; // seconds

/** Runs 1.5 s, then records whether its signal was aborted meanwhile. */
class MonthLongJob extends Job {
  static timeout = 30 * DAY;
  static abortGrace = 30 * DAY;
  static override options = { retry: false };
  async perform(key: string): Promise<void> {
    await sleep(1_500);
    await defaultClient().redis.rpush(
      key,
      this.signal.aborted ? `aborted:${(this.signal.reason as Error).name}` : "ok",
    );
  }
}

test("a timeout of 30 days, a grace of 30 days and a per-push timeout of a year do not abort the job", async (t) => {
  const warnings: string[] = [];
  const onWarning = (warning: Error) => warnings.push(warning.name);
  process.on("warning", onWarning);
  t.after(() => process.off("warning", onWarning));
  const launcher = testLauncher(handle.url, [MonthLongJob], { concurrency: 2 });
  await launcher.start();
  t.after(() => launcher.stop());
  const outcomes: string[] = [];
  launcher.ctx.events.on("durable", (_job, _q, outcome) => outcomes.push(outcome));
  await launcher.ctx.client.push({ class: "MonthLongJob", args: ["month"] });
  await launcher.ctx.client.push({ class: "MonthLongJob", args: ["year"], timeout: 365 * DAY });
  await eventually(
    async () => (await handle.redis.llen("month")) + (await handle.redis.llen("year")) === 2,
    15_000,
    "both ran",
  );
  assert.deepEqual(await handle.redis.lrange("month", 0, -1), ["ok"]);
  assert.deepEqual(await handle.redis.lrange("year", 0, -1), ["ok"]);
  assert.deepEqual(outcomes, [], "neither timed out nor was abandoned");
  assert.equal(await handle.redis.zcard("dead"), 0);
  assert.ok(!warnings.includes("TimeoutOverflowWarning"), `warnings: ${warnings.join(", ")}`);
});

for (const [label, statics, message] of [
  [
    "NaN",
    { timeout: Number.NaN },
    /BadTimeoutJob\.timeout must be a number of seconds > 0, got NaN; leave it out for no timeout/,
  ],
  ["negative", { timeout: -1 }, /BadTimeoutJob\.timeout must be seconds > 0, got -1/],
  ["0", { timeout: 0 }, /BadTimeoutJob\.timeout must be seconds > 0, got 0/],
  [
    "40 years (milliseconds given as seconds)",
    { timeout: 30 * DAY * 1000 },
    /over the longest allowed, 315360000 s \(10 years\): give it in seconds \(not milliseconds\)/,
  ],
  [
    "a negative grace",
    { abortGrace: -5 },
    /BadTimeoutJob\.abortGrace must be seconds >= 0, got -5; leave it out for the default of 5 s/,
  ],
] as const) {
  test(`a class whose limit is ${label} stops the worker at its start, naming the class`, () => {
    class BadTimeoutJob extends Job {
      perform(): void {}
    }
    Object.assign(BadTimeoutJob, statics);
    assert.throws(() => testLauncher(handle.url, [BadTimeoutJob]), message);
  });
}

test("a grace of 0 is allowed: abandoned as soon as aborted", () => {
  class NoGraceJob extends Job {
    static timeout = 60;
    static abortGrace = 0;
    perform(): void {}
  }
  assert.doesNotThrow(() => testLauncher(handle.url, [NoGraceJob]));
});

test("worker.stop({ timeout }) refuses NaN, negative and past a day, then stops with a good one", async () => {
  const worker = new Worker({ redis: handle.url, jobs: [MonthLongJob] });
  await worker.start();
  await assert.rejects(
    worker.stop({ timeout: Number.NaN }),
    /worker\.stop\(\{ timeout \}\) must be a number of seconds >= 0, got NaN/,
  );
  await assert.rejects(worker.stop({ timeout: -1 }), /must be seconds >= 0, got -1/);
  await assert.rejects(worker.stop({ timeout: 30 * DAY }), /over the longest allowed, 86400 s \(a day\)/);
  await worker.stop({ timeout: 0 });
});
