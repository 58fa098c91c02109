/**
 * The supervisor's running merge (src/metrics/MergedSeries.ts) and the child's change tracking
 * (src/metrics/ChangedSamples.ts), in process; the text is checked with the strict parser.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { ChangedSamples } from "../../src/metrics/ChangedSamples.js";
import type { MetricFamily } from "../../src/metrics/exposition.js";
import { LabelCap, OTHER } from "../../src/metrics/LabelCap.js";
import { MergedSeries } from "../../src/metrics/MergedSeries.js";
import { parseExposition, total } from "./promText.js";

function counter(name: string, values: [Record<string, string>, number][]): MetricFamily {
  return { name, help: "a counter", type: "counter", values: values.map(([labels, value]) => ({ labels, value })) };
}

function gauge(name: string, values: [Record<string, string>, number][], aggregator?: string): MetricFamily {
  const family: MetricFamily = { name, help: "a gauge", type: "gauge", values: [] };
  if (aggregator !== undefined) family.aggregator = aggregator;
  family.values = values.map(([labels, value]) => ({ labels, value }));
  return family;
}

const parsed = (merged: MergedSeries) => parseExposition(merged.render(new Set()));

test("counters sum over children and only grow; a delta overwrites, a repeated one changes nothing", () => {
  const merged = new MergedSeries(new LabelCap(100));
  merged.apply(1, { full: true, families: [counter("c_total", [[{ class: "A" }, 3]])] });
  merged.apply(2, { full: true, families: [counter("c_total", [[{ class: "A" }, 4]])] });
  assert.equal(total(parsed(merged), "c_total", { class: "A" }), 7);
  const delta = { full: false, families: [counter("c_total", [[{ class: "A" }, 5]])] };
  merged.apply(1, delta);
  merged.apply(1, delta);
  assert.equal(total(parsed(merged), "c_total", { class: "A" }), 9);
  // A full snapshot without the series, or a lower value: a counter never goes back.
  merged.apply(2, { full: true, families: [counter("c_total", [[{ class: "A" }, 1]])] });
  merged.apply(1, { full: true, families: [] });
  assert.equal(total(parsed(merged), "c_total", { class: "A" }), 9);
});

test("a dead child's gauges go at once, its counters stay and may still grow; forgotten, they are final", () => {
  const merged = new MergedSeries(new LabelCap(100));
  const families = (n: number) => [counter("c_total", [[{}, n]]), gauge("g", [[{}, n]])];
  merged.apply(1, { full: true, families: families(2) });
  merged.apply(2, { full: true, families: families(3) });
  merged.retire(1);
  let text = parsed(merged);
  assert.equal(total(text, "g"), 3);
  assert.equal(total(text, "c_total"), 5);
  merged.apply(1, { full: false, families: families(4) }, false); // a late snapshot of the dead child
  text = parsed(merged);
  assert.equal(total(text, "g"), 3, "no gauge from a dead child");
  assert.equal(total(text, "c_total"), 7);
  merged.forget(1);
  merged.apply(3, { full: true, families: families(1) }); // its replacement starts from 0
  assert.equal(total(parsed(merged), "c_total"), 8);
});

test("gauges combine by aggregator; a replaced family drops the child's series not sent again", () => {
  const merged = new MergedSeries(new LabelCap(100));
  merged.apply(1, { full: true, families: [gauge("lag", [[{}, 2]], "max"), gauge("res", [[{ type: "Timer" }, 1]])] });
  merged.apply(2, { full: true, families: [gauge("lag", [[{}, 5]], "max")] });
  assert.equal(total(parsed(merged), "lag"), 5);
  merged.apply(1, { full: false, families: [gauge("res", [[{ type: "TCP" }, 2]])], replaced: ["res"] });
  const res = parsed(merged)
    .get("res")!
    .samples.map((s) => [s.labels.type, s.value]);
  assert.deepEqual(res, [["TCP", 2]]);
  merged.apply(2, { full: false, families: [], replaced: ["lag"] }); // the family vanished from child 2
  assert.equal(total(parsed(merged), "lag"), 2);
});

test("class is capped across children: each admits its own, the union keeps the bound and sums the rest", () => {
  const merged = new MergedSeries(new LabelCap(2));
  merged.apply(1, {
    full: true,
    families: [
      counter("f_total", [
        [{ class: "A" }, 1],
        [{ class: "B" }, 1],
      ]),
    ],
  });
  merged.apply(2, {
    full: true,
    families: [
      counter("f_total", [
        [{ class: "C" }, 1],
        [{ class: "D" }, 1],
      ]),
    ],
  });
  const samples = parsed(merged).get("f_total")!.samples;
  assert.deepEqual(samples.map((s) => s.labels.class).sort(), ["A", "B", OTHER]);
  assert.equal(total(parsed(merged), "f_total", { class: OTHER }), 2);
  // The rendered text is reused until a value changes, then rebuilt.
  merged.apply(2, { full: false, families: [counter("f_total", [[{ class: "D" }, 5]])] });
  assert.equal(total(parsed(merged), "f_total", { class: OTHER }), 6);
});

test("ChangedSamples: a sample that vanished sends its family whole, and no other family in full", () => {
  const sent = new ChangedSamples();
  const res = (types: string[]) =>
    gauge(
      "res",
      types.map((type) => [{ type }, 1]),
    );
  sent.all([res(["Timer", "TCP"]), gauge("heap", [[{}, 10]])]);
  const same = sent.changes([res(["Timer", "TCP"]), gauge("heap", [[{}, 10]])]);
  assert.deepEqual(same, { families: [], replaced: [] });
  const one = sent.changes([res(["Timer"]), gauge("heap", [[{}, 11]])]);
  assert.deepEqual(one.replaced, ["res"]);
  assert.deepEqual(
    one.families.map((f) => [f.name, f.values.length]),
    [
      ["res", 1],
      ["heap", 1],
    ],
  );
  assert.deepEqual(sent.changes([gauge("heap", [[{}, 11]])]).replaced, ["res"], "a family gone whole");
});
