/**
 * tsq's ProcessSet and WorkSet on a real Ruby Sidekiq 6.4.1 process (its record has no top-level
 * `concurrency` and its work hash is `<identity>:workers`), and tsq's quiet / dump / stop acting on
 * it exactly as Ruby's own `Sidekiq::Process#quiet!` etc. do.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { ProcessSet, WorkSet } from "../../../src/admin/api/index.js";
import { LEADER, PROCESSES, legacyWorkKey, signalsKey, workKey } from "../../../src/wire/keys.js";
import { nowSeconds } from "../../../src/wire/timestamps.js";
import { useRedis } from "../../helpers/redis.js";
import { requireRubySidekiq } from "../../helpers/ruby.js";
import { rubyTestFile, startSidekiq, useSidekiqCleanup } from "../../helpers/sidekiqProcess.js";
import { eventually } from "../../helpers/tsqProcess.js";
import { ruby } from "./rubyApi.js";

const redis = useRedis();
useSidekiqCleanup();

/** 6.4.1 beats every 5 s; a signal is popped by the next beat and shows in `quiet` at the one after. */
const TWO_BEATS_MS = 15_000;

interface RubyView {
  identity: string;
  hostname: string;
  pid: number;
  tag: string;
  queues: string[];
  labels: string[];
  concurrency: number;
  busy: number;
  quiet: string;
  beat: number;
  rss: number;
  started_at: number;
}

const RUBY_PROCESS = `p = Sidekiq::ProcessSet.new.first
{ "identity" => p.identity, "hostname" => p["hostname"], "pid" => p["pid"], "tag" => p.tag, "queues" => p.queues,
  "labels" => p.labels, "concurrency" => p["concurrency"], "busy" => p["busy"], "quiet" => p["quiet"],
  "beat" => p["beat"], "rss" => p["rss"], "started_at" => p["started_at"] }`;

test("ProcessSet and WorkSet list a Ruby process with the fields Ruby's own API reports", async (t) => {
  if (!requireRubySidekiq(t)) return;
  const sidekiq = await startSidekiq({
    redis,
    requireFile: rubyTestFile("api_jobs.rb"),
    queues: ["default", "low"],
    concurrency: 3,
  });
  const jid = await ruby<string>(redis, 'Sidekiq::Client.push("class" => "SleepJob", "args" => [12])');
  await eventually(
    async () => (await redis.redis.lrange("ruby:started", 0, -1)).includes(jid),
    10_000,
    "the Ruby SleepJob never started",
  );
  await eventually(
    async () => (await redis.redis.hget(sidekiq.identity, "busy")) === "1",
    10_000,
    "busy never became 1",
    200,
  );

  const set = new ProcessSet(redis.redis);
  const [record] = await set.list();
  const rubyView = await ruby<RubyView>(redis, RUBY_PROCESS);
  assert.ok(record);
  assert.equal(record.identity, sidekiq.identity);
  assert.deepEqual(
    {
      identity: record.identity,
      hostname: record.hostname,
      pid: record.pid,
      tag: record.tag,
      queues: record.queues,
      labels: record.labels,
      concurrency: record.concurrency,
      busy: record.busy,
      quiet: String(record.quiet),
      beat: record.beat,
      rss: record.rssKb,
      started_at: record.startedAt,
    },
    rubyView,
  );
  assert.deepEqual(
    [record.pid, record.concurrency, record.queues, record.busy],
    [sidekiq.pid, 3, ["default", "low"], 1],
  );
  assert.equal(await redis.redis.hexists(sidekiq.identity, "concurrency"), 0, "6.4.1 has concurrency only in info");
  assert.deepEqual([record.version, record.embedded, record.leader], [null, false, false]);
  assert.ok(record.rssKb > 1000 && Math.abs(record.beat - nowSeconds()) < 10);
  assert.equal(await set.totalConcurrency(), 3);
  assert.equal(await set.totalRssKb(), record.rssKb);
  await redis.redis.set(LEADER, sidekiq.identity);
  assert.equal(await set.leader(), sidekiq.identity);
  assert.equal((await set.get(sidekiq.identity))?.leader, true);

  // 6.4.1 writes only `<identity>:workers`.
  assert.equal(await redis.redis.exists(workKey(sidekiq.identity)), 0);
  assert.equal(await redis.redis.exists(legacyWorkKey(sidekiq.identity)), 1);
  const work = await new WorkSet(redis.redis).list();
  assert.deepEqual(
    work.map((w) => [w.process, w.queue, w.job.jid, w.job.klass, w.job.args]),
    [[sidekiq.identity, "default", jid, "SleepJob", [12]]],
  );
  assert.ok(Number.isInteger(work[0]!.runAt) && Math.abs(work[0]!.runAt - nowSeconds()) < 15);
  const rubyWork = await ruby<[string, string][]>(redis, "Sidekiq::Workers.new.map { |pid, tid, w| [pid, tid] }");
  assert.deepEqual(rubyWork, [[sidekiq.identity, work[0]!.tid]], "the same thread id as Ruby's WorkSet");
  assert.equal(await new WorkSet(redis.redis).size(), 1);
});

test("tsq's quiet/stop/dump write what Ruby's Process#quiet!/stop!/dump_threads write", async (t) => {
  if (!requireRubySidekiq(t)) return;
  const set = new ProcessSet(redis.redis);
  await set.quiet("tsq:1:aaaaaaaaaaaa");
  await set.stop("tsq:1:aaaaaaaaaaaa");
  await set.dumpThreads("tsq:1:aaaaaaaaaaaa");
  await ruby(
    redis,
    'p = Sidekiq::Process.new("identity" => "rb:1:bbbbbbbbbbbb"); p.quiet!; p.stop!; p.dump_threads; true',
  );
  const [tsqList, rubyList] = await Promise.all(
    [signalsKey("tsq:1:aaaaaaaaaaaa"), signalsKey("rb:1:bbbbbbbbbbbb")].map((k) => redis.redis.lrange(k, 0, -1)),
  );
  assert.deepEqual(tsqList, ["TTIN", "TERM", "TSTP"]);
  assert.deepEqual(rubyList, tsqList);
  for (const key of [signalsKey("tsq:1:aaaaaaaaaaaa"), signalsKey("rb:1:bbbbbbbbbbbb")]) {
    const ttl = await redis.redis.ttl(key);
    assert.ok(ttl > 50 && ttl <= 60, `${key} TTL ${ttl}`);
  }
});

test("a Ruby process dumps its threads, goes quiet and stops when tsq's ProcessSet tells it to", async (t) => {
  if (!requireRubySidekiq(t)) return;
  const sidekiq = await startSidekiq({ redis, requireFile: rubyTestFile("api_jobs.rb") });
  const set = new ProcessSet(redis.redis);

  await set.dumpThreads(sidekiq.identity);
  // 6.4.1's TTIN handler logs every thread's backtrace.
  await eventually(
    async () => /Thread TID-\S+/.test(sidekiq.output()),
    TWO_BEATS_MS,
    `no thread dump; log:\n${sidekiq.output().slice(-2000)}`,
    200,
  );

  await set.quiet(sidekiq.identity);
  await eventually(
    async () => (await set.get(sidekiq.identity))?.quiet === true,
    TWO_BEATS_MS,
    "the Ruby process never reported quiet",
    200,
  );
  assert.deepEqual(await ruby(redis, "Sidekiq::ProcessSet.new.map(&:stopping?)"), [true]);
  // A quiet process takes no new work.
  await ruby(redis, 'Sidekiq::Client.push("class" => "RecordJob", "args" => ["after quiet"])');
  await new Promise((resolve) => setTimeout(resolve, 3000));
  assert.equal(await redis.redis.llen("ruby:ran"), 0);
  assert.equal(await redis.redis.llen("queue:default"), 1);

  await set.stop(sidekiq.identity);
  await eventually(
    async () => (await redis.redis.sismember(PROCESSES, sidekiq.identity)) === 0,
    TWO_BEATS_MS,
    "the Ruby process did not stop",
  );
  await eventually(async () => !alive(sidekiq.pid), 15_000, "the Ruby process left `processes` but did not exit");
  assert.equal((await sidekiq.stop()).code, 0);
  assert.deepEqual(await set.list(), []);
});

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
