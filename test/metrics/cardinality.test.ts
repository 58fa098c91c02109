/**
 * Label cardinality (issue 26): `class` and `queue` come from payloads and Redis, so their distinct
 * values are capped (LabelCap, metrics_max_label_values) with the rest under "other", and a child's
 * snapshots after the first hold only what changed. A real in-process Launcher against the private
 * Redis works 30,000 raw jobs of distinct unknown classes.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { useRedis } from "../helpers/redis.js";
import { testLauncher } from "../helpers/context.js";
import { scratchDir } from "../helpers/fixtures.js";
import { JobMetrics } from "../../src/metrics/JobMetrics.js";
import { LabelCap, OTHER, type CapLogger } from "../../src/metrics/LabelCap.js";
import { renderFamilies, type MetricFamily } from "../../src/metrics/exposition.js";
import { loadConfig } from "../../src/platform/config/loadConfig.js";
import { RedisGauges } from "../../src/metrics/RedisGauges.js";
import { parseExposition, total } from "./promText.js";

const handle = useRedis();
const CLASSES = 30_000;
/** Backslash, quote and newline: each must reach the text escaped, and parse back whole. */
const HOSTILE = 'Evil"} 1\ntsq_fake{x="\\';

/** Every warn() call, as given: what an operator's log would show. */
class WarnLines implements CapLogger {
  readonly lines: { fields: Record<string, unknown>; message: string }[] = [];
  warn(fields: Record<string, unknown>, message: string): void {
    this.lines.push({ fields, message });
  }
}

async function until(check: () => Promise<boolean> | boolean, ms: number, what: string): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

function samples(families: MetricFamily[]): number {
  return families.reduce((n, f) => n + f.values.length, 0);
}

test("metrics_max_label_values is checked: 1 to 10,000, whole numbers, with a message naming the setting", () => {
  const dir = scratchDir("tsq-cap-cfg");
  for (const bad of ["0", "10001", "2.5", "lots"]) {
    const file = join(dir, "tsq.yml");
    writeFileSync(file, `metrics_max_label_values: ${bad}\n`);
    assert.throws(() => loadConfig(file, "development"), /metrics_max_label_values.*an integer from 1 to 10000/s, bad);
  }
  writeFileSync(join(dir, "ok.yml"), "metrics_max_label_values: 10000\n");
  assert.equal(loadConfig(join(dir, "ok.yml"), "development").metricsMaxLabelValues, 10_000);
  assert.throws(() => new LabelCap(0), /metrics_max_label_values must be an integer from 1 to 10000, got 0/);
});

test("30,000 distinct raw classes: at most cap + 1 class values, 'other' holds the rest, logged once; idle deltas are tiny", async () => {
  const cap = 200;
  const launcher = testLauncher(handle.url, [], { concurrency: 25, metricsMaxLabelValues: cap });
  const warnings = new WarnLines();
  const metrics = new JobMetrics({ ...launcher.ctx, logger: warnings });
  // Oldest first: the hostile name is the first class any worker sees, so it is admitted.
  const now = Date.now() / 1000;
  for (let i = 0; i < CLASSES; i += 1000) {
    const jobs = [];
    for (let j = i; j < Math.min(CLASSES, i + 1000); j++) {
      const klass = j === 0 ? HOSTILE : `Unknown${j}`;
      jobs.push(
        JSON.stringify({
          class: klass,
          args: [],
          jid: `${j}`.padStart(24, "0"),
          queue: "default",
          retry: false,
          enqueued_at: now,
        }),
      );
    }
    await handle.redis.lpush("queue:default", ...jobs);
  }
  await handle.redis.sadd("queues", "default");
  await metrics.changes(true); // the child's first, full snapshot
  await launcher.start();
  await until(async () => Number(await handle.redis.get("stat:failed")) === CLASSES, 300_000, "every job to fail");
  await until(() => launcher.ctx.state.work.size === 0, 10_000, "the last job to end");

  const text = renderFamilies(await metrics.snapshot());
  const families = parseExposition(text); // strict: a broken escape fails here
  const failed = families.get("tsq_jobs_failed_total")!;
  const classes = new Set(failed.samples.map((s) => s.labels.class));
  assert.ok(classes.size <= cap + 1, `${classes.size} class values for a cap of ${cap}`);
  assert.ok(classes.has(OTHER) && classes.has(HOSTILE), "the overflow bucket and the first (hostile) class");
  assert.equal(total(families, "tsq_jobs_failed_total"), CLASSES, "no failure lost to the cap");
  assert.equal(total(families, "tsq_jobs_failed_total", { class: OTHER }), CLASSES - cap);
  assert.equal(
    total(families, "tsq_jobs_completion_seconds_count", { class: OTHER, job_status: "fail" }),
    CLASSES - cap,
  );
  assert.ok(text.length < 2_000_000, `${text.length} bytes of exposition`);
  const capWarnings = warnings.lines.filter((l) => l.fields.label === "class");
  assert.equal(capWarnings.length, 1, "the fold is logged once per label");
  assert.match(capWarnings[0]!.message, /more than 200 distinct values.*metrics_max_label_values/);

  // Idle: nothing ran since the last snapshot, so no job series is sent, whatever their number.
  await metrics.changes(false);
  const idle = await metrics.changes(false);
  assert.equal(idle.full, false);
  const jobSeries = idle.families.filter((f) => f.name.startsWith("tsq_jobs_"));
  assert.deepEqual(
    jobSeries.map((f) => f.name),
    [],
    "no job series in an idle delta",
  );
  assert.ok(samples(idle.families) < 60, `an idle delta of ${samples(idle.families)} samples`);

  // One more job: the delta holds that one class's series, not the 30,000.
  await handle.redis.lpush(
    "queue:default",
    JSON.stringify({
      class: "Unknown5",
      args: [],
      jid: "f".repeat(24),
      queue: "default",
      retry: false,
      enqueued_at: now,
    }),
  );
  await until(async () => Number(await handle.redis.get("stat:failed")) === CLASSES + 1, 30_000, "the extra job");
  await until(() => launcher.ctx.state.work.size === 0, 10_000, "the extra job to end");
  const one = await metrics.changes(false);
  // Values are totals, not increments: Unknown5 has now failed twice.
  const failedDelta = one.families.find((f) => f.name === "tsq_jobs_failed_total");
  assert.deepEqual(
    failedDelta?.values.map((s) => [s.labels.class, s.value]),
    [["Unknown5", 2]],
  );
  await launcher.stop();
  metrics.stop();
});

test("Redis-side queue gauges are capped: 'other' sums sizes and keeps the longest latency", async () => {
  const now = Date.now() / 1000;
  for (let i = 0; i < 30; i++) {
    const queue = `q${String(i).padStart(2, "0")}`;
    await handle.redis.sadd("queues", queue);
    const job = JSON.stringify({ class: "X", args: [], jid: `${i}`.padStart(24, "0"), queue, enqueued_at: now - i });
    await handle.redis.lpush(`queue:${queue}`, job, job);
  }
  const warnings = new WarnLines();
  const cap = new LabelCap(10, warnings).prefer("queue", ["q29"]);
  const families = await new RedisGauges(handle.redis, [], cap).read(10_000);
  const sizes = families.find((f) => f.name === "tsq_queue_size")!.values;
  const byQueue = new Map(sizes.map((s) => [s.labels.queue, s.value]));
  assert.equal(byQueue.size, 11, "10 queues and other");
  assert.equal(byQueue.get("q29"), 2, "a configured queue is never folded");
  assert.equal(byQueue.get(OTHER), 2 * 20, "the 20 folded queues' sizes, summed");
  const latency = families.find((f) => f.name === "tsq_queue_latency_seconds")!.values;
  const other = latency.find((s) => s.labels.queue === OTHER)!.value!;
  // q28 is the oldest folded queue (q29 is kept): its wait, not a sum of waits.
  assert.ok(other >= 28 && other < 28 + 60, `other's latency ${other} s`);
  assert.equal(warnings.lines.length, 1);
});
