/** Poller: due jobs move from retry and schedule to their queues; dead processes are pruned. */
import { test } from "node:test";
import assert from "node:assert/strict";
import { useRedis } from "../helpers/redis.js";
import { testLauncher } from "../helpers/context.js";
import { Poller } from "../../src/server/Poller.js";
import { Client } from "../../src/client/Client.js";

const handle = useRedis();

test("enqueueDue moves due retry and schedule entries to their queues through the client, leaving future ones", async () => {
  const launcher = testLauncher(handle.url);
  const poller = new Poller(launcher.ctx);
  const now = Date.now() / 1000;
  const due = { class: "A", args: [1], jid: "a".repeat(24), queue: "low", retry: true, created_at: now - 10, retry_count: 0, error_class: "E" };
  await handle.redis.zadd("retry", String(now - 1), JSON.stringify(due));
  await handle.redis.zadd("schedule", String(now - 1), JSON.stringify({ ...due, jid: "b".repeat(24), queue: "default" }));
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
