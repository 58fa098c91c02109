/** Heartbeat: the process record, work hash, stats and remote signals, as Sidekiq readers expect them. */
import { test } from "node:test";
import assert from "node:assert/strict";
import { useRedis } from "../helpers/redis.js";
import { testLauncher } from "../helpers/context.js";
import { Client } from "../../src/client/Client.js";

const handle = useRedis();

test("the process record: identity format, info JSON keys, fields, TTL 60 s, stats with 5-year daily keys", async (t) => {
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  class Slow {
    async perform() {
      await gate;
    }
  }
  class Quick {
    perform() {}
  }
  const launcher = testLauncher(handle.url, [Slow, Quick], {
    concurrency: 3,
    queues: [
      { name: "default", weight: 2 },
      { name: "low", weight: 1 },
    ],
    heartbeatInterval: 0.3,
    labels: ["blue"],
  });
  const client = new Client({ redis: handle.url });
  // A failed assertion must not leave the gated job, and so the worker, running until the file times out.
  t.after(async () => {
    release();
    await launcher.stop();
  });
  await client.push({ class: "Quick", args: [] });
  const jid = await client.push({ class: "Slow", args: [] });
  await launcher.start();
  const id = launcher.identity;
  assert.match(id, /^[^:]+:\d+:[0-9a-f]{12}$/);
  const work = await waitFor(async () => {
    const w = await handle.redis.hgetall(`${id}:work`);
    return Object.keys(w).length === 1 ? w : undefined;
  });
  const record = await handle.redis.hgetall(id);
  assert.deepEqual(Object.keys(record).sort(), [
    "abandoned",
    "beat",
    "busy",
    "concurrency",
    "info",
    "quiet",
    "rss",
    "rtt_us",
  ]);
  assert.equal(record.busy, "1");
  assert.equal(record.concurrency, "3");
  assert.equal(record.quiet, "false");
  assert.ok(Number(record.rss) > 10_000, "rss is in KB");
  assert.match(record.beat!, /^\d+\.\d+$/);
  const info = JSON.parse(record.info!) as Record<string, unknown>;
  assert.deepEqual(Object.keys(info).sort(), [
    "capsules",
    "concurrency",
    "embedded",
    "hostname",
    "identity",
    "labels",
    "pid",
    "queues",
    "started_at",
    "tag",
    "version",
    "weights",
  ]);
  assert.deepEqual(info.queues, ["default", "low"]);
  assert.deepEqual(info.weights, [{ default: 2, low: 1 }]);
  assert.deepEqual(info.capsules, { default: { concurrency: 3, mode: "weighted", weights: { default: 2, low: 1 } } });
  assert.equal(info.pid, process.pid);
  assert.equal(info.identity, id);
  assert.deepEqual(info.labels, ["blue"]);
  const ttl = await handle.redis.ttl(id);
  assert.ok(ttl > 55 && ttl <= 60, `ttl ${ttl}`);
  const entry = JSON.parse(Object.values(work)[0]!) as { queue: string; payload: string; run_at: number };
  assert.equal(entry.queue, "default");
  assert.equal(typeof entry.payload, "string", "payload is the job JSON string (double-encoded)");
  assert.equal((JSON.parse(entry.payload) as { jid: string }).jid, jid);
  assert.ok(Number.isInteger(entry.run_at));
  assert.deepEqual(await handle.redis.hgetall(`${id}:workers`), work, "6.4.1's :workers hash matches");
  assert.equal(await handle.redis.sismember("processes", id), 1);
  const today = new Date().toISOString().slice(0, 10);
  await waitFor(async () => (await handle.redis.get("stat:processed")) === "1");
  assert.equal(await handle.redis.get(`stat:processed:${today}`), "1");
  const statTtl = await handle.redis.ttl(`stat:processed:${today}`);
  assert.ok(statTtl > 5 * 365 * 24 * 3600 - 60);

  release();
  await client.close();
  await launcher.stop();
  assert.equal(await handle.redis.sismember("processes", id), 0);
  assert.equal(await handle.redis.exists(`${id}:work`), 0);
  assert.equal(await handle.redis.get("stat:processed"), "2", "stop flushes the last counts");
  assert.equal(await handle.redis.exists(id), 1, "the record is left to expire, as Sidekiq does");
});

test("remote signals: TSTP quiets (quiet=true), TERM stops, as Sidekiq::Process#quiet! and #stop! send them", async () => {
  const launcher = testLauncher(handle.url, [], { heartbeatInterval: 0.2 });
  await launcher.start();
  const id = launcher.identity;
  await handle.redis.multi().lpush(`${id}-signals`, "TSTP").expire(`${id}-signals`, 60).exec();
  await waitFor(async () => (await handle.redis.hget(id, "quiet")) === "true");
  await handle.redis.lpush(`${id}-signals`, "TERM");
  await waitFor(async () => (await handle.redis.sismember("processes", id)) === 0);
});

async function waitFor<T>(check: () => Promise<T | undefined | false>, ms = 10_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await check();
    if (v) return v;
    if (Date.now() > deadline) throw new Error("timed out");
    await new Promise((r) => setTimeout(r, 50));
  }
}
