/**
 * IterableJob in an in-process worker against a real Redis: hook order, the it-<jid> state, re-pushes
 * after maxIterationRuntime with the same jid, a graceful stop, cancel, an error mid-walk, and a saved
 * state that cannot be read.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { Client } from "../../../src/client/Client.js";
import { cancelIterable, loadState } from "../../../src/features/iterable/state.js";
import { useRedis } from "../../helpers/redis.js";
import { testLauncher } from "../../helpers/context.js";
import { eventually } from "../../helpers/tsqProcess.js";
import {
  CountingIterableJob,
  FailOnceIterableJob,
  NotEnumerableJob,
  ObjectCursorJob,
  QuickFlushIterableJob,
  ShortRunIterableJob,
  SyncWalkJob,
} from "../../jobs/iterableJobs.js";

const handle = useRedis();
const CLASSES = [
  CountingIterableJob,
  ShortRunIterableJob,
  QuickFlushIterableJob,
  FailOnceIterableJob,
  NotEnumerableJob,
  ObjectCursorJob,
  SyncWalkJob,
];

function worker(concurrency = 2) {
  return testLauncher(handle.url, CLASSES, { concurrency, timeout: 5 });
}

async function hooks(key: string): Promise<string[]> {
  return handle.redis.lrange(`${key}:hooks`, 0, -1);
}

async function seen(key: string): Promise<number> {
  return handle.redis.bitcount(`${key}:seen`);
}

test("a run to the end: onStart, onStop, onComplete, every item once, state deleted", async (t) => {
  const launcher = worker();
  await launcher.start();
  t.after(() => launcher.stop());
  const jid = await launcher.ctx.client.push({ class: "CountingIterableJob", args: ["a", 5000] });
  await eventually(async () => (await hooks("a")).includes("complete"), 20_000, "the job completed");
  assert.deepEqual(await hooks("a"), ["start:1", "stop", "complete"]);
  assert.equal(await seen("a"), 5000);
  assert.equal(await handle.redis.get("a:repeats"), null, "nothing repeated");
  assert.equal(await handle.redis.exists(`it-${jid}`), 0, "the state goes with the job");
});

test("maxIterationRuntime: the job re-pushes itself with the same jid, resumes, and is not a failure", async (t) => {
  const launcher = worker();
  await launcher.start();
  t.after(() => launcher.stop());
  // 400 items of 2 ms each: about 0.8 s of work, so at least two re-pushes at 0.3 s per run.
  const jid = await launcher.ctx.client.push({ class: "ShortRunIterableJob", args: ["m", 400, 2] });
  await eventually(async () => (await hooks("m")).includes("complete"), 30_000, "the job completed");
  const order = await hooks("m");
  const runs = order.filter((h) => h.startsWith("start") || h.startsWith("resume"));
  assert.ok(runs.length >= 3, `at least three runs, got ${order.join(" ")}`);
  assert.deepEqual(
    runs,
    runs.map((_, i) => (i === 0 ? "start:1" : `resume:${i + 1}`)),
    "ex counts the runs",
  );
  assert.equal(order.filter((h) => h === "stop").length, runs.length, "onStop after every run");
  assert.equal(order.at(-1), "complete");
  assert.deepEqual(new Set(await handle.redis.lrange("m:jids", 0, -1)), new Set([jid]), "every run had the same jid");
  assert.equal(await seen("m"), 400, "every item");
  assert.equal(await handle.redis.get("m:repeats"), null, "an interruption repeats nothing");
  assert.equal(await handle.redis.zcard("retry"), 0, "no retry");
  assert.equal(Number((await handle.redis.get("stat:failed")) ?? 0), 0, "no failure counted");
});

test("a graceful stop saves the cursor; the next worker resumes there", async () => {
  const first = worker();
  await first.start();
  const jid = await first.ctx.client.push({ class: "CountingIterableJob", args: ["g", 3000, 1] });
  await eventually(async () => (await seen("g")) >= 200, 20_000, "some items done");
  await first.stop();
  assert.deepEqual(await hooks("g"), ["start:1", "stop"]);
  const state = await loadState(handle.redis, jid!);
  assert.ok(state, "it-<jid> kept");
  assert.equal(state.executions, 1);
  assert.equal(state.cursor, await seen("g"), "the cursor is the first item not done");
  assert.ok(state.runtime > 0, "rt counts seconds iterating");
  assert.ok((await handle.redis.ttl(`it-${jid}`)) > 29 * 86_400, "30-day expiry");
  assert.equal(await handle.redis.llen("queue:default"), 1, "the job is back in its queue");

  const second = worker();
  await second.start();
  await eventually(async () => (await hooks("g")).includes("complete"), 30_000, "the resumed job completed");
  await second.stop();
  assert.deepEqual(await hooks("g"), ["start:1", "stop", "resume:2", "stop", "complete"]);
  assert.equal(await seen("g"), 3000);
  assert.equal(await handle.redis.get("g:repeats"), null, "a graceful stop repeats nothing");
});

test("a walk that never waits for I/O still sees a stop at once and saves its place", async () => {
  const launcher = worker();
  await launcher.start();
  const total = 1e12; // hours of no-op items: only a stop ends it
  const jid = await launcher.ctx.client.push({ class: "SyncWalkJob", args: ["s", total] });
  await eventually(async () => (await hooks("s")).includes("start:1"), 20_000, "walking");
  // The stop comes from a timer, as a signal comes from outside: it can only run when the walk gives
  // the event loop a turn. A walk that kept the loop would hold it until its first state save (5 s).
  const began = Date.now();
  await new Promise<void>((resolve, reject) => setTimeout(() => launcher.stop().then(resolve, reject), 100));
  assert.ok(Date.now() - began < 3000, `stopped in ${Date.now() - began} ms`);
  assert.deepEqual(await hooks("s"), ["start:1", "stop"], "the job ended itself (onStop), not abandoned");
  const cursor = Number(await handle.redis.hget(`it-${jid}`, "c"));
  assert.ok(cursor > 0 && cursor < total, `cursor ${cursor} saved`);
  assert.equal(await handle.redis.llen("queue:default"), 1, "requeued");
});

test("cancel: a running job stops at its next save and runs onCancel; a cancelled job stops when it starts", async (t) => {
  const launcher = worker();
  await launcher.start();
  t.after(() => launcher.stop());
  const jid = await launcher.ctx.client.push({ class: "QuickFlushIterableJob", args: ["c", 100_000, 1] });
  await eventually(async () => (await seen("c")) >= 50, 20_000, "running");
  const at = await cancelIterable(handle.redis, jid!);
  assert.ok(Math.abs(at - Date.now() / 1000) < 5, "the cancel time is now, in epoch seconds");
  assert.equal(await cancelIterable(handle.redis, jid!), at, "a second cancel keeps the first time (HSETNX)");
  await eventually(async () => (await hooks("c")).includes("complete"), 20_000, "the job stopped");
  assert.deepEqual(await hooks("c"), ["start:1", "cancel", "stop", "complete"]);
  assert.ok((await seen("c")) < 100_000, "stopped early");
  assert.equal(await handle.redis.exists(`it-${jid}`), 0);

  const pending = new Client({ redis: handle.url });
  t.after(() => pending.close());
  await cancelIterable(handle.redis, "0123456789abcdef01234567");
  await pending.push({ class: "CountingIterableJob", args: ["p", 10], jid: "0123456789abcdef01234567" });
  await eventually(async () => (await hooks("p")).includes("complete"), 20_000, "the cancelled job ended");
  assert.deepEqual(await hooks("p"), ["start:1", "cancel", "stop", "complete"]);
  assert.equal(await seen("p"), 0, "no item ran");
});

test("an error mid-walk saves the cursor; the retry resumes at the failed item", async (t) => {
  const launcher = worker();
  await launcher.start();
  t.after(() => launcher.stop());
  const jid = await launcher.ctx.client.push({ class: "FailOnceIterableJob", args: ["e", 20] });
  await eventually(async () => (await handle.redis.zcard("retry")) === 1, 20_000, "the failure went to retries");
  assert.equal((await loadState(handle.redis, jid!))?.cursor, 5, "cursor at the failed item");
  assert.deepEqual(await hooks("e"), ["start:1"], "no onStop after an error (Sidekiq's order)");
  // Run the retry now rather than in 15+ s.
  const [retry] = await handle.redis.zrange("retry", 0, 0);
  await handle.redis.zrem("retry", retry!);
  await handle.redis.lpush("queue:default", retry!);
  await eventually(async () => (await hooks("e")).includes("complete"), 20_000, "the retry completed");
  assert.deepEqual(await hooks("e"), ["start:1", "resume:2", "stop", "complete"]);
  assert.equal(await seen("e"), 20);
  assert.equal(await handle.redis.get("e:repeats"), null);
});

test("object cursors round-trip through JSON", async (t) => {
  const launcher = worker();
  await launcher.start();
  t.after(() => launcher.stop());
  await handle.redis.hset("it-feedfacefeedfacefeedface", { ex: "1", c: JSON.stringify({ id: 1 }), rt: "0.5" });
  await launcher.ctx.client.push({ class: "ObjectCursorJob", args: ["o"], jid: "feedfacefeedfacefeedface" });
  await eventually(async () => (await handle.redis.llen("o:items")) === 2, 20_000, "resumed at id 1");
  assert.deepEqual(await handle.redis.lrange("o:items", 0, -1), ["row-1", "row-2"]);
});

test("a saved state that is not JSON: a clear error, straight to the dead set, the state kept", async (t) => {
  const launcher = worker();
  await launcher.start();
  t.after(() => launcher.stop());
  const jid = "badc0ffeebadc0ffeebadc0f";
  await handle.redis.hset(`it-${jid}`, { ex: "2", c: "{not json", rt: "1.5" });
  await launcher.ctx.client.push({ class: "CountingIterableJob", args: ["h", 10], jid });
  await eventually(async () => (await handle.redis.zcard("dead")) === 1, 20_000, "the job is dead");
  const [dead] = await handle.redis.zrange("dead", 0, 0);
  const job = JSON.parse(dead!) as { jid: string; error_class: string; error_message: string };
  assert.equal(job.jid, jid);
  assert.equal(job.error_class, "IterationStateError");
  assert.match(job.error_message, new RegExp(`field "c" of it-${jid} is not JSON`));
  assert.match(job.error_message, /HDEL it-badc0ffeebadc0ffeebadc0f c/);
  assert.equal(await handle.redis.zcard("retry"), 0, "not retried: it would fail the same way");
  assert.equal(await handle.redis.hget(`it-${jid}`, "c"), "{not json", "the state is kept for a human");
  assert.equal(await seen("h"), 0);

  // A cursor that is JSON but not what the enumerator takes is reported the same way.
  await handle.redis.hset("it-0badcafe0badcafe0badcafe", { ex: "1", c: '"abc"', rt: "0" });
  await launcher.ctx.client.push({ class: "CountingIterableJob", args: ["h2", 10], jid: "0badcafe0badcafe0badcafe" });
  await eventually(async () => (await handle.redis.zcard("dead")) === 2, 20_000, "the second job is dead");
  assert.equal(await handle.redis.zcard("retry"), 0);
});

test("buildEnumerator returning a non-iterable fails with a message saying what to return", async (t) => {
  const launcher = worker();
  await launcher.start();
  t.after(() => launcher.stop());
  await launcher.ctx.client.push({ class: "NotEnumerableJob", args: [] });
  await eventually(async () => (await handle.redis.zcard("retry")) === 1, 20_000, "failed");
  const [failed] = await handle.redis.zrange("retry", 0, 0);
  const job = JSON.parse(failed!) as { error_class: string; error_message: string };
  assert.equal(job.error_class, "ArgumentError");
  assert.match(job.error_message, /NotEnumerableJob#buildEnumerator must return an iterable of \[item, cursor\] pairs/);
});
