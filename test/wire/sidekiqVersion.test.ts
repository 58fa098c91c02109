/**
 * The formats a Sidekiq generation reads, and a fleet's versions read from process records' `info`
 * (src/wire/sidekiqVersion.ts).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  WITHOUT_RUBY,
  fleetFormats,
  formatsOf,
  initialFormats,
  majorOf,
  rubySidekiqVersionOf,
} from "../../src/wire/sidekiqVersion.js";

test("fixed versions: 6 and 7 write seconds, 8 milliseconds; 7 writes Sidekiq 7's metrics keys, 6 and 8 Sidekiq 8's", () => {
  assert.deepEqual(formatsOf(6), { timestamps: "seconds", metrics: "sidekiq8" });
  assert.deepEqual(formatsOf(7), { timestamps: "seconds", metrics: "sidekiq7" });
  assert.deepEqual(formatsOf(8), { timestamps: "milliseconds", metrics: "sidekiq8" });
  assert.equal(initialFormats("auto"), WITHOUT_RUBY, "auto starts as if no Ruby process were there");
  assert.deepEqual(WITHOUT_RUBY, { timestamps: "seconds", metrics: "sidekiq8" }, "the default before auto");
});

test("a fleet: milliseconds only when every Ruby process is 8+, Sidekiq 7's keys when a 7 is there", () => {
  assert.equal(fleetFormats([]), WITHOUT_RUBY);
  assert.deepEqual(fleetFormats([8, 8]), formatsOf(8));
  assert.deepEqual(fleetFormats([7]), formatsOf(7));
  assert.deepEqual(fleetFormats([7, 8]), formatsOf(7), "a rolling upgrade: the older readers win");
  assert.deepEqual(fleetFormats([6]), { timestamps: "seconds", metrics: "sidekiq8" }, "6 has no Metrics tab");
  assert.deepEqual(fleetFormats([6, 8]), { timestamps: "seconds", metrics: "sidekiq8" }, "6 cannot read ms");
  assert.deepEqual(fleetFormats([6, 7, 8]), formatsOf(7));
  assert.deepEqual(fleetFormats([9]), formatsOf(8), "a later major is taken for 8's formats");
});

test("versions from info JSON: Sidekiq's own, 6.x's missing one, tsq's and hostile text ignored", () => {
  assert.equal(rubySidekiqVersionOf('{"hostname":"web","version":"7.3.10","pid":1}'), "7.3.10");
  assert.equal(rubySidekiqVersionOf('{"version":"8.0.10"}'), "8.0.10");
  assert.equal(rubySidekiqVersionOf('{"version":"8.1.0.beta1"}'), "8.1.0.beta1");
  assert.equal(rubySidekiqVersionOf('{"hostname":"web","pid":1,"queues":["a"]}'), "6.x", "6.x publishes none");
  for (const info of [
    '{"version":"tsq 0.9.0"}',
    '{"version":7}',
    '{"version":"__proto__"}',
    `{"version":"7.3.${"9".repeat(5000)}"}`,
    '{"version":"7.3.10\\u001b[31m"}',
    "not json",
    "[]",
    "null",
    '"7.3.10"',
  ])
    assert.equal(rubySidekiqVersionOf(info), undefined, info.slice(0, 40));
  assert.equal(majorOf("7.3.10"), 7);
  assert.equal(majorOf("6.x"), 6);
  assert.equal(majorOf("10.0.1"), 10);
});
