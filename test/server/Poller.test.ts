/** Poller: due jobs move from retry and schedule to their queues; dead processes are pruned. */
import { test } from "node:test";
import assert from "node:assert/strict";
import { useRedis } from "../helpers/redis.js";
import { testLauncher } from "../helpers/context.js";
import { Poller } from "../../src/server/Poller.js";
import { Client } from "../../src/client/Client.js";
import { ManualClock } from "../helpers/manualClock.js";

const handle = useRedis();

test("enqueueDue moves due retry and schedule entries to their queues through the client, leaving future ones", async () => {
  const launcher = testLauncher(handle.url);
  const poller = new Poller(launcher.ctx);
  const now = Date.now() / 1000;
  const due = {
    class: "A",
    args: [1],
    jid: "a".repeat(24),
    queue: "low",
    retry: true,
    created_at: now - 10,
    retry_count: 0,
    error_class: "E",
  };
  await handle.redis.zadd("retry", String(now - 1), JSON.stringify(due));
  await handle.redis.zadd(
    "schedule",
    String(now - 1),
    JSON.stringify({ ...due, jid: "b".repeat(24), queue: "default" }),
  );
  await handle.redis.zadd("schedule", String(now + 3600), JSON.stringify({ ...due, jid: "c".repeat(24) }));
  assert.equal(await poller.enqueueDue(), 2);
  const [low] = await handle.redis.lrange("queue:low", 0, -1);
  const moved = JSON.parse(low!) as Record<string, unknown>;
  assert.equal(moved.jid, "a".repeat(24));
  assert.equal(moved.retry_count, 0, "retry fields survive the move");
  assert.ok((moved.enqueued_at as number) >= now, "enqueued_at is reset");
  assert.equal(await handle.redis.llen("queue:default"), 1);
  assert.equal(await handle.redis.zcard("schedule"), 1);
  assert.deepEqual((await handle.redis.smembers("queues")).sort(), ["default", "low"]);
});

test("a due job that cannot be parsed goes to the dead set instead of vanishing", async () => {
  const poller = new Poller(testLauncher(handle.url).ctx);
  await handle.redis.zadd("schedule", String(Date.now() / 1000 - 1), "{broken");
  await poller.enqueueDue();
  assert.deepEqual(await handle.redis.zrange("dead", 0, -1), ["{broken"]);
});

test("a scheduled job pushed by the client runs once its time comes (performIn through a live worker)", async () => {
  const ran: string[] = [];
  class Later {
    perform(tag: string) {
      ran.push(tag);
    }
  }
  const launcher = testLauncher(handle.url, [Later], { pollIntervalAverage: 0.2, fetchTimeout: 0.2 });
  const client = new Client({ redis: handle.url });
  await client.push({ class: "Later", args: ["soon"], at: Date.now() / 1000 + 1 });
  await client.close();
  await launcher.start();
  const started = Date.now();
  while (ran.length === 0 && Date.now() - started < 10_000) await new Promise((r) => setTimeout(r, 50));
  assert.deepEqual(ran, ["soon"]);
  await launcher.stop();
});

test("on its clock: first poll 10-15 s after start, then every 2.5-7.5 s; a job moves within an interval of its time", async (t) => {
  const clock = new ManualClock();
  const t0 = clock.now() / 1000;
  const ctx = testLauncher(handle.url, [], { clock }).ctx;
  const poller = new Poller(ctx);
  t.after(() => poller.stop());
  const job = { class: "A", args: [], jid: "a".repeat(24), queue: "default", at: t0 + 30 };
  await handle.redis.zadd("schedule", String(t0 + 30), JSON.stringify(job));
  await handle.redis.sadd("processes", "gone:2:bbbbbbbbbbbb");
  // One process and no pollIntervalAverage: Sidekiq's initial wait (10 + rand*5 s), then 2.5-7.5 s.
  const settle = () => clock.waitForTimers(1);
  poller.start();
  await settle();
  await clock.advance(9_900, settle);
  assert.equal(await handle.redis.exists("process_cleanup"), 0, "no poll within the first 10 s");
  await clock.advance(5_100, settle);
  assert.equal(await handle.redis.exists("process_cleanup"), 1, "the first poll pruned processes by 15 s");
  assert.deepEqual(await handle.redis.smembers("processes"), []);
  await clock.advance(14_900 - 7_500, settle); // t0 + 22.4 s: the job due at 30 s still waits
  assert.equal(await handle.redis.llen("queue:default"), 0, "not moved before its time");
  await clock.advance(7_500 + 7_500, settle); // t0 + 37.4 s: at least one poll since 30 s
  assert.equal(await handle.redis.llen("queue:default"), 1, "moved within one interval of its time");
  await poller.stop();
  assert.equal(clock.pending, 0, "no timer left after stop");
});

test("on its clock: an alarm (a durable sleep this process parked) polls at its time, however long the interval", async (t) => {
  const clock = new ManualClock();
  const t0 = clock.now() / 1000;
  // A fixed average of an hour: ordinary polls 30-90 min apart, the first within 5 s.
  const ctx = testLauncher(handle.url, [], { clock, pollIntervalAverage: 3600 }).ctx;
  const poller = new Poller(ctx);
  t.after(() => poller.stop());
  const settle = () => clock.waitForTimers(1);
  poller.start();
  await settle();
  await clock.advance(5_000, settle);
  const jid = "c".repeat(24);
  await handle.redis.zadd(
    "schedule",
    String(t0 + 100),
    JSON.stringify({ class: "A", args: [], jid, queue: "default" }),
  );
  ctx.alarms.add(t0 + 100);
  await clock.advance(94_900, settle);
  assert.equal(await handle.redis.llen("queue:default"), 0, "not before its time");
  await clock.advance(200, settle);
  assert.equal(await handle.redis.llen("queue:default"), 1, "moved at its alarm, not at the next hourly poll");
  assert.equal(ctx.alarms.size, 0, "the alarm is spent");
});

test("cleanupProcesses removes identities whose hash expired, at most once a minute (process_cleanup lock)", async () => {
  const poller = new Poller(testLauncher(handle.url).ctx);
  await handle.redis.sadd("processes", "alive:1:aaaaaaaaaaaa", "gone:2:bbbbbbbbbbbb");
  await handle.redis.hset("alive:1:aaaaaaaaaaaa", "info", "{}");
  assert.equal(await poller.cleanupProcesses(), 1);
  assert.deepEqual(await handle.redis.smembers("processes"), ["alive:1:aaaaaaaaaaaa"]);
  assert.ok((await handle.redis.ttl("process_cleanup")) > 50);
  await handle.redis.sadd("processes", "gone:3:cccccccccccc");
  assert.equal(await poller.cleanupProcesses(), 0, "the lock stops a second prune within 60 s");
});

test("batch path: every other byte of a due job is kept; enqueued_at is replaced or appended; 2,500 jobs move in batches", async () => {
  const launcher = testLauncher(handle.url);
  const poller = new Poller(launcher.ctx);
  const past = String(Date.now() / 1000 - 5);
  const ruby =
    '{"retry":true,"queue":"low","class":"A","args":[1.0,-0.0,{"x":"}"}],"jid":"r1","created_at":1795264707.0,"enqueued_at":1795264707.5}';
  const scheduled = '{"class":"B","args":[2.50],"jid":"s1","queue":"default","retry":true,"created_at":1795264707.25}';
  const nested = '{"class":"C","args":[{"enqueued_at":1}],"jid":"n1","queue":"default","retry":true}';
  await handle.redis.zadd("retry", past, ruby);
  await handle.redis.zadd("schedule", past, scheduled, past, nested);
  for (let i = 0; i < 2500; i += 500) {
    const members = Array.from({ length: 500 }, (_, j) => [
      past,
      `{"class":"D","args":[${i + j}],"jid":"d${i + j}","queue":"bulk","retry":true}`,
    ]).flat();
    await handle.redis.zadd("schedule", ...members);
  }
  const before = Date.now() / 1000;
  assert.equal(await poller.enqueueDue(), 2503);
  assert.equal(await handle.redis.zcard("schedule"), 0);
  assert.equal(await handle.redis.llen("queue:bulk"), 2500);
  const [low] = await handle.redis.lrange("queue:low", 0, -1);
  assert.match(
    low!,
    /^\{"retry":true,"queue":"low","class":"A","args":\[1\.0,-0\.0,\{"x":"\}"\}\],"jid":"r1","created_at":1795264707\.0,"enqueued_at":\d+\.\d+\}$/,
  );
  assert.ok((JSON.parse(low!) as { enqueued_at: number }).enqueued_at >= before);
  const defaults = await handle.redis.lrange("queue:default", 0, -1);
  const s1 = defaults.find((j) => j.includes('"jid":"s1"'))!;
  assert.match(
    s1,
    /^\{"class":"B","args":\[2\.50\],"jid":"s1","queue":"default","retry":true,"created_at":1795264707\.25,"enqueued_at":\d+\.\d+\}$/,
  );
  const n1 = JSON.parse(defaults.find((j) => j.includes('"jid":"n1"'))!) as {
    args: [{ enqueued_at: number }];
    enqueued_at: number;
  };
  assert.equal(n1.args[0].enqueued_at, 1, "a nested enqueued_at is never touched (the client path handles that job)");
  assert.ok(n1.enqueued_at >= before);
  assert.deepEqual((await handle.redis.smembers("queues")).sort(), ["bulk", "default", "low"]);
});

test("with client middleware configured, due jobs go one by one through the client so the middleware runs", async () => {
  const launcher = testLauncher(handle.url);
  const seen: string[] = [];
  launcher.ctx.client.middleware.add(
    (_name: string, job: { jid: string }, _queue: string, _redis: unknown, next: () => Promise<void>) => {
      seen.push(job.jid);
      return next();
    },
  );
  const poller = new Poller(launcher.ctx);
  const past = String(Date.now() / 1000 - 1);
  await handle.redis.zadd(
    "schedule",
    past,
    '{"class":"A","args":[],"jid":"m1","queue":"default"}',
    past,
    '{"class":"A","args":[],"jid":"m2","queue":"default"}',
  );
  assert.equal(await poller.enqueueDue(), 2);
  assert.deepEqual(seen.sort(), ["m1", "m2"]);
  launcher.ctx.client.middleware.clear();
});

test("sidekiqVersion 8: the batch path writes enqueued_at as integer milliseconds", async () => {
  const launcher = testLauncher(handle.url, [], { sidekiqVersion: 8 });
  await handle.redis.zadd(
    "schedule",
    String(Date.now() / 1000 - 1),
    '{"class":"A","args":[],"jid":"v8","queue":"default"}',
  );
  await new Poller(launcher.ctx).enqueueDue();
  const [job] = await handle.redis.lrange("queue:default", 0, -1);
  assert.match(job!, /"enqueued_at":\d{13}\}$/);
});
