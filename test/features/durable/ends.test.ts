/**
 * How a durable execution ends, as every consumer sees it: a sleep or a wait is `suspended` (not an end:
 * no outcome, no batch report), a cancel is final (no step starts after it, the job ends `cancelled`),
 * and a timeout is a failure even when the job settles in its grace. Real Redis, real worker.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { useRedis } from "../../helpers/redis.js";
import { testLauncher } from "../../helpers/context.js";
import { eventually } from "../../helpers/tsqProcess.js";
import { cancel } from "../../../src/features/durable/cancel.js";
import { signal } from "../../../src/features/durable/signal.js";
import { OutcomeWatcher } from "../../../src/features/outcomes/index.js";
import { Batch } from "../../../src/features/flow/batches/index.js";
import type { JobOutcome } from "../../../src/server/hooks.js";
import { JobMetrics } from "../../../src/metrics/JobMetrics.js";
import { renderFamilies } from "../../../src/metrics/exposition.js";
import { parseExposition, total } from "../../metrics/promText.js";
import { DeafStepsJob, LateJob, OrderJob } from "../../jobs/durableEdgeJobs.js";
import { SleepyJob } from "../../jobs/durableJobs.js";

const handle = useRedis();

type TestContext = { after(fn: () => unknown): void };

/** A started worker, its ends by jid ("status" or "status:why"), and a watcher on the outcomes stream. */
async function setUp(t: TestContext, concurrency = 3) {
  const launcher = testLauncher(handle.url, [OrderJob, DeafStepsJob, LateJob, SleepyJob], {
    concurrency,
    pollIntervalAverage: 0.2, // seconds
    heartbeatInterval: 0.5, // seconds
  });
  const metrics = new JobMetrics(launcher.ctx);
  await launcher.start();
  t.after(() => launcher.stop());
  t.after(() => metrics.stop());
  const ends = new Map<string, string[]>();
  launcher.ctx.events.on("end", (job, _queue, outcome: JobOutcome) => {
    const list = ends.get(job.jid) ?? [];
    list.push(outcome.why ? `${outcome.status}:${outcome.why}` : outcome.status);
    ends.set(job.jid, list);
  });
  const watcher = new OutcomeWatcher({ client: launcher.ctx.client });
  t.after(() => watcher.close());
  const stream: string[] = [];
  watcher.subscribe({}, (event) => stream.push(`${event.jid}:${event.status}`));
  return { launcher, client: launcher.ctx.client, ends, watcher, stream, metrics };
}

test("a pause is not an end: three orders give three done outcomes, and final waits get the last return", async (t) => {
  const { client, ends, watcher, stream } = await setUp(t);
  const jids: string[] = [];
  for (const id of ["o1", "o2", "o3"]) jids.push((await client.push({ class: OrderJob, args: ["ord", id] }))!);
  const finals = jids.map((jid) => watcher.wait(jid, { timeout: 60, final: true }));
  const firsts = jids.map((jid) => watcher.wait(jid, { timeout: 60 }));
  let resolvedEarly = 0;
  for (const wait of [...finals, ...firsts]) void wait.then(() => resolvedEarly++);
  await eventually(async () => (await handle.redis.hlen("tsq:durable:waiters:shipped:o3")) === 1, 10_000, "parked");
  for (const id of ["o1", "o2", "o3"]) await signal(`shipped:${id}`, { carrier: id }, { redis: handle.redis });
  // Each wakes, then sleeps 1 s: no wait may resolve before the job's last step.
  await eventually(async () => (await handle.redis.zcard("schedule")) === 3, 10_000, "sleeping after the signal");
  assert.equal(resolvedEarly, 0, "no wait resolved at a pause");
  const outcomes = await Promise.all(finals);
  for (const [i, outcome] of outcomes.entries()) {
    const id = `o${i + 1}`;
    assert.deepEqual(outcome, { status: "done", result: { orderId: id, shipment: { carrier: id }, email: "email" } });
    assert.equal(await handle.redis.hget("ord:effects", `${jids[i]}:email`), "1", "resolved after the last step");
  }
  assert.deepEqual(await Promise.all(firsts), outcomes, "a wait without final resolves at the same, only, end");
  await eventually(async () => stream.length >= 3, 10_000, "stream entries");
  assert.deepEqual(stream.sort(), jids.map((jid) => `${jid}:done`).sort(), "one stream entry per job");
  assert.equal(await handle.redis.xlen("tsq:outcomes"), 3, "three entries, not one per pause");
  for (const jid of jids) assert.deepEqual(ends.get(jid), ["suspended:parked", "suspended:sleeping", "done"]);
});

test("a durable job in a batch reports once, at its real end, not at its sleep", async (t) => {
  const { client, ends } = await setUp(t);
  const batch = new Batch({ client });
  let jid = "";
  await batch.jobs(async () => {
    jid = (await client.push({ class: SleepyJob, args: ["bat", 2] }))!;
  });
  await eventually(async () => (ends.get(jid) ?? []).length === 1, 10_000, "the sleep");
  assert.deepEqual(ends.get(jid), ["suspended:sleeping"]);
  const asleep = await Batch.status(batch.bid, client);
  assert.equal(asleep?.pending, 1, "still pending while it sleeps");
  assert.equal(asleep?.failures, 0);
  await eventually(async () => (ends.get(jid) ?? []).length === 2, 20_000, "the end");
  assert.equal((await Batch.status(batch.bid, client))?.pending, 0, "reported at its end");
});

test("cancel is final: a job ignoring its signal runs no later step, ends cancelled, not retried, counted", async (t) => {
  const { launcher, client, ends, watcher, metrics } = await setUp(t);
  // In a batch: a cancelled member never runs again, so for its batch it died.
  const batch = new Batch({ client });
  let jid = "";
  await batch.jobs(async () => {
    jid = (await client.push({ class: DeafStepsJob, args: ["deaf"] }))!;
  });
  await eventually(async () => (await handle.redis.get("deaf:started")) === "1", 10_000, "step 2 running");
  await eventually(
    async () => Object.values(await handle.redis.hgetall(`${launcher.ctx.identity}:work`)).some((w) => w.includes(jid)),
    10_000,
    "in the work hash",
  );
  const result = await cancel(jid, { redis: handle.redis });
  assert.equal(result.notified, 1);
  const outcome = await watcher.wait(jid, { timeout: 30, final: true });
  assert.equal(outcome.status, "cancelled");
  assert.equal(outcome.error?.class, "JobCancelledError");
  const effects = await handle.redis.hgetall("deaf:effects");
  assert.deepEqual(Object.keys(effects).sort(), [`${jid}:s1`, `${jid}:s2`], "steps 3-6 never started");
  assert.equal(await handle.redis.sismember("deaf:done", jid), 0);
  assert.equal(await handle.redis.hget(`tsq:durable:${jid}`, "done"), null, "the journal is not marked done");
  assert.deepEqual(ends.get(jid), ["cancelled"]);
  assert.equal(await handle.redis.zcard("retry"), 0, "not retried");
  assert.equal(await handle.redis.zcard("dead"), 0, "not dead");
  assert.equal(Number((await handle.redis.get("stat:failed")) ?? 0), 0, "not a failure");
  const status = await Batch.status(batch.bid, client);
  assert.deepEqual(status?.deadJids, [jid], "a death for its batch");
  assert.ok(status?.deathAt, "the batch's death event fired");
  const families = parseExposition(renderFamilies(await metrics.snapshot()));
  assert.equal(total(families, "tsq_jobs_cancelled_total", { class: "DeafStepsJob" }), 1, "counted");
  assert.equal(total(families, "tsq_jobs_completion_seconds_count", { class: "DeafStepsJob" }), 0, "not done");
});

test("a timeout is final: a job returning in its grace fails with JobTimeoutError and is retried", async (t) => {
  const { client, ends, watcher } = await setUp(t);
  const jid = (await client.push({ class: LateJob, args: ["late"] }))!;
  const outcome = await watcher.wait(jid, { timeout: 30 });
  assert.equal(outcome.status, "failed");
  assert.equal(outcome.error?.class, "JobTimeoutError");
  assert.equal(await handle.redis.sismember("late:done", jid), 1, "it did return, in its grace");
  const [entry] = await handle.redis.zrange("retry", 0, 0);
  assert.equal((JSON.parse(entry!) as { error_class: string }).error_class, "JobTimeoutError");
  assert.deepEqual(ends.get(jid), ["failed"]);
  // Counted as failed (the heartbeat flushes the process's counts).
  await eventually(async () => (await handle.redis.get("stat:failed")) === "1", 10_000, "stat:failed");
});
