/**
 * ExecutionMetrics reads Sidekiq 7's and 8's layouts as one: the counters and histograms a Ruby 7
 * process, a Ruby 8 process and tsq workers set either way write (flushed here by ExecutionTracker in
 * each layout, as a worker does), summed per class, minute by minute and in the 10-minute view.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { ExecutionMetrics } from "../../../src/admin/api/index.js";
import { ExecutionTracker } from "../../../src/server/ExecutionTracker.js";
import { EXECUTION_LAYOUTS } from "../../../src/wire/executionLayout.js";
import { useRedis } from "../../helpers/redis.js";

const handle = useRedis();

/** Runs of `className` (ms each; a negative one is a failure) flushed in `layout` at `at`. */
async function flushRuns(layout: "sidekiq7" | "sidekiq8", at: Date, className: string, runs: number[]): Promise<void> {
  const tracker = new ExecutionTracker();
  for (const ms of runs) {
    if (ms < 0) tracker.failed(className);
    else tracker.succeeded(className, ms);
  }
  await tracker.flush(handle.redis, layout, at);
}

test("top and forClass sum both layouts per minute; histograms of both are added bucket by bucket", async () => {
  const now = new Date();
  const minuteAgo = new Date(now.getTime() - 60_000);
  await flushRuns("sidekiq7", now, "HardJob", [10, 10, 300, -1]);
  await flushRuns("sidekiq8", now, "HardJob", [10, 40]);
  await flushRuns("sidekiq7", minuteAgo, "Mailer", [5]);
  await flushRuns("sidekiq8", minuteAgo, "Mailer", [-1]);
  const metrics = new ExecutionMetrics(handle.redis);
  const top = await metrics.top("1h", "", now);
  const hard = top.classes.get("HardJob")!;
  assert.deepEqual([hard.p, hard.f, hard.ms], [6, 1, 370]);
  assert.deepEqual([hard.series.p.at(-1), hard.series.p.at(-2)], [6, 0], "this minute's bucket");
  const mailer = top.classes.get("Mailer")!;
  assert.deepEqual([mailer.p, mailer.f, mailer.series.p.at(-2)], [2, 1, 2], "the minute before, both layouts");
  assert.deepEqual([...(await metrics.top("1h", "mail", now)).classes.keys()], ["Mailer"]);

  const one = (await metrics.forClass("HardJob", "1h", now)).classes.get("HardJob")!;
  assert.deepEqual([one.p, one.f, one.ms], [6, 1, 370]);
  const newest = one.histograms!.at(-1)!;
  assert.deepEqual([newest[0], newest[2], newest[7]], [3, 1, 1], "<20 ms: 2 + 1; <45 ms: 1; <335 ms: 1");
  assert.equal(
    newest.reduce((a, b) => a + b, 0),
    5,
    "every successful run once",
  );

  // A key of another type under a histogram's name (Sidekiq 7's have no prefix) reads as an empty one.
  await handle.redis.rpush(EXECUTION_LAYOUTS.sidekiq7.histogramKey("Listy", now), "not a histogram");
  await flushRuns("sidekiq8", now, "Listy", [10]);
  const listy = (await metrics.forClass("Listy", "1h", now)).classes.get("Listy")!;
  assert.deepEqual([listy.p, listy.histograms!.at(-1)![0]], [1, 1]);
});

test("24h to 72h: Sidekiq 8's 10-minute rollups plus Sidekiq 7's minutes of the last 8 h, each in its 10 minutes", async () => {
  const now = new Date();
  const hourAgo = new Date(now.getTime() - 3_600_000);
  await flushRuns("sidekiq8", now, "HardJob", [10, 10]);
  await flushRuns("sidekiq7", now, "HardJob", [10]);
  await flushRuns("sidekiq7", hourAgo, "HardJob", [10, -1]);
  const result = await new ExecutionMetrics(handle.redis).top("24h", "", now);
  assert.equal(result.granularity, "hourly");
  const hard = result.classes.get("HardJob")!;
  assert.deepEqual([hard.p, hard.f], [5, 1]);
  assert.equal(hard.series.p.at(-1), 3, "now: 8's rollup and 7's minute");
  assert.equal(hard.series.p.at(-7), 2, "an hour ago: six 10-minute buckets back");
  assert.equal(
    hard.series.p.reduce((a, b) => a + b, 0),
    5,
  );
});
