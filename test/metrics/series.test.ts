/** The per-job counters and histograms: Prometheus semantics, in prom-client's JSON shape. */
import { test } from "node:test";
import assert from "node:assert/strict";
import { CounterFamily, HistogramFamily } from "../../src/metrics/series.js";

test("histogram buckets are cumulative and `le` inclusive, with +Inf, _sum and _count per label set", () => {
  const family = new HistogramFamily("h_seconds", "help", [0.1, 1]);
  const a = family.get({ queue: "a" });
  for (const v of [0.05, 0.1, 0.5, 1, 7]) a.observe(v);
  assert.equal(family.get({ queue: "a" }), a, "a label set is one series");
  family.get({ queue: "b" }).observe(2);
  const { type, aggregator, values } = family.family();
  assert.equal(type, "histogram");
  assert.equal(aggregator, "sum");
  const of = (queue: string) =>
    values.filter((s) => s.labels.queue === queue).map((s) => [s.metricName, s.labels.le ?? null, s.value]);
  assert.deepEqual(of("a"), [
    ["h_seconds_bucket", 0.1, 2],
    ["h_seconds_bucket", 1, 4],
    ["h_seconds_bucket", "+Inf", 5],
    ["h_seconds_sum", null, 8.65],
    ["h_seconds_count", null, 5],
  ]);
  assert.deepEqual(of("b"), [
    ["h_seconds_bucket", 0.1, 0],
    ["h_seconds_bucket", 1, 0],
    ["h_seconds_bucket", "+Inf", 1],
    ["h_seconds_sum", null, 2],
    ["h_seconds_count", null, 1],
  ]);
});

test("counters: one series per label set, absent until first incremented", () => {
  const family = new CounterFamily("c_total", "help");
  assert.deepEqual(family.family().values, []);
  const x = family.get({ queue: "q", class: "X" });
  x.inc();
  x.inc();
  family.get({ queue: "q", class: "X" }).inc();
  assert.deepEqual(family.family().values, [{ value: 3, labels: { queue: "q", class: "X" } }]);
  assert.equal(family.family().type, "counter");
});
