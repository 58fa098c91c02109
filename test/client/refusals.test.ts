/**
 * Refusals by a plug-in's write (src/client/refusals.ts): the core knows only PushRefusedError, yet the
 * refusals of several shards merge into one error of the feature's own class, naming every refused job.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { nullRefused, oneFailure } from "../../src/client/refusals.js";
import { EnqueueError, PushRefusedError } from "../../src/wire/errors.js";
import { ConcurrencyLimitFullError } from "../../src/features/locks/gitlab-concurrency-limits/errors.js";

test("two shards' refusals merge into one of the feature's class, with every jid and both messages", () => {
  const merged = oneFailure([
    new ConcurrencyLimitFullError("A: 2 jobs are already parked", ["a1"]),
    new ConcurrencyLimitFullError("B: 3 jobs are already parked", ["b1", "b2"]),
  ]);
  assert.ok(merged instanceof ConcurrencyLimitFullError, `kept its class: ${String(merged)}`);
  assert.ok(merged instanceof PushRefusedError);
  assert.equal(merged.name, "ConcurrencyLimitFullError");
  assert.deepEqual(merged.jids, ["a1", "b1", "b2"]);
  assert.equal(merged.message, "A: 2 jobs are already parked; B: 3 jobs are already parked");
});

test("any other failure wins over a refusal; one refusal is itself; none is undefined", () => {
  const other = new EnqueueError("OOM");
  const full = new ConcurrencyLimitFullError("full", ["x"]);
  assert.equal(oneFailure([full, other]), other);
  assert.equal(oneFailure([full]), full);
  assert.equal(oneFailure([]), undefined);
});

test("nullRefused nulls the refused jobs' results only", () => {
  const results: (string | null)[] = ["a", "b", null, "c"];
  nullRefused(results, new ConcurrencyLimitFullError("full", ["b", "c"]));
  assert.deepEqual(results, ["a", null, null, null]);
});
