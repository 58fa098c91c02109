/**
 * `tsqctl metrics`: the per-class counts of Sidekiq 7's and 8's metrics keys in one list (each layout
 * flushed by ExecutionTracker as a worker set to it does; the live interop tests add Ruby's own).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { ExecutionTracker } from "../../src/server/ExecutionTracker.js";
import { useRedis } from "../helpers/redis.js";
import { tsqctl } from "../helpers/tsqctl.js";

const redis = useRedis();

test("tsqctl metrics: both layouts' classes, busiest first; --json, --class, --filter, a bad --period", async () => {
  const now = new Date();
  const seven = new ExecutionTracker();
  seven.succeeded("HardJob", 1500);
  seven.failed("HardJob");
  seven.succeeded("Evil\x1b[2J", 5);
  await seven.flush(redis.redis, "sidekiq7", now);
  const eight = new ExecutionTracker();
  eight.succeeded("HardJob", 500);
  eight.succeeded("Mailer", 30);
  await eight.flush(redis.redis, "sidekiq8", now);
  const env = { REDIS_URL: redis.url };

  const table = await tsqctl(["metrics"], env);
  assert.equal(table.exitCode, 0, table.stderr);
  const lines = table.stdout.split("\n");
  assert.match(lines[0]!, /^CLASS\s+PROCESSED\s+FAILED\s+SECONDS\s+AVG MS$/);
  assert.match(lines[1]!, /^HardJob\s+3\s+1\s+2\.00\s+1000\.0$/, "2 s over 2 successful runs, both layouts");
  assert.match(lines[2]!, /^Mailer\s+1\s+0\s+0\.03\s+30\.0$/);
  assert.match(lines[3]!, /^Evil\\x1b\[2J\s+1/, "a class name from Redis cannot drive the terminal");

  const json = await tsqctl(["metrics", "--json", "--filter", "hard"], env);
  assert.deepEqual(JSON.parse(json.stdout), [
    { class: "HardJob", processed: 3, failed: 1, seconds: 2, average_seconds: 1 },
  ]);
  const one = await tsqctl(["metrics", "--json", "--class", "Mailer", "--period", "24h"], env);
  assert.deepEqual(JSON.parse(one.stdout), [
    { class: "Mailer", processed: 1, failed: 0, seconds: 0.03, average_seconds: 0.03 },
  ]);
  const bad = await tsqctl(["metrics", "--period", "3h"], env);
  assert.equal(bad.exitCode, 2);
  assert.match(bad.stderr, /--period must be one of 1h, 2h, 4h, 8h, 24h, 48h, 72h, got "3h"/);
  assert.equal((await tsqctl(["metrics", "--class", "Nobody"], env)).stdout, "no job ran in the last 1h");
});
