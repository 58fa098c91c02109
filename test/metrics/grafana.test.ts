/** The Grafana dashboard and the README's PromQL use only the metric names PRODUCT.md fixes. */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { ROOT } from "../helpers/tsqProcess.js";

/** PRODUCT.md "Metrics": the contract. */
const HISTOGRAMS = ["tsq_jobs_completion_seconds", "tsq_jobs_queue_duration_seconds"];
const CONTRACT = new Set([
  ...HISTOGRAMS.flatMap((h) => [`${h}_bucket`, `${h}_sum`, `${h}_count`]),
  "tsq_jobs_failed_total",
  "tsq_jobs_retried_total",
  "tsq_jobs_dead_total",
  "tsq_jobs_failure_unrecorded_total",
  "tsq_jobs_deferred_total",
  "tsq_jobs_dropped_total",
  "tsq_jobs_expired_total",
  "tsq_jobs_deduplicated_total",
  "tsq_jobs_parked_total",
  "tsq_jobs_concurrency_limit_refused_total",
  "tsq_concurrency_limit_parked_jobs",
  "tsq_concurrency_limit_running_jobs",
  "tsq_concurrency_limit",
  "tsq_jobs_unique_rejected_total",
  "tsq_batch_callbacks_total",
  "tsq_limited_jobs_total",
  "tsq_limit_waiting",
  "tsq_limit_slots_waiting",
  "tsq_overrated",
  "tsq_durable_waiting",
  "tsq_durable_sleeping",
  "tsq_running_jobs",
  "tsq_push_buffered_jobs",
  "tsq_queue_size",
  "tsq_queue_latency_seconds",
  "tsq_queue_paused",
  "tsq_scheduled_size",
  "tsq_retry_size",
  "tsq_dead_size",
  "tsq_processes",
  "tsq_cluster_children",
  "tsq_cluster_child_restarts_total",
  "tsq_child_resident_memory_bytes",
  "tsq_concurrency",
]);

interface Panel {
  type: string;
  title: string;
  targets?: { expr: string }[];
}

function unknownNames(text: string): string[] {
  return [...new Set(text.match(/\btsq_[a-z_]+/g) ?? [])].filter((name) => !CONTRACT.has(name));
}

test("config/grafana/tsq.json is a dashboard whose every query uses contract metric names", () => {
  const dashboard = JSON.parse(readFileSync(join(ROOT, "config/grafana/tsq.json"), "utf8")) as {
    uid: string;
    panels: Panel[];
  };
  assert.ok(dashboard.uid);
  const queries = dashboard.panels.filter((p) => p.type !== "row");
  assert.ok(queries.length >= 10);
  for (const panel of queries) {
    assert.ok(
      panel.targets && panel.targets.length > 0 && panel.targets.every((t) => t.expr.trim() !== ""),
      `panel ${panel.title} has a query`,
    );
    assert.deepEqual(unknownNames(panel.targets.map((t) => t.expr).join("\n")), [], `panel ${panel.title}`);
  }
  const used = new Set(queries.flatMap((p) => p.targets!.flatMap((t) => t.expr.match(/\btsq_[a-z_]+/g) ?? [])));
  for (const name of [
    "tsq_jobs_completion_seconds_bucket",
    "tsq_jobs_failed_total",
    "tsq_queue_latency_seconds",
    "tsq_cluster_child_restarts_total",
  ]) {
    assert.ok(used.has(name), `the dashboard shows ${name}`);
  }
});

test("docs/metrics.md names only contract metrics and has the four PromQL examples", () => {
  const section = readFileSync(join(ROOT, "docs/metrics.md"), "utf8");
  const names = unknownNames(section).filter((n) => !HISTOGRAMS.includes(n));
  assert.deepEqual(names, []);
  for (const example of [
    "rate(tsq_jobs_completion_seconds_count",
    "tsq_jobs_failed_total[5m]",
    "histogram_quantile(0.95",
    "tsq_queue_latency_seconds)",
  ]) {
    assert.ok(section.includes(example), `docs/metrics.md shows ${example}`);
  }
});
