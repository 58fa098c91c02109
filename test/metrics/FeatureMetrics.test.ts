/**
 * FeatureMetrics: the metrics seam a worker's JobMetrics gives its plug-ins. A plug-in's counters sit
 * beside the core's (capped labels, sent as deltas), its listeners go when the metrics stop, and the
 * core's job metrics name no feature's counter: a worker without the plug-ins has none of theirs.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { useRedis } from "../helpers/redis.js";
import { testLauncher } from "../helpers/context.js";
import { JobMetrics } from "../../src/metrics/JobMetrics.js";
import { OTHER } from "../../src/metrics/LabelCap.js";
import { builtinPlugins } from "../../src/plugins.js";
import type { Plugin } from "../../src/server/plugin.js";
import type { JobPayload } from "../../src/wire/payload.js";

const handle = useRedis();

const job = (klass: string): JobPayload => ({ class: klass, args: [], jid: `jid-${klass}`, queue: "default" });

/** Counts kill-switch drops on the worker and dropped duplicates on its client into one counter. */
const gate: Plugin = {
  name: "gate",
  metrics(seam) {
    const gated = seam.counter("tsq_test_gated_total", "Jobs the test gate counted.");
    seam.onJob("switched", (job, queue) => gated.get(seam.labels(job, queue)).inc());
    seam.onClient("deduplicated", (job, queue) => gated.get(seam.labels(job, queue)).inc());
  },
};

test("a plug-in's counter counts its events with capped labels, is sent as deltas, and stops listening with the metrics", async () => {
  const launcher = testLauncher(handle.url, [], { plugins: [gate], metricsMaxLabelValues: 2 });
  const { events, client } = launcher.ctx;
  const metrics = new JobMetrics(launcher.ctx);
  await metrics.changes(true);
  events.emit("switched", job("A"), "default", "dropped");
  client.events.emit("deduplicated", job("B"), "default", "holder");
  client.events.emit("deduplicated", job("C"), "default", "holder"); // past the cap of 2 classes
  const counted = (families: Awaited<ReturnType<JobMetrics["snapshot"]>>) =>
    families
      .find((f) => f.name === "tsq_test_gated_total")
      ?.values.map((s) => [s.labels.class, s.value])
      .sort();
  const delta = await metrics.changes(false);
  assert.deepEqual(counted(delta.families), [
    ["A", 1],
    ["B", 1],
    [OTHER, 1],
  ]);
  events.emit("switched", job("A"), "default", "deferred");
  assert.deepEqual(counted((await metrics.changes(false)).families), [["A", 2]], "only the changed series");
  assert.equal(counted((await metrics.changes(false)).families), undefined, "nothing changed: not sent");

  metrics.stop();
  assert.equal(events.listenerCount("switched"), 0);
  assert.equal(client.events.listenerCount("deduplicated"), 0);
  events.emit("switched", job("A"), "default", "dropped");
  assert.deepEqual(counted(await metrics.snapshot()), [
    ["A", 2],
    ["B", 1],
    [OTHER, 1],
  ]);
  metrics.stop(); // idempotent
});

test("feature counters come from the plug-ins, used by a worker's classes or not; without them there are none", async () => {
  const names = async (plugins: Plugin[]) => {
    const launcher = testLauncher(handle.url, [], { plugins });
    const metrics = new JobMetrics(launcher.ctx);
    const families = (await metrics.snapshot()).map((f) => f.name);
    metrics.stop();
    return families;
  };
  const features = [
    "tsq_jobs_deferred_total",
    "tsq_jobs_dropped_total",
    "tsq_jobs_expired_total",
    "tsq_jobs_deduplicated_total",
    "tsq_jobs_parked_total",
    "tsq_jobs_concurrency_limit_refused_total",
    "tsq_limited_jobs_total",
    "tsq_limit_slots_waiting",
    "tsq_jobs_unique_rejected_total",
    "tsq_batch_callbacks_total",
    "tsq_jobs_timed_out_total",
    "tsq_jobs_abandoned_total",
  ];
  // No class here declares a limit, uniqueness or deduplication: those plug-ins give no hooks, but count.
  const all = await names(builtinPlugins());
  for (const name of features) assert.ok(all.includes(name), `${name} with the built-in plug-ins`);
  assert.equal(all.filter((name) => name === "tsq_limited_jobs_total").length, 1, "two plug-ins, one family");
  const none = await names([]);
  assert.deepEqual(
    features.filter((name) => none.includes(name)),
    [],
  );
  assert.ok(none.includes("tsq_jobs_failed_total"), "the core's own stay");
});

test("a counter's name is one family: shared with the same help, refused with another help or a core metric's name", () => {
  const declaring = (name: string, help: string): Plugin => ({
    name: `declares ${name}`,
    metrics: (seam) => void seam.counter(name, help),
  });
  const build = (plugins: Plugin[]) => new JobMetrics(testLauncher(handle.url, [], { plugins }).ctx).stop();
  build([declaring("tsq_test_total", "Help."), declaring("tsq_test_total", "Help.")]);
  assert.throws(
    () => build([declaring("tsq_test_total", "Help."), declaring("tsq_test_total", "Other help.")]),
    /tsq_test_total is declared twice with different help texts/,
  );
  assert.throws(
    () => build([declaring("tsq_jobs_failed_total", "Mine.")]),
    /tsq_jobs_failed_total is one of tsq's own/,
  );
});
