/**
 * cancel(jid) and timeouts against a real Redis: a queued, a scheduled and a sleeping job removed; a
 * running job aborted through its owner's channel and ended without a retry; a timeout that the job
 * honours and one it ignores (abandoned: the slot is freed and the retry policy applies).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { useRedis } from "../../helpers/redis.js";
import { testLauncher } from "../../helpers/context.js";
import { eventually } from "../../helpers/tsqProcess.js";
import { cancel } from "../../../src/features/durable/cancel.js";
import { CountJob, DeafJob, PoliteJob, SleepyJob, TimedJob } from "../../jobs/durableJobs.js";

const handle = useRedis();
const CLASSES = [PoliteJob, DeafJob, TimedJob, SleepyJob, CountJob];

function worker(concurrency = 1) {
  return testLauncher(handle.url, CLASSES, { concurrency, pollIntervalAverage: 0.2, heartbeatInterval: 0.5 });
}

const runs = (key: string) => handle.redis.lrange(`${key}:runs`, 0, -1);

test("cancel removes a queued and a scheduled job and marks the jid", async (t) => {
  const launcher = worker();
  t.after(() => launcher.stop());
  const queued = (await launcher.ctx.client.push({ class: "CountJob", args: ["q"] }))!;
  const later = (await launcher.ctx.client.push({ class: "CountJob", args: ["q"], at: Date.now() / 1000 + 3600 }))!;
  const kept = (await launcher.ctx.client.push({ class: "CountJob", args: ["q"] }))!;
  const first = await cancel(queued, { redis: handle.redis });
  assert.deepEqual(first.removed, ["queue:default"]);
  assert.equal(first.runningOn, undefined);
  assert.deepEqual((await cancel(later, { redis: handle.redis })).removed, ["schedule"]);
  assert.equal(await handle.redis.zcard("schedule"), 0);
  const left = await handle.redis.lrange("queue:default", 0, -1);
  assert.deepEqual(
    left.map((text) => (JSON.parse(text) as { jid: string }).jid),
    [kept],
  );
  assert.ok(Number(await handle.redis.hget(`tsq:durable:${queued}`, "cancelled")) > 0, "the jid is marked");
  await assert.rejects(cancel("not a jid", { redis: handle.redis }), /needs a job id/);
});

test("cancel a sleeping durable job: it leaves schedule and never runs again", async (t) => {
  const launcher = worker();
  await launcher.start();
  t.after(() => launcher.stop());
  const jid = (await launcher.ctx.client.push({ class: "SleepyJob", args: ["z", 1] }))!;
  await eventually(async () => (await handle.redis.zcard("schedule")) === 1, 10_000, "asleep");
  assert.deepEqual((await cancel(jid, { redis: handle.redis })).removed, ["schedule"]);
  // Had it survived, it would have woken within 1 s; a plain job pushed 2 s later runs after it would have.
  await new Promise((resolve) => setTimeout(resolve, 2000));
  await launcher.ctx.client.push({ class: "CountJob", args: ["z"] });
  await eventually(async () => (await handle.redis.get("z:count")) === "1", 10_000, "the worker is live");
  assert.deepEqual(await runs("z"), ["run"], "one execution only");
  assert.equal(await handle.redis.sismember("z:done", jid), 0);
});

test("cancel a running job: its owner aborts this.signal; it ends cancelled, not retried, counted", async (t) => {
  const launcher = worker();
  await launcher.start();
  t.after(() => launcher.stop());
  const outcomes: string[] = [];
  launcher.ctx.events.on("end", (job, _q, outcome) => {
    if (job.class === "PoliteJob") outcomes.push(outcome.status);
  });
  const jid = (await launcher.ctx.client.push({ class: "PoliteJob", args: ["c"] }))!;
  await eventually(async () => (await runs("c")).includes("started"), 10_000, "running");
  // The owner is found once a heartbeat has written the work hash.
  await eventually(
    async () => Object.values(await handle.redis.hgetall(`${launcher.ctx.identity}:work`)).some((w) => w.includes(jid)),
    10_000,
    "in the work hash",
  );
  const sent = Date.now();
  const result = await cancel(jid, { redis: handle.redis });
  assert.equal(result.runningOn, launcher.ctx.identity);
  assert.equal(result.notified, 1);
  await eventually(async () => (await runs("c")).includes("aborted:JobCancelledError"), 5000, "aborted");
  assert.ok(Date.now() - sent < 1000, `stopped within 1 s (${Date.now() - sent} ms)`);
  await launcher.ctx.client.push({ class: "CountJob", args: ["c"] });
  await eventually(async () => (await handle.redis.get("c:count")) === "1", 10_000, "slot free");
  assert.equal(await handle.redis.llen("c:stale"), 0, "the next job on the slot gets a signal not aborted");
  assert.equal(await handle.redis.zcard("retry"), 0, "not retried");
  assert.equal(await handle.redis.zcard("dead"), 0, "not dead");
  assert.equal(Number((await handle.redis.get("stat:failed")) ?? 0), 0, "not a failure");
  assert.deepEqual(outcomes, ["cancelled"]);
});

test("timeout honoured: the job aborts at its deadline and fails with JobTimeoutError (retried)", async (t) => {
  const launcher = worker();
  await launcher.start();
  t.after(() => launcher.stop());
  const outcomes: string[] = [];
  launcher.ctx.events.on("durable", (_job, _q, outcome) => outcomes.push(outcome));
  await launcher.ctx.client.push({ class: "TimedJob", args: ["h"] });
  await eventually(async () => (await handle.redis.zcard("retry")) === 1, 10_000, "in retries");
  const [entry] = await handle.redis.zrange("retry", 0, 0);
  const payload = JSON.parse(entry!) as { error_class: string; error_message: string };
  assert.equal(payload.error_class, "JobTimeoutError");
  assert.match(payload.error_message, /past its timeout of 1 s/);
  assert.deepEqual(outcomes, ["timedOut"], "not abandoned: it settled");
});

test("timeout ignored: after the grace the slot is freed, the job retried, the promise counted abandoned", async (t) => {
  const launcher = worker();
  await launcher.start();
  t.after(() => launcher.stop());
  const outcomes: string[] = [];
  launcher.ctx.events.on("durable", (_job, _q, outcome) => outcomes.push(outcome));
  const started = Date.now();
  await launcher.ctx.client.push({ class: "DeafJob", args: ["d"] });
  await launcher.ctx.client.push({ class: "CountJob", args: ["d"] });
  // Concurrency 1: the plain job can only run once the deaf job's slot is freed (1 s + 0.5 s grace).
  await eventually(async () => (await handle.redis.get("d:count")) === "1", 10_000, "the slot was freed");
  assert.ok(Date.now() - started >= 1400, "not before the timeout and its grace");
  assert.equal(await handle.redis.llen("d:stale"), 0, "the next job on the slot gets a signal not aborted");
  const [entry] = await handle.redis.zrange("retry", 0, 0);
  assert.equal((JSON.parse(entry!) as { error_class: string }).error_class, "JobTimeoutError");
  assert.deepEqual(outcomes, ["abandoned", "timedOut"]);
  // Its promise runs on (60 s): counted as still running, and in the heartbeat for a supervisor.
  assert.equal(launcher.ctx.state.abandoned, 1);
  await eventually(
    async () => (await handle.redis.hget(launcher.ctx.identity, "abandoned")) === "1",
    10_000,
    "the heartbeat reports the abandoned job",
  );
  // The timeout per push overrides the class's.
  await launcher.ctx.client.push({ class: "PoliteJob", args: ["p"], timeout: 0.3 });
  await eventually(async () => (await runs("p")).includes("aborted:JobTimeoutError"), 10_000, "per-push timeout");
});
