/**
 * ExecutionTracker: tsq workers write Sidekiq 8's or Sidekiq 7's metrics keys
 * (lib/sidekiq/metrics/{tracking,shared}.rb of each) exactly: key names, field names, values, TTLs and
 * histogram bucket indexes.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { useRedis } from "../helpers/redis.js";
import { testLauncher } from "../helpers/context.js";
import { Client } from "../../src/client/Client.js";
import { ExecutionTracker } from "../../src/server/ExecutionTracker.js";
import {
  HISTOGRAM_FETCH,
  bucketIndex,
  histogramWindow,
  minuteBucket,
  sidekiq7HistogramWindow,
  sidekiq7MinuteBucket,
  tenMinuteBucket,
} from "../../src/wire/executionLayout.js";
import { resolveWorkerOptions } from "../../src/options/workerOptions.js";

const handle = useRedis();

test("bucket names are Ruby's strftime: %y%m%d|%-H:%M, its 10-minute prefix, and %-d-%-H:%-M", (t) => {
  const times = [
    Date.UTC(2025, 1, 14, 8, 43, 7),
    Date.UTC(2025, 1, 14, 8, 3, 59),
    Date.UTC(2026, 0, 1, 0, 0, 0),
    Date.UTC(2026, 10, 23, 23, 59, 59),
    Date.UTC(2030, 11, 9, 10, 10, 10),
  ];
  const ours = times.map((ms) => {
    const d = new Date(ms);
    return `${minuteBucket(d)} ${tenMinuteBucket(d)} ${histogramWindow(d)}`;
  });
  assert.deepEqual(ours.slice(0, 2), ["250214|8:43 250214|8:4 14-8:43", "250214|8:03 250214|8:0 14-8:3"]);
  const ruby = spawnSync(
    "ruby",
    [
      "-e",
      'ARGV.each { |s| t = Time.at(s.to_i).utc; f = t.strftime("%y%m%d|%-H:%M"); puts "#{f} #{f[0..-2]} #{t.strftime("%-d-%-H:%-M")}" }',
      ...times.map((ms) => String(ms / 1000)),
    ],
    { encoding: "utf8" },
  );
  if (ruby.status !== 0) return t.skip("ruby is not installed");
  assert.deepEqual(ruby.stdout.trim().split("\n"), ours);
});

test("Sidekiq 7's bucket names are its strftime: %Y%m%d|%-H:%-M and %d-%H:%-M", (t) => {
  const times = [Date.UTC(2025, 1, 14, 8, 43, 7), Date.UTC(2025, 1, 4, 8, 3, 59), Date.UTC(2026, 10, 23, 23, 5, 0)];
  const ours = times.map((ms) => `${sidekiq7MinuteBucket(new Date(ms))} ${sidekiq7HistogramWindow(new Date(ms))}`);
  assert.deepEqual(ours.slice(0, 2), ["20250214|8:43 14-08:43", "20250204|8:3 04-08:3"]);
  const ruby = spawnSync(
    "ruby",
    [
      "-e",
      'ARGV.each { |s| t = Time.at(s.to_i).utc; puts "#{t.strftime("%Y%m%d|%-H:%-M")} #{t.strftime("%d-%H:%-M")}" }',
      ...times.map((ms) => String(ms / 1000)),
    ],
    { encoding: "utf8" },
  );
  if (ruby.status !== 0) return t.skip("ruby is not installed");
  assert.deepEqual(ruby.stdout.trim().split("\n"), ours);
});

test("a flush in Sidekiq 7's layout: the minute hash (no rollup) and unprefixed histograms, 8 h TTLs", async () => {
  const tracker = new ExecutionTracker();
  tracker.succeeded("HardJob", 12.4);
  tracker.succeeded("HardJob", 280.3);
  tracker.failed("FailJob");
  const now = new Date(Date.UTC(2025, 1, 4, 8, 3, 7));
  assert.equal(await tracker.flush(handle.redis, "sidekiq7", now), 4, "4 fields in the one minute key");
  const { redis } = handle;
  assert.deepEqual((await redis.keys("*")).sort(), ["HardJob-04-08:3", "j|20250204|8:3"]);
  assert.deepEqual(await redis.hgetall("j|20250204|8:3"), {
    "HardJob|ms": "293",
    "HardJob|p": "2",
    "FailJob|p": "1",
    "FailJob|f": "1",
  });
  const hist = (await redis.call("BITFIELD_RO", "HardJob-04-08:3", ...HISTOGRAM_FETCH)) as number[];
  assert.deepEqual(hist, [1, 0, 0, 0, 0, 0, 0, 1, ...new Array<number>(18).fill(0)]);
  for (const key of ["HardJob-04-08:3", "j|20250204|8:3"]) assert.ok((await redis.ttl(key)) > 8 * 3600 - 5, key);
});

test("histogram bucket indexes: first bound the run is under (20, 30, 45, 65, 100 … ms, then Slow)", () => {
  assert.equal(bucketIndex(0), 0);
  assert.equal(bucketIndex(19.99), 0);
  assert.equal(bucketIndex(20), 1);
  assert.equal(bucketIndex(44), 2);
  assert.equal(bucketIndex(120), 5);
  assert.equal(bucketIndex(280), 7, "Sidekiq's comment: a 280 ms run increments bucket[7]");
  assert.equal(bucketIndex(334_999), 24);
  assert.equal(bucketIndex(335_000), 25);
  assert.equal(bucketIndex(1e9), 25);
});

test("a flush at a known minute: HINCRBY fields, EXPIREs, BITFIELD counters, nothing for an idle tracker", async () => {
  const tracker = new ExecutionTracker();
  assert.equal(await tracker.flush(handle.redis, "sidekiq8"), 0, "nothing counted: no round trip");
  tracker.succeeded("HardJob", 12.4);
  tracker.succeeded("HardJob", 280.3);
  tracker.succeeded("HardJob", 300);
  tracker.failed("HardJob");
  tracker.failed("FailJob");
  const now = new Date(Date.UTC(2025, 1, 14, 8, 43, 7));
  assert.equal(await tracker.flush(handle.redis, "sidekiq8", now), 10, "5 fields in each of 2 keys");
  const { redis } = handle;
  const expected = { "HardJob|ms": "593", "HardJob|p": "4", "HardJob|f": "1", "FailJob|p": "1", "FailJob|f": "1" };
  assert.deepEqual(await redis.hgetall("j|250214|8:43"), expected);
  assert.deepEqual(await redis.hgetall("j|250214|8:4"), expected);
  assert.ok((await redis.ttl("j|250214|8:43")) > 8 * 3600 - 5);
  assert.ok((await redis.ttl("j|250214|8:4")) > 3 * 86400 - 5);
  const hist = (await redis.call("BITFIELD_RO", "h|HardJob-14-8:43", ...HISTOGRAM_FETCH)) as number[];
  assert.deepEqual(hist, [1, 0, 0, 0, 0, 0, 0, 2, ...new Array<number>(18).fill(0)]);
  assert.ok((await redis.ttl("h|HardJob-14-8:43")) > 8 * 3600 - 5);
  assert.equal(await redis.exists("h|FailJob-14-8:43"), 0, "failures are not timed");
  assert.equal(await tracker.flush(redis, "sidekiq8", now), 0, "a flush forgets what it wrote");
  tracker.succeeded("HardJob", 1);
  await tracker.flush(redis, "sidekiq8", now);
  assert.equal(await redis.hget("j|250214|8:43", "HardJob|p"), "5", "counters add up across flushes");
});

test("a tsq worker writes the keys for the jobs it runs, flushed on graceful stop", async () => {
  class Quick {
    perform() {}
  }
  class Sleepy {
    async perform() {
      await new Promise((r) => setTimeout(r, 110)); // bucket 5: 100 ≤ ms < 150
    }
  }
  class Boom {
    perform() {
      throw new Error("boom");
    }
  }
  // One beat at start (nothing to write yet) and the flush at stop: the keys of one minute.
  const launcher = testLauncher(handle.url, [Quick, Sleepy, Boom], { heartbeatInterval: 600 });
  const client = new Client({ redis: handle.url });
  for (let i = 0; i < 3; i++) await client.push({ class: "Quick", args: [] });
  for (let i = 0; i < 2; i++) await client.push({ class: "Sleepy", args: [] });
  for (let i = 0; i < 2; i++) await client.push({ class: "Boom", args: [], retry: false });
  await client.close();
  const t0 = performance.now();
  await launcher.start();
  await waitFor(async () => launcher.ctx.state.unflushedCounts().processed === 7);
  const elapsedMs = performance.now() - t0; // each Sleepy run took at most this
  const before = new Date();
  await launcher.stop();
  const after = new Date();
  const { redis } = handle;
  const counts = (await redis.keys("j|*")).sort();
  const minutes = new Set([minuteBucket(before), minuteBucket(after)].map((b) => `j|${b}`));
  const tens = new Set([tenMinuteBucket(before), tenMinuteBucket(after)].map((b) => `j|${b}`));
  assert.equal(counts.length, 2, `one minute and one 10-minute key: ${counts.join(", ")}`);
  const minuteKey = counts.find((k) => minutes.has(k));
  const tenKey = counts.find((k) => tens.has(k));
  assert.ok(minuteKey && tenKey, `keys named as Sidekiq's: ${counts.join(", ")}`);
  const fields = await redis.hgetall(minuteKey);
  assert.deepEqual(Object.keys(fields).sort(), ["Boom|f", "Boom|p", "Quick|ms", "Quick|p", "Sleepy|ms", "Sleepy|p"]);
  assert.equal(fields["Quick|p"], "3");
  assert.equal(fields["Sleepy|p"], "2");
  assert.equal(fields["Boom|p"], "2");
  assert.equal(fields["Boom|f"], "2");
  const sleepyMs = Number(fields["Sleepy|ms"]);
  // At least the two 110 ms sleeps (a timer may fire a ms early); at most the two runs' share of the
  // time the test measured around them, however busy the machine.
  assert.ok(sleepyMs >= 218 && sleepyMs <= 2 * elapsedMs + 2, `Sleepy|ms ${sleepyMs}, run took ${elapsedMs} ms`);
  assert.ok(Number(fields["Quick|ms"]) <= 3 * elapsedMs + 3);
  assert.deepEqual(await redis.hgetall(tenKey), fields);
  const ttl = await redis.ttl(minuteKey);
  assert.ok(ttl > 8 * 3600 - 10 && ttl <= 8 * 3600, `minute TTL ${ttl}`);
  assert.ok((await redis.ttl(tenKey)) > 3 * 86400 - 10);
  const hists = (await redis.keys("h|*")).sort();
  // The flush's minute: the one the counters went to (the stop may cross a minute boundary).
  const window = histogramWindow(minuteKey === `j|${minuteBucket(before)}` ? before : after);
  assert.deepEqual(hists, [`h|Quick-${window}`, `h|Sleepy-${window}`].sort());
  const sleepy = (await redis.call("BITFIELD_RO", `h|Sleepy-${window}`, ...HISTOGRAM_FETCH)) as number[];
  // 100 ms ≤ each run: bucket 5 or later (a busy machine may stretch a run past 150 ms).
  assert.equal(
    sleepy.slice(0, 5).reduce((a, b) => a + b, 0),
    0,
    `no run under 100 ms: ${sleepy.join(",")}`,
  );
  assert.equal(
    sleepy.reduce((a, b) => a + b, 0),
    2,
  );
  const quick = (await redis.call("BITFIELD_RO", `h|Quick-${window}`, ...HISTOGRAM_FETCH)) as number[];
  // Every run timed; which bucket a no-op lands in depends on how busy the machine is (a loaded event
  // loop stretches it past bucket 0's 20 ms), so only the count is checked.
  assert.equal(
    quick.reduce((a, b) => a + b, 0),
    3,
    `three Quick runs timed: ${quick.join(",")}`,
  );
  assert.ok((await redis.ttl(`h|Sleepy-${window}`)) > 8 * 3600 - 10);
});

test("switched off (execution_metrics: false / --no-execution-metrics): no metrics keys", async () => {
  class Quick {
    perform() {}
  }
  const launcher = testLauncher(handle.url, [Quick], { heartbeatInterval: 600, executionMetrics: false });
  const client = new Client({ redis: handle.url });
  await client.push({ class: "Quick", args: [] });
  await client.close();
  await launcher.start();
  await waitFor(async () => launcher.ctx.state.unflushedCounts().processed === 1);
  await launcher.stop();
  assert.deepEqual(await handle.redis.keys("[jh]|*"), []);
  const cwd = mkdtempSync(join(tmpdir(), "tsq-exec-"));
  assert.equal(resolveWorkerOptions([], {}, cwd).options.executionMetrics, true, "on by default");
  assert.equal(resolveWorkerOptions(["--no-execution-metrics"], {}, cwd).options.executionMetrics, false);
  mkdirSync(join(cwd, "config"));
  writeFileSync(join(cwd, "config", "tsq.yml"), "execution_metrics: false\n");
  assert.equal(resolveWorkerOptions([], {}, cwd).options.executionMetrics, false, "from the config file");
  assert.equal(resolveWorkerOptions(["--execution-metrics"], {}, cwd).options.executionMetrics, true, "flag wins");
});

async function waitFor(check: () => Promise<boolean>, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error("timed out");
    await new Promise((r) => setTimeout(r, 20));
  }
}
