/**
 * DurableJob in an in-process worker against a real Redis: steps recorded once and replayed, a step
 * list changed between runs refused, a sleep that frees the slot and resumes past its steps, waitFor
 * with a signal before and after the park and with a timeout, a plain job paying no Redis call.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { useRedis } from "../../helpers/redis.js";
import { testLauncher } from "../../helpers/context.js";
import { eventually } from "../../helpers/tsqProcess.js";
import { signal } from "../../../src/features/durable/signal.js";
import { CountJob, FiveStepJob, ReorderedJob, SleepyJob, WaitingJob } from "../../jobs/durableJobs.js";

const handle = useRedis();
const CLASSES = [FiveStepJob, SleepyJob, WaitingJob, ReorderedJob, CountJob];

function worker(concurrency = 2) {
  return testLauncher(handle.url, CLASSES, { concurrency, pollIntervalAverage: 0.2 });
}

const effects = (key: string) => handle.redis.hgetall(`${key}:effects`);
const runs = (key: string) => handle.redis.lrange(`${key}:runs`, 0, -1);

test("steps: each runs once; a second copy of the jid replays nothing and calls nothing", async (t) => {
  const launcher = worker();
  await launcher.start();
  t.after(() => launcher.stop());
  const jid = (await launcher.ctx.client.push({ class: "FiveStepJob", args: ["f", 0] }))!;
  await eventually(async () => (await handle.redis.sismember("f:done", jid)) === 1, 20_000, "done");
  const journal = await handle.redis.hgetall(`tsq:durable:${jid}`);
  assert.equal(journal["s:charge"], "0|v|1");
  assert.equal(journal["s:close"], "4|v|1");
  assert.ok(Number(journal.done) > 0, "marked done");
  const ttl = await handle.redis.ttl(`tsq:durable:${jid}`);
  assert.ok(ttl > 6 * 86400 && ttl <= 7 * 86400, `the journal expires in 7 days (ttl ${ttl} s)`);
  // The same payload again (a duplicate, a recovered copy): it ends without calling any step.
  await launcher.ctx.client.push({ class: "FiveStepJob", args: ["f", 0], jid });
  await launcher.ctx.client.push({ class: "CountJob", args: ["f"] });
  await eventually(async () => (await handle.redis.get("f:count")) === "1", 20_000, "the job after it ran");
  await eventually(async () => (await handle.redis.llen("queue:default")) === 0, 5000, "queue drained");
  const counted = await effects("f");
  assert.deepEqual(Object.values(counted), ["1", "1", "1", "1", "1"], "each side effect once");
  assert.deepEqual(Object.values(await handle.redis.hgetall("f:calls")), ["1", "1", "1", "1", "1"]);
});

test("a failed execution retries and replays the steps done: recorded results come back", async (t) => {
  const launcher = worker();
  await launcher.start();
  t.after(() => launcher.stop());
  // Journal as if a run recorded two steps and died: the re-run must call only the last three.
  const jid = "feedfacefeedfacefeedface";
  await handle.redis.hset(`tsq:durable:${jid}`, "s:charge", "0|v|1", "s:reserve", "1|v|1");
  await launcher.ctx.client.push({ class: "FiveStepJob", args: ["r", 0], jid });
  await eventually(async () => (await handle.redis.sismember("r:done", jid)) === 1, 20_000, "done");
  const calls = await handle.redis.hgetall("r:calls");
  assert.deepEqual(Object.keys(calls).sort(), [`${jid}:close`, `${jid}:label`, `${jid}:notify`]);
});

test("a step list changed between deploys is refused, named, and sent to the dead set", async (t) => {
  const launcher = worker();
  const errors: string[] = [];
  await launcher.start();
  t.after(() => launcher.stop());
  const jid = "0123456789abcdef01234567";
  await handle.redis.hset(`tsq:durable:${jid}`, "s:one", "0|v|null", "s:two", "1|v|null");
  launcher.ctx.events.on("end", (job, _q, outcome) => errors.push(`${job.jid}:${outcome.disposition}`));
  await launcher.ctx.client.push({ class: "ReorderedJob", args: ["o", ["two", "one"]], jid, retry: 3 });
  await eventually(async () => (await handle.redis.zcard("dead")) === 1, 20_000, "dead");
  const [dead] = await handle.redis.zrange("dead", 0, 0);
  const payload = JSON.parse(dead!) as { error_class: string; error_message: string };
  assert.equal(payload.error_class, "StepOrderError");
  assert.match(payload.error_message, /"two" is step #1 now but was step #2 \(step #1 was "one"\)/);
  assert.deepEqual(await effects("o"), {}, "no step ran");
  assert.deepEqual(errors, [`${jid}:dead`]);
});

test("sleep: the slot is freed, the same jid comes back through schedule, steps done are skipped", async (t) => {
  const launcher = worker(1);
  await launcher.start();
  t.after(() => launcher.stop());
  const ends: string[] = [];
  launcher.ctx.events.on("end", (job, _q, outcome) => {
    if (job.class === "SleepyJob") ends.push(outcome.why ? `${outcome.status}:${outcome.why}` : outcome.status);
  });
  const jid = (await launcher.ctx.client.push({ class: "SleepyJob", args: ["s", 2] }))!;
  await eventually(async () => (await handle.redis.zcard("schedule")) === 1, 10_000, "sleeping in schedule");
  const [member, score] = await handle.redis.zrange("schedule", 0, 0, "WITHSCORES");
  assert.equal((JSON.parse(member!) as { jid: string }).jid, jid, "same jid");
  assert.ok(Number(score) - Date.now() / 1000 > 0.5, "scheduled in the future");
  // Concurrency 1: the sleeping job holds no slot, so other work runs meanwhile.
  for (let i = 0; i < 20; i++) await launcher.ctx.client.push({ class: "CountJob", args: ["s"] });
  await eventually(async () => (await handle.redis.get("s:count")) === "20", 10_000, "other work ran");
  assert.equal(await handle.redis.sismember("s:done", jid), 0, "still asleep meanwhile");
  await eventually(async () => (await handle.redis.sismember("s:done", jid)) === 1, 20_000, "woke and finished");
  assert.deepEqual(await runs("s"), ["run", "run"], "two executions");
  assert.deepEqual(await effects("s"), { a: "1", b: "1" }, "each step once");
  const a = JSON.parse((await handle.redis.get("s:a-seen-by-b"))!) as { at: number };
  assert.equal(typeof a.at, "number", "the second execution got step a's recorded result");
  assert.deepEqual(ends, ["suspended:sleeping", "done"], "the sleep is a pause, not an end");
  assert.equal(Number((await handle.redis.get("stat:failed")) ?? 0), 0);
});

test("waitFor: a signal after the park wakes the job with its data", async (t) => {
  const launcher = worker(1);
  await launcher.start();
  t.after(() => launcher.stop());
  const jid = (await launcher.ctx.client.push({ class: "WaitingJob", args: ["w", "ship:1", 3600] }))!;
  await eventually(async () => (await handle.redis.hexists("tsq:durable:waiters:ship:1", jid)) === 1, 10_000, "parked");
  assert.equal(await handle.redis.hget(`tsq:durable:${jid}`, "w"), "ship:1", "the journal says what it waits for");
  await launcher.ctx.client.push({ class: "CountJob", args: ["w"] });
  await eventually(async () => (await handle.redis.get("w:count")) === "1", 10_000, "the slot is free");
  const woken = await signal("ship:1", { carrier: "ups" }, { redis: handle.redis });
  assert.equal(woken, 1);
  await eventually(async () => (await handle.redis.sismember("w:done", jid)) === 1, 20_000, "woke and finished");
  assert.deepEqual(await runs("w"), ["run", "run", 'got:{"carrier":"ups"}']);
  assert.deepEqual(await effects("w"), { before: "1", after: "1" });
  assert.equal(await handle.redis.exists("tsq:durable:waiters:ship:1"), 0);
});

test("waitFor: a signal sent before the wait starts is not lost", async (t) => {
  assert.equal(await signal("paid:9", 42, { redis: handle.redis }), 0, "no one waits yet");
  const launcher = worker(1);
  await launcher.start();
  t.after(() => launcher.stop());
  const jid = (await launcher.ctx.client.push({ class: "WaitingJob", args: ["e", "paid:9", 3600] }))!;
  await eventually(async () => (await handle.redis.sismember("e:done", jid)) === 1, 20_000, "finished");
  assert.deepEqual(await runs("e"), ["run", "got:42"], "one execution: it never parked");
  assert.equal(await handle.redis.zcard("schedule"), 0);
});

test("waitFor: the timeout throws EventTimeoutError, which the job can catch", async (t) => {
  const launcher = worker(1);
  await launcher.start();
  t.after(() => launcher.stop());
  const jid = (await launcher.ctx.client.push({ class: "WaitingJob", args: ["x", "never", 1] }))!;
  await eventually(async () => (await handle.redis.sismember("x:done", jid)) === 1, 20_000, "finished");
  assert.deepEqual(await runs("x"), ["run", "run", "timeout"]);
  assert.equal(await handle.redis.hget(`tsq:durable:${jid}`, "s:waitFor:never"), "1|t|");
  // A signal after the timeout wakes no one and does not revive the job.
  assert.equal(await signal("never", 1, { redis: handle.redis }), 0);
});

test("a plain job pays no Redis call for the plug-in", async (t) => {
  const launcher = worker(1);
  await launcher.start();
  t.after(() => launcher.stop());
  await launcher.ctx.client.push({ class: "CountJob", args: ["warm"] });
  await eventually(async () => (await handle.redis.get("warm:count")) === "1", 10_000, "warm");
  const source = handle.redis.duplicate();
  const monitor = await source.monitor();
  t.after(() => {
    monitor.disconnect();
    source.disconnect();
  });
  const commands: string[] = [];
  monitor.on("monitor", (_time: string, args: string[]) => commands.push(args.join(" ")));
  await launcher.ctx.client.push({ class: "CountJob", args: ["p"] });
  await eventually(async () => (await handle.redis.get("p:count")) === "1", 10_000, "ran");
  assert.deepEqual(
    commands.filter((c) => /tsq:durable|tsq:cancel/i.test(c)),
    [],
    "no command touches a durable key",
  );
});
