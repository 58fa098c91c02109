/** Merging and rendering metric families (src/metrics/exposition.ts), checked with the strict parser. */
import { test } from "node:test";
import assert from "node:assert/strict";
import { Counter, Histogram, Registry, collectDefaultMetrics } from "prom-client";
import {
  familiesOf,
  mergeFamilies,
  monotonicOnly,
  renderFamilies,
  type MetricFamily,
} from "../../src/metrics/exposition.js";
import { allSeries, parseExposition, total } from "./promText.js";

function counter(name: string, value: number, labels: Record<string, string> = {}): MetricFamily {
  return { name, help: "a counter", type: "counter", values: [{ value, labels }] };
}

function gauge(name: string, value: number, labels: Record<string, string> = {}, aggregator?: string): MetricFamily {
  return { name, help: "a gauge", type: "gauge", ...(aggregator ? { aggregator } : {}), values: [{ value, labels }] };
}

/** A registry as a cluster child builds one: a labelled histogram, a counter and Node's default metrics. */
async function childFamilies(child: string, jobs: number): Promise<MetricFamily[]> {
  const registry = new Registry();
  const h = new Histogram({
    name: "tsq_jobs_completion_seconds",
    help: "h",
    labelNames: ["queue", "class", "job_status"],
    buckets: [0.1, 1],
    registers: [registry],
  });
  const c = new Counter({
    name: "tsq_jobs_failed_total",
    help: "c",
    labelNames: ["queue", "class"],
    registers: [registry],
  });
  for (let i = 0; i < jobs; i++) h.observe({ queue: "default", class: "A", job_status: "done" }, i / 10);
  c.inc({ queue: "default", class: "A" }, jobs);
  collectDefaultMetrics({ register: registry, labels: { child } });
  // As it crosses IPC: JSON turns NaN into null.
  return JSON.parse(JSON.stringify(await familiesOf(registry))) as MetricFamily[];
}

test("series with the same name and labels are summed; other label sets stay apart", () => {
  const merged = mergeFamilies([
    [counter("x_total", 2, { q: "a" })],
    [counter("x_total", 3, { q: "a" }), counter("x_total", 1, { q: "b" })],
  ]);
  assert.equal(merged.length, 1);
  assert.deepEqual(
    merged[0]!.values.map((v) => [v.labels.q, v.value]),
    [
      ["a", 5],
      ["b", 1],
    ],
  );
});

test("gauges follow prom-client's aggregator; omit (process start time) becomes max", () => {
  const values = (aggregator: string | undefined) =>
    mergeFamilies([[gauge("g", 2, {}, aggregator)], [gauge("g", 6, {}, aggregator)]])[0]!.values[0]!.value;
  assert.equal(values(undefined), 8);
  assert.equal(values("average"), 4);
  assert.equal(values("min"), 2);
  assert.equal(values("max"), 6);
  assert.equal(values("omit"), 6);
  assert.equal(values("first"), 2);
});

test("a dead child's counters are kept and its replacement's are added: nothing goes backwards", () => {
  const dead = [counter("jobs_total", 500), gauge("running", 4)];
  const retired = mergeFamilies([[], monotonicOnly(dead)]);
  const replacement = [counter("jobs_total", 1), gauge("running", 1)];
  const after = mergeFamilies([retired, replacement]);
  const byName = new Map(after.map((f) => [f.name, f.values[0]!.value]));
  assert.equal(byName.get("jobs_total"), 501);
  assert.equal(byName.get("running"), 1, "a dead child's gauges are dropped, not added");
});

test("two children's real registries merge into output the strict parser accepts", async () => {
  const [a, b] = await Promise.all([childFamilies("0", 3), childFamilies("1", 4)]);
  const own = await familiesOf(
    (() => {
      const r = new Registry();
      collectDefaultMetrics({ register: r });
      return r;
    })(),
  );
  const text = renderFamilies(mergeFamilies([own, a, b]));
  const families = parseExposition(text);
  assert.equal(total(families, "tsq_jobs_completion_seconds_count"), 7);
  assert.equal(total(families, "tsq_jobs_failed_total"), 7);
  assert.equal(total(families, "tsq_jobs_completion_seconds_bucket", { le: "+Inf" }), 7);
  // Node's process metrics: one series for the supervisor (no label) and one per child.
  const cpu = [...allSeries(families).values()].filter((s) => s.name === "process_cpu_seconds_total");
  assert.deepEqual(cpu.map((s) => s.labels.child ?? "-").sort(), ["-", "0", "1"]);
});

test("label values and help text are escaped", () => {
  const family: MetricFamily = {
    name: "odd_total",
    help: 'back\\slash and\nnewline "quoted"',
    type: "counter",
    values: [{ value: 1, labels: { class: 'Weird"Class\\With\nNewline' } }],
  };
  const text = renderFamilies([family]);
  const parsed = parseExposition(text);
  assert.equal(parsed.get("odd_total")!.help, 'back\\slash and\nnewline "quoted"');
  assert.equal(parsed.get("odd_total")!.samples[0]!.labels.class, 'Weird"Class\\With\nNewline');
});

test("the parser rejects what Prometheus would", () => {
  const bad: [string, string][] = [
    ["# HELP a_total x\n# TYPE a_total counter\na_total 1\na_total 2\n", "duplicate series"],
    ["a 1\n", "without a TYPE"],
    ["# HELP a x\n# TYPE a gauge\na 1\n# HELP b x\n# TYPE b gauge\nb 1\na 2\n", "outside"],
    ["# HELP a x\n# TYPE a gauge\na 1\n# HELP b x\n# TYPE b gauge\nb 1\n# HELP a y\n", "after the family's samples"],
    ['# HELP a x\n# TYPE a gauge\na{q="\\t"} 1\n', "bad escape"],
    ["# HELP a x\n# TYPE a counter\na 1\n", "_total"],
    ["# HELP a x\n# TYPE a gauge\na one\n", "bad value"],
    ['# HELP h x\n# TYPE h histogram\nh_bucket{le="1"} 2\nh_bucket{le="+Inf"} 3\nh_sum 1\nh_count 4\n', "_count"],
    ['# HELP h x\n# TYPE h histogram\nh_bucket{le="1"} 3\nh_bucket{le="+Inf"} 2\nh_sum 1\nh_count 2\n', "cumulative"],
    ["# HELP a x\n# TYPE a gauge\na 1", "newline"],
  ];
  for (const [text, message] of bad) assert.throws(() => parseExposition(text), new RegExp(message), text);
});

test("MonotonicGuard: counter and histogram series never go below what was last served; gauges may", async () => {
  const { MonotonicGuard } = await import("../../src/metrics/exposition.js");
  const guard = new MonotonicGuard();
  const scrape = (sum: number, gauge: number) => [
    {
      name: "h",
      help: "h",
      type: "histogram" as const,
      values: [{ metricName: "h_sum", labels: { q: "a" }, value: sum }],
    },
    { name: "g", help: "g", type: "gauge" as const, values: [{ labels: {}, value: gauge }] },
  ];
  guard.apply(scrape(1.1922654419999996, 5));
  const second = guard.apply(scrape(1.1922654419999994, 3));
  assert.equal(second[0]!.values[0]!.value, 1.1922654419999996, "a float sum one ulp lower is held");
  assert.equal(second[1]!.values[0]!.value, 3, "gauges go down freely");
  assert.equal(guard.apply(scrape(2, 1))[0]!.values[0]!.value, 2);
});
