/**
 * Jobs enqueued by a real Rails ActiveJob (Debian's activejob 6.1 through Sidekiq 6.4.1's client,
 * test/ruby/activejob_push.rb) are run by a tsq worker: the TypeScript class named by `job_class`
 * receives the documented values, sees ActiveJob's context, and a failure retries the wrapper payload
 * so that Ruby's Sidekiq::RetrySet shows an ordinary retry of the wrapped class.
 */
import { test, type TestContext } from "node:test";
import assert from "node:assert/strict";
import { useRedis } from "../../helpers/redis.js";
import { testLauncher } from "../../helpers/context.js";
import { requireRubyLibrary, rubyEval, runRubyScript } from "../../helpers/rails.js";
import { Job } from "../../../src/client/Job.js";
import { Client } from "../../../src/client/Client.js";
import { performLater } from "../../../src/features/activejob/performLater.js";
import { SIDEKIQ_WRAPPER, type ActiveJobContext } from "../../../src/features/activejob/wrapper.js";
import { RubyDate, RubyDuration, RubyModule, RubySymbol, RubyTime } from "../../../src/features/activejob/values.js";
import type { JobPayload } from "../../../src/wire/payload.js";

const redis = useRedis();

interface Run {
  args: unknown[];
  context: ActiveJobContext | undefined;
  jid: string;
  ranAt: number;
}

const runs: Run[] = [];

class RecordJob extends Job {
  perform(...args: unknown[]): void {
    runs.push({ args, context: this.activeJob, jid: this.jid, ranAt: Date.now() / 1000 });
  }
}

class FailingJob extends Job {
  perform(reason: string): void {
    throw new Error(`tsq failed on purpose: ${reason}`);
  }
}

interface Pushed {
  job_id: string;
  jid: string;
  at: number | null;
}

async function until(check: () => Promise<boolean> | boolean, ms = 20_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Enqueues the named cases from Ruby, runs a tsq worker until each has run once, returns the runs by case. */
async function runFromRails(t: TestContext, cases: string[]): Promise<Map<string, Run> | undefined> {
  if (!requireRubyLibrary(t, "active_job", "ruby-activejob")) return undefined;
  runs.length = 0;
  const pushed = await runRubyScript<Record<string, Pushed>>("activejob_push.rb", cases, redis.url);
  const launcher = testLauncher(redis.url, [RecordJob, FailingJob], {
    queues: [
      { name: "default", weight: 0 },
      { name: "critical", weight: 0 },
    ],
    pollIntervalAverage: 1,
  });
  await launcher.start();
  try {
    await until(() => runs.length >= cases.length);
  } finally {
    await launcher.stop();
  }
  const byJid = new Map(runs.map((run) => [run.jid, run]));
  return new Map(cases.map((name) => [name, byJid.get(pushed[name]!.jid)!]));
}

test("positional, keyword, symbol- and string-keyed and indifferent hashes arrive as documented", async (t) => {
  const cases = ["positional", "keywords", "symbol_keys", "string_keys", "indifferent"];
  const byCase = await runFromRails(t, cases);
  if (!byCase) return;
  assert.deepEqual(byCase.get("positional")!.args, ["bob", 3, 2.5, null, true, ["x", 1]]);
  assert.equal(byCase.get("positional")!.context!.keywords, false);
  assert.deepEqual(byCase.get("keywords")!.args, ["bob", { count: 3, tags: ["a"] }], "keywords: one trailing object");
  assert.equal(byCase.get("keywords")!.context!.keywords, true);
  assert.deepEqual(byCase.get("symbol_keys")!.args, [{ name: "bob", nested: { deep: 1 } }], "no _aj_ markers");
  assert.deepEqual(byCase.get("string_keys")!.args, [{ name: "bob", n: 2 }]);
  assert.deepEqual(byCase.get("indifferent")!.args, [{ a: 1 }]);
  for (const name of ["symbol_keys", "string_keys", "indifferent"]) {
    assert.equal(Object.getPrototypeOf(byCase.get(name)!.args[0]), Object.prototype, `${name}: a plain object`);
  }
  for (const run of byCase.values()) assert.equal(run.context!.jobClass, "RecordJob");
});

test("a Time and the other serialized Ruby values arrive as their documented shapes", async (t) => {
  const byCase = await runFromRails(t, ["time", "values"]);
  if (!byCase) return;
  const [time] = byCase.get("time")!.args as [RubyTime];
  assert.ok(time instanceof RubyTime);
  assert.equal(time.iso8601, "2024-01-02T03:04:05.123456789Z", "nanoseconds kept");
  assert.equal(time.kind, "Time");
  assert.equal(time.toDate().toISOString(), "2024-01-02T03:04:05.123Z");
  const [date, symbol, minutes, hours, module, zoned, dateTime] = byCase.get("values")!.args;
  assert.deepEqual(date, new RubyDate("2024-01-02"));
  assert.deepEqual(symbol, new RubySymbol("draft"));
  assert.deepEqual(minutes, new RubyDuration(300, { minutes: 5 }));
  assert.deepEqual(hours, new RubyDuration(5400, { hours: 1.5 }));
  assert.deepEqual(module, new RubyModule("String"));
  assert.deepEqual(zoned, new RubyTime("2024-01-02T12:00:00.000000000+09:00", "ActiveSupport::TimeWithZone"));
  assert.equal(zoned.toDate().toISOString(), "2024-01-02T03:00:00.000Z");
  assert.deepEqual(dateTime, new RubyTime("2024-01-02T03:04:05.000000000+00:00", "DateTime"));
  assert.equal(byCase.get("values")!.context!.timezone, "Tokyo");
});

test("the job sees ActiveJob's job_id, executions, locale, timezone, priority and queue", async (t) => {
  const cases = ["context"];
  if (!requireRubyLibrary(t, "active_job", "ruby-activejob")) return;
  runs.length = 0;
  const pushed = await runRubyScript<Record<string, Pushed>>("activejob_push.rb", cases, redis.url);
  const launcher = testLauncher(redis.url, [RecordJob], {
    queues: [{ name: "critical", weight: 0 }],
  });
  await launcher.start();
  await until(() => runs.length === 1);
  await launcher.stop();
  const [run] = runs;
  assert.deepEqual(run!.args, ["ctx"]);
  const context = run!.context!;
  assert.equal(context.jobId, pushed.context!.job_id);
  assert.equal(context.providerJobId, pushed.context!.jid);
  assert.equal(context.executions, 1, "as the Rails job sees it inside perform");
  assert.equal(context.locale, "fr");
  assert.equal(context.timezone, "UTC");
  assert.equal(context.priority, 7);
  assert.equal(context.queueName, "critical");
  assert.match(context.enqueuedAt ?? "", /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
});

test("set(wait: 5.seconds) waits in the schedule set and runs about 5 s later", async (t) => {
  if (!requireRubyLibrary(t, "active_job", "ruby-activejob")) return;
  runs.length = 0;
  const pushed = await runRubyScript<Record<string, Pushed>>("activejob_push.rb", ["scheduled"], redis.url);
  const [stored, score] = await redis.redis.zrange("schedule", 0, -1, "WITHSCORES");
  assert.equal((JSON.parse(stored!) as JobPayload).wrapped, "RecordJob");
  assert.ok(Math.abs(Number(score) - pushed.scheduled!.at!) < 0.001, "scored at Rails' scheduled_at");
  const launcher = testLauncher(redis.url, [RecordJob], { pollIntervalAverage: 1 });
  await launcher.start();
  await until(() => runs.length === 1);
  await launcher.stop();
  assert.deepEqual(runs[0]!.args, ["later"]);
  assert.ok(runs[0]!.ranAt >= pushed.scheduled!.at! - 0.05, "not before its time");
  assert.ok(runs[0]!.ranAt < pushed.scheduled!.at! + 10, "within the poll interval after its time");
});

test("a raising job is retried on the wrapper; Ruby's RetrySet shows the wrapped class", async (t) => {
  if (!requireRubyLibrary(t, "active_job", "ruby-activejob")) return;
  const pushed = await runRubyScript<Record<string, Pushed>>("activejob_push.rb", ["failing"], redis.url);
  const launcher = testLauncher(redis.url, [FailingJob]);
  await launcher.start();
  await until(async () => (await redis.redis.zcard("retry")) === 1);
  await launcher.stop();
  const [raw] = await redis.redis.zrange("retry", 0, -1);
  const retried = JSON.parse(raw!) as JobPayload;
  assert.equal(retried.class, "ActiveJob::QueueAdapters::SidekiqAdapter::JobWrapper");
  assert.equal(retried.wrapped, "FailingJob");
  assert.equal(retried.jid, pushed.failing!.jid);
  assert.equal(retried.retry_count, 0);
  assert.equal(retried.error_message, "tsq failed on purpose: boom");
  assert.equal((retried.args[0] as { job_id: string }).job_id, pushed.failing!.job_id, "the wrapper is kept as is");
  const seen = await rubyEval<string[][]>(
    `require "sidekiq/api"; require "json"; Redis.silence_deprecations = true
     puts JSON.generate(Sidekiq::RetrySet.new.map { |e| [e.display_class, e.klass, e.display_args.inspect, e["error_class"], e.jid] })`,
    redis.url,
  );
  assert.deepEqual(seen, [
    ["FailingJob", "ActiveJob::QueueAdapters::SidekiqAdapter::JobWrapper", '["boom"]', "Error", pushed.failing!.jid],
  ]);
});

test("Sidekiq 7.3's wrapper name runs too; an unknown job_class or unreadable arguments are retried, naming why", async () => {
  runs.length = 0;
  const client = new Client({ redis: redis.url });
  const ok = await performLater("RecordJob", ["new wrapper"], { wrapper: SIDEKIQ_WRAPPER, client });
  await performLater("NoSuchRailsJob", [], { client });
  await client.push({
    class: "ActiveJob::QueueAdapters::SidekiqAdapter::JobWrapper",
    wrapped: "RecordJob",
    args: [{ job_class: "RecordJob", arguments: [{ _aj_serialized: "ActiveJob::Serializers::DateSerializer" }] }],
  });
  await client.close();
  const launcher = testLauncher(redis.url, [RecordJob]);
  await launcher.start();
  await until(async () => runs.length === 1 && (await redis.redis.zcard("retry")) === 2);
  await launcher.stop();
  assert.equal(runs[0]!.jid, ok.jid);
  assert.equal(runs[0]!.context!.jobId, ok.jobId);
  const retried = (await redis.redis.zrange("retry", 0, -1)).map((raw) => JSON.parse(raw) as JobPayload);
  const byClass = new Map(retried.map((job) => [job.error_class, job]));
  assert.match(byClass.get("UnknownJobError")!.error_message!, /no job class named "NoSuchRailsJob"/);
  assert.match(
    byClass.get("ActiveJobDeserializationError")!.error_message!,
    /arguments\[0\] \(ActiveJob::Serializers::DateSerializer\)\.value is not a string/,
  );
});
