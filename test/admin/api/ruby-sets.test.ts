/**
 * Retry and dead entries made by a real Ruby Sidekiq 6.4.1 process are read, retried, killed, deleted
 * and rescheduled through tsq's API, then run by a tsq worker; entries made by a tsq worker are
 * retried, killed and deleted through Ruby's `Sidekiq::API`, then run by Ruby. The jobs' classes
 * (RecordJob, FailJob) exist on both sides: test/ruby/api_jobs.rb and test/jobs/testJobs.ts.
 */
import { test, type TestContext } from "node:test";
import assert from "node:assert/strict";
import { Client } from "../../../src/client/Client.js";
import { DeadSet, Queue, RetrySet } from "../../../src/admin/api/index.js";
import { DEAD, RETRY, queueKey } from "../../../src/wire/keys.js";
import type { JobPayload } from "../../../src/wire/payload.js";
import { nowSeconds } from "../../../src/wire/timestamps.js";
import { useRedis } from "../../helpers/redis.js";
import { requireRubySidekiq } from "../../helpers/ruby.js";
import { rubyTestFile, startSidekiq, useSidekiqCleanup } from "../../helpers/sidekiqProcess.js";
import { TEST_JOBS, eventually, startTsq } from "../../helpers/tsqProcess.js";
import { ruby } from "./rubyApi.js";

const redis = useRedis();
useSidekiqCleanup();

const API_JOBS = rubyTestFile("api_jobs.rb");

/** Runs a tsq worker on `default` until `ran` holds `count` records; returns them. */
async function runInTsq(t: TestContext, count: number): Promise<{ jid: string; args: unknown[] }[]> {
  const tsq = startTsq(["-r", TEST_JOBS, "-q", "default", "-c", "2"], { REDIS_URL: redis.url });
  t.after(() => tsq.stop(5000));
  await eventually(
    async () => (await redis.redis.llen("ran")) >= count,
    20_000,
    `tsq did not run ${count} jobs; output:\n${tsq.output().slice(-3000)}`,
  );
  assert.equal(await tsq.stop(10_000), 0);
  return (await redis.redis.lrange("ran", 0, -1)).map((line) => JSON.parse(line) as { jid: string; args: unknown[] });
}

test("Ruby-made retry and dead entries: tsq's API reads, retries, kills, deletes and reschedules them; tsq runs them", async (t) => {
  if (!requireRubySidekiq(t)) return;
  const sidekiq = await startSidekiq({ redis, requireFile: API_JOBS, concurrency: 2 });
  // Ruby's client; "fail" makes Ruby's RecordJob raise. retry: 0 goes straight to the dead set.
  const jids = await ruby<Record<string, string>>(
    redis,
    `{ "r1" => Sidekiq::Client.push("class" => "RecordJob", "args" => ["fail", 1, 1.0, 2**60 + 1], "backtrace" => true),
       "r2" => Sidekiq::Client.push("class" => "RecordJob", "args" => ["fail", 2]),
       "r3" => Sidekiq::Client.push("class" => "RecordJob", "args" => ["fail", 3]),
       "d1" => Sidekiq::Client.push("class" => "RecordJob", "args" => ["fail", 4], "retry" => 0),
       "d2" => Sidekiq::Client.push("class" => "RecordJob", "args" => ["fail", 5], "retry" => 0) }`,
  );
  const pushedAt = nowSeconds();
  await eventually(
    async () => (await redis.redis.zcard(RETRY)) === 3 && (await redis.redis.zcard(DEAD)) === 2,
    20_000,
    `Ruby did not fail the five jobs; log:\n${sidekiq.output().slice(-3000)}`,
  );
  // Stop Ruby before a retry is due (15 s at the earliest) so that only tsq acts on the entries.
  await sidekiq.stop();

  const retries = new RetrySet(redis.redis);
  const dead = new DeadSet(redis.redis);
  assert.equal(await retries.size(), 3);
  const r1 = await retries.findJob(jids.r1!);
  assert.ok(r1, "findJob found the Ruby retry entry");
  assert.equal(r1.klass, "RecordJob");
  assert.deepEqual(r1.args.slice(0, 2), ["fail", 1]);
  assert.equal(r1.errorClass, "ArgumentError");
  assert.equal(r1.errorMessage, 'ruby refuses ["fail", 1]');
  assert.equal(r1.retryCount, 0);
  assert.ok(Math.abs(r1.failedAt! - pushedAt) < 10, `failed_at ${r1.failedAt}`);
  assert.ok(r1.score - r1.failedAt! >= 15 && r1.score - r1.failedAt! < 26, "first retry due 15-25 s after the failure");
  // 6.4.1 writes the backtrace as MIME base64 (a newline every 60 characters) of deflated JSON.
  const backtrace = r1.errorBacktrace();
  assert.ok(backtrace && backtrace.length > 0, "the Ruby backtrace decodes");
  assert.match(backtrace[0]!, /api_jobs\.rb:\d+:in `perform'/);
  assert.deepEqual(
    (await retries.fetch(r1.score, jids.r1)).map((e) => e.value),
    [r1.value],
    "fetch(score, jid)",
  );
  const newestFirst = (await retries.first(3)).map((e) => e.score);
  assert.deepEqual(
    newestFirst,
    [...newestFirst].sort((a, b) => b - a),
  );
  assert.deepEqual(await collectJids(retries.scan('"fail",2')), [jids.r2], "ZSCAN MATCH on Ruby's JSON text");

  // Retry now: Ruby's exact field text survives (1.0 and 2**60 + 1 are not JavaScript numbers).
  assert.equal(await r1.retry(), true);
  const [queued] = await redis.redis.lrange(queueKey("default"), 0, -1);
  assert.match(queued!, /"args":\["fail",1,1\.0,1152921504606846977\]/);
  assert.equal((JSON.parse(queued!) as JobPayload).retry_count, -1, "retry_count - 1, as Sidekiq's SortedEntry#retry");
  assert.equal(r1.value.match(/"created_at":[0-9.]+/)?.[0], queued!.match(/"created_at":[0-9.]+/)?.[0]);

  const handled: string[] = [];
  assert.equal(
    await (await retries.findJob(jids.r2!))!.kill({ deathHandlers: [(job) => void handled.push(job.jid)] }),
    true,
  );
  assert.deepEqual(handled, [jids.r2]);
  assert.equal(await (await retries.findJob(jids.r3!))!.delete(), true);
  assert.equal(await retries.size(), 0);

  const d1 = await dead.findJob(jids.d1!);
  assert.ok(d1);
  assert.deepEqual([d1.retryCount, d1.errorClass, d1.get("retry")], [0, "ArgumentError", 0]);
  assert.equal(await d1.retry(), true);
  const d2 = (await dead.findJob(jids.d2!))!;
  assert.equal(await d2.reschedule(1_900_000_000.5), true);

  // Ruby's API sees what tsq did.
  const seen = await ruby<{ retry: number; dead: string[]; d2_score: number; queue: [string, number][] }>(
    redis,
    `{ "retry" => Sidekiq::RetrySet.new.size, "dead" => Sidekiq::DeadSet.new.map(&:jid).sort,
       "d2_score" => Sidekiq::DeadSet.new.find_job(ENV["D2"]).score,
       "queue" => Sidekiq::Queue.new("default").map { |j| [j.jid, j["retry_count"]] }.sort }`,
    { D2: jids.d2! },
  );
  assert.deepEqual(seen, {
    retry: 0,
    dead: [jids.d2!, jids.r2!].sort(),
    d2_score: 1_900_000_000.5,
    queue: [
      [jids.r1!, -1],
      [jids.d1!, -1],
    ].sort((a, b) => String(a[0]).localeCompare(String(b[0]))),
  });

  // tsq's RecordJob succeeds whatever its arguments.
  const ran = await runInTsq(t, 2);
  assert.deepEqual(ran.map((r) => r.jid).sort(), [jids.r1!, jids.d1!].sort());
  assert.deepEqual(ran.find((r) => r.jid === jids.r1)?.args, ["fail", 1, 1, 1152921504606846976]);
});

test("tsq-made retry and dead entries: Ruby's API retries, kills and deletes them; Ruby runs them", async (t) => {
  if (!requireRubySidekiq(t)) return;
  const tsq = startTsq(["-r", TEST_JOBS, "-q", "default", "-c", "4"], { REDIS_URL: redis.url });
  t.after(() => tsq.stop(5000));
  const client = new Client({ redis: redis.redis });
  const j1 = (await client.push({ class: "FailJob", args: ["one"], backtrace: 5 }))!;
  const j2 = (await client.push({ class: "FailJob", args: ["two"] }))!;
  const j3 = (await client.push({ class: "FailJob", args: ["three"] }))!;
  const j4 = (await client.push({ class: "FailJob", args: ["four"], retry: 0 }))!;
  await eventually(
    async () => (await redis.redis.zcard(RETRY)) === 3 && (await redis.redis.zcard(DEAD)) === 1,
    15_000,
    `tsq did not fail the four jobs; output:\n${tsq.output().slice(-3000)}`,
  );
  assert.equal(await tsq.stop(10_000), 0);
  // tsq's own kill makes a dead entry too.
  assert.equal(await (await new RetrySet(redis.redis).findJob(j3))!.kill(), true);

  const result = await ruby<Record<string, unknown>>(
    redis,
    `r = Sidekiq::RetrySet.new
     d = Sidekiq::DeadSet.new
     e1 = r.find_job(ENV["J1"])
     seen = { "class" => e1.klass, "error_class" => e1["error_class"], "error_message" => e1["error_message"],
              "retry_count" => e1["retry_count"], "failed_at_class" => e1["failed_at"].class.name,
              "backtrace_lines" => e1.error_backtrace.size, "backtrace_top" => e1.error_backtrace.first,
              "dead_before" => d.map(&:jid).sort }
     e1.retry
     r.find_job(ENV["J2"]).kill
     d.find_job(ENV["J3"]).retry
     d.find_job(ENV["J4"]).delete
     seen.merge("retry_after" => Sidekiq::RetrySet.new.size, "dead_after" => Sidekiq::DeadSet.new.map(&:jid))`,
    { J1: j1, J2: j2, J3: j3, J4: j4 },
  );
  // The job's own frames, at most its `backtrace: 5` (tsq's chain adds no async frames of its own).
  const { backtrace_lines: lines, backtrace_top: top, ...rest } = result;
  assert.ok(typeof lines === "number" && lines >= 1 && lines <= 5, `backtrace of ${String(lines)} lines`);
  assert.match(String(top), /FailJob\.perform .*testJobs\.js:\d+:\d+/);
  assert.deepEqual(rest, {
    class: "FailJob",
    error_class: "Error",
    error_message: "one",
    retry_count: 0,
    failed_at_class: "Float",
    dead_before: [j3, j4].sort(),
    retry_after: 0,
    dead_after: [j2],
  });
  // tsq's API agrees, and the two retried jobs wait in `default` with retry_count - 1.
  assert.equal(await new RetrySet(redis.redis).size(), 0);
  assert.deepEqual(
    (await new DeadSet(redis.redis).first(10)).map((e) => e.jid),
    [j2],
  );
  const queued = await new Queue(redis.redis, "default").first(10);
  assert.deepEqual(
    queued.map((job) => [job.jid, job.retryCount]).sort(),
    [
      [j1, -1],
      [j3, -1],
    ].sort(),
  );

  // Ruby's FailJob succeeds.
  const sidekiq = await startSidekiq({ redis, requireFile: API_JOBS });
  await eventually(
    async () => (await redis.redis.llen("ruby:ran")) === 2,
    20_000,
    `Ruby did not run the two jobs; log:\n${sidekiq.output().slice(-3000)}`,
  );
  const ran = (await redis.redis.lrange("ruby:ran", 0, -1)).map(
    (line) => JSON.parse(line) as { jid: string; class: string; args: unknown[] },
  );
  assert.deepEqual(
    ran.map((r) => [r.jid, r.class, r.args]).sort(),
    [
      [j1, "FailJob", ["one"]],
      [j3, "FailJob", ["three"]],
    ].sort(),
  );
});

async function collectJids(entries: AsyncIterable<{ jid: string | undefined }>): Promise<(string | undefined)[]> {
  const jids: (string | undefined)[] = [];
  for await (const entry of entries) jids.push(entry.jid);
  return jids;
}
