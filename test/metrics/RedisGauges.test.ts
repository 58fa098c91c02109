/**
 * RedisGauges: queue sizes and latencies and set sizes, read in two pipelined round trips, and beside
 * them the gauges the plug-ins declare, under the same wait.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { useRedis } from "../helpers/redis.js";
import { RedisGauges } from "../../src/metrics/RedisGauges.js";
import { renderFamilies } from "../../src/metrics/exposition.js";
import { connect } from "../../src/platform/redis/connection.js";
import { parseExposition, total } from "./promText.js";
import { withinDeadline } from "../helpers/timing.js";
import { builtinPlugins } from "../../src/plugins.js";
import { LabelCap, OTHER } from "../../src/metrics/LabelCap.js";
import { KEYED_WAITING, LIMITS, STAT_OVERRATED, limitParkedKey } from "../../src/wire/keys.js";
import type { PluginMetrics } from "../../src/server/hooks.js";

const handle = useRedis();

test("sizes and latencies match Redis; the oldest job's enqueued_at counts, in seconds or milliseconds", async () => {
  const now = Date.now();
  const r = handle.redis;
  await r.sadd("queues", "seconds", "millis", "empty", "odd");
  // LPUSH adds on the left, so the first pushed is the oldest (LINDEX -1).
  await r.lpush("queue:seconds", JSON.stringify({ class: "A", args: [], jid: "1", enqueued_at: now / 1000 - 30.5 }));
  await r.lpush("queue:seconds", JSON.stringify({ class: "A", args: [], jid: "2", enqueued_at: now / 1000 - 1.5 }));
  await r.lpush("queue:millis", JSON.stringify({ class: "A", args: [], jid: "3", enqueued_at: now - 12_000 }));
  await r.lpush("queue:odd", "not json");
  await r.zadd("schedule", 1, "a", 2, "b");
  await r.zadd("retry", 1, "c");
  await r.zadd("dead", 1, "d", 2, "e", 3, "f");
  await r.sadd("processes", "host:1:abc", "host:2:def");
  await r.sadd("paused", "millis"); // as tsqctl pause or Sidekiq Pro's Queue#pause! write it

  const families = parseExposition(renderFamilies(await new RedisGauges(r, []).read(1000)));
  assert.equal(total(families, "tsq_queue_size", { queue: "seconds" }), 2);
  assert.equal(total(families, "tsq_queue_size", { queue: "millis" }), 1);
  assert.equal(total(families, "tsq_queue_size", { queue: "empty" }), 0);
  const latency = (queue: string) => total(families, "tsq_queue_latency_seconds", { queue });
  assert.ok(latency("seconds") >= 30.5 && latency("seconds") < 35, `seconds: ${latency("seconds")}`);
  assert.ok(latency("millis") >= 12 && latency("millis") < 16, `millis: ${latency("millis")}`);
  assert.equal(latency("empty"), 0);
  assert.equal(latency("odd"), 0, "a job that is not JSON says nothing about waiting");
  assert.equal(total(families, "tsq_scheduled_size"), 2);
  assert.equal(total(families, "tsq_retry_size"), 1);
  assert.equal(total(families, "tsq_dead_size"), 3);
  assert.equal(total(families, "tsq_processes"), 2);
  assert.equal(total(families, "tsq_queue_paused", { queue: "millis" }), 1);
  assert.equal(total(families, "tsq_queue_paused", { queue: "seconds" }), 0);
});

test("Redis unreachable: no gauges, within the timeout, and one read in flight however many scrapes", async () => {
  const redis = connect("redis://127.0.0.1:1/0", { name: "tsq-test-down" });
  try {
    let pipelines = 0;
    const pipeline = redis.pipeline.bind(redis);
    redis.pipeline = (...args: Parameters<typeof pipeline>) => {
      pipelines++;
      return pipeline(...args);
    };
    const gauges = new RedisGauges(redis, [{ name: "slow", gauges: () => new Promise(() => {}) }]);
    const started = performance.now();
    const results = await Promise.all([gauges.read(300), gauges.read(300), gauges.read(300)]);
    const ms = performance.now() - started;
    assert.deepEqual(results, [[], [], []]);
    withinDeadline(ms, 300, "three reads that wait 300 ms for a Redis that never answers");
    assert.equal(pipelines, 1, "one pipeline waits for Redis, not one per scrape");
  } finally {
    redis.disconnect();
  }
});

test("each plug-in's gauges are read beside the core's: the built-in features' from their own keys", async () => {
  const r = handle.redis;
  await r.hset(LIMITS, "Limited", "2");
  await r.rpush(limitParkedKey("Limited"), "{}", "{}", "{}");
  await r.hset(KEYED_WAITING, "Keyed", "4");
  await r.set(STAT_OVERRATED, "7");
  const families = parseExposition(renderFamilies(await new RedisGauges(r, builtinPlugins()).read(1000)));
  assert.equal(total(families, "tsq_concurrency_limit", { class: "Limited" }), 2);
  assert.equal(total(families, "tsq_concurrency_limit_parked_jobs", { class: "Limited" }), 3);
  assert.equal(total(families, "tsq_limit_waiting", { class: "Keyed" }), 4);
  assert.equal(total(families, "tsq_overrated"), 7);
  assert.equal(total(families, "tsq_durable_waiting"), 0);
  assert.ok(families.get("tsq_processes"), "the core's beside them");
  // Without the plug-ins, none of theirs: the core names no feature's gauge.
  const core = parseExposition(renderFamilies(await new RedisGauges(r, []).read(1000)));
  for (const name of ["tsq_concurrency_limit", "tsq_limit_waiting", "tsq_overrated", "tsq_durable_waiting"])
    assert.equal(core.get(name), undefined, name);
});

test("a plug-in's gauges are capped with the core's, and a plug-in whose read fails takes the scrape's gauges with it", async () => {
  const many: PluginMetrics = {
    name: "many",
    gauges: async () => [
      {
        name: "tsq_test_gauge",
        help: "A test gauge.",
        values: ["A", "B", "C"].map((klass) => ({ value: 1, labels: { class: klass } })),
      },
    ],
  };
  const cap = new LabelCap(2);
  const families = parseExposition(renderFamilies(await new RedisGauges(handle.redis, [many], cap).read(1000)));
  assert.deepEqual(
    families.get("tsq_test_gauge")!.samples.map((s) => [s.labels.class, s.value]),
    [
      ["A", 1],
      ["B", 1],
      [OTHER, 1],
    ],
  );
  const failing: PluginMetrics = { name: "failing", gauges: () => Promise.reject(new Error("no")) };
  assert.deepEqual(await new RedisGauges(handle.redis, [many, failing]).read(1000), []);
});
