/**
 * A real `tsq` worker process, seen and driven through Ruby's own `Sidekiq::API` (6.4.1):
 *
 *   ProcessSet / Workers   the heartbeat hash and the 6.4.1 work hash (`<identity>:workers`)
 *   Stats                  stat:processed / stat:failed flushed by the heartbeat and at stop
 *   Process#quiet!/stop!   remote signals through `<identity>-signals`
 *   RetrySet               a tsq retry entry read (and retried) by Ruby
 *
 * Each Ruby call is `ruby -r sidekiq/api -e '...'` against the test's private Redis; the script's
 * result is printed as one JSON line for the test to parse.
 */
import { test, type TestContext } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { hostname } from "node:os";
import { Client } from "../../src/client/Client.js";
import { PROCESSES, RETRY, legacyWorkKey, queueKey, signalsKey } from "../../src/wire/keys.js";
import { nowSeconds } from "../../src/wire/timestamps.js";
import { FailJob } from "../jobs/testJobs.js";
import { useRedis, type RedisHandle } from "../helpers/redis.js";
import { requireRubySidekiq } from "../helpers/ruby.js";
import { TEST_JOBS, eventually, startTsq, within, type TsqProcess } from "../helpers/tsqProcess.js";

const redis = useRedis();

/**
 * A client on the private Redis, closed after the test. Made inside the test, not in a file-level
 * `before`: Node 20 does not wait for useRedis's async `before` before running the next `before`, so
 * `redis.url` would still be undefined there and the client would fall back to REDIS_URL.
 */
function testClient(t: TestContext): Client {
  assert.ok(redis.url, "the private Redis is not up yet");
  const client = new Client({ redis: redis.url });
  t.after(() => client.close());
  return client;
}

const TSQ_ARGS = ["-r", TEST_JOBS, "-q", "default", "-q", "low", "-c", "4", "-g", "mytag"];
/** Heartbeats are every 10 s; a change is visible after at most one more, so 15 s is enough. */
const ONE_BEAT_MS = 15_000;
/** A remote signal is popped by the next beat (≤ 10 s) and its effect is written by the one after. */
const TWO_BEATS_MS = 25_000;
const JSON_MARK = "@@JSON ";

/**
 * Runs `code` (a Ruby expression list whose last value is JSON-able) with `sidekiq/api` loaded and
 * REDIS_URL pointing at the private Redis. `env` is passed to the script (read it with ENV["..."]),
 * which avoids quoting identities into Ruby source.
 */
async function ruby<T>(handle: RedisHandle, code: string, env: Record<string, string> = {}): Promise<T> {
  const script = [
    'require "json"',
    "Redis.silence_deprecations = true if Redis.respond_to?(:silence_deprecations=)",
    "Sidekiq.logger.level = Logger::WARN",
    `__result = begin\n${code}\nend`,
    `$stdout.puts(${JSON.stringify(JSON_MARK)} + JSON.generate(__result))`,
  ].join("\n");
  const { stdout, stderr } = await new Promise<{ stdout: string; stderr: string }>((resolve, reject) => {
    execFile(
      "ruby",
      ["-r", "sidekiq/api", "-e", script],
      { env: { ...process.env, REDIS_URL: handle.url, ...env }, maxBuffer: 64 * 1024 * 1024 },
      (error, out, err) =>
        error
          ? reject(new Error(`ruby failed: ${error.message}\n${err}\nscript:\n${code}`))
          : resolve({ stdout: out, stderr: err }),
    );
  });
  const line = stdout.split("\n").find((l) => l.startsWith(JSON_MARK));
  if (line === undefined) throw new Error(`ruby printed no result; stdout:\n${stdout}\nstderr:\n${stderr}`);
  return JSON.parse(line.slice(JSON_MARK.length)) as T;
}

/** Starts `tsq` with the brief's flags and resolves once its first heartbeat is in Redis. */
async function startWorker(t: TestContext): Promise<{ tsq: TsqProcess; identity: string }> {
  const tsq = startTsq(TSQ_ARGS, { REDIS_URL: redis.url });
  t.after(() => tsq.stop(5000));
  const started = await tsq.waitForLine((line) => line.msg === "tsq worker started");
  const identity = String(started.identity);
  await eventually(
    async () =>
      (await redis.redis.sismember(PROCESSES, identity)) === 1 && (await redis.redis.hexists(identity, "info")) === 1,
    10_000,
    `tsq ${identity} never registered in "processes"; output:\n${tsq.output().slice(-3000)}`,
  );
  return { tsq, identity };
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

interface RubyProcess {
  identity: string;
  tag: string;
  queues: string[];
  labels: string[];
  concurrency: number;
  busy: number;
  quiet: string;
  stopping: boolean;
  pid: number;
  hostname: string;
  beat: number;
  beat_class: string;
  started_at: number;
  started_at_class: string;
  rss: number;
}

interface RubyWork {
  process: string;
  tid: string;
  queue: string;
  run_at: number;
  run_at_class: string;
  jid: string;
  class: string;
  args: unknown[];
}

const PROCESS_SET_RB = `
procs = Sidekiq::ProcessSet.new.map do |p|
  { "identity" => p.identity, "tag" => p.tag, "queues" => p.queues, "labels" => p.labels,
    "concurrency" => p["concurrency"], "busy" => p["busy"], "quiet" => p["quiet"], "stopping" => p.stopping?,
    "pid" => p["pid"], "hostname" => p["hostname"], "beat" => p["beat"], "beat_class" => p["beat"].class.name,
    "started_at" => p["started_at"], "started_at_class" => p["started_at"].class.name, "rss" => p["rss"] }
end
work = Sidekiq::Workers.new.map do |process_id, tid, w|
  { "process" => process_id, "tid" => tid, "queue" => w["queue"], "run_at" => w["run_at"],
    "run_at_class" => w["run_at"].class.name, "jid" => w["payload"]["jid"], "class" => w["payload"]["class"],
    "args" => w["payload"]["args"] }
end
{ "processes" => procs, "size" => Sidekiq::ProcessSet.new.size,
  "total_concurrency" => Sidekiq::ProcessSet.new.total_concurrency,
  "work" => work, "workers_size" => Sidekiq::Workers.new.size }
`;

test("Sidekiq::ProcessSet and Sidekiq::Workers show the tsq process, its queues, tag, concurrency and busy jobs", async (t) => {
  if (!requireRubySidekiq(t)) return;
  const { tsq, identity } = await startWorker(t);
  const client = testClient(t);
  const pid = tsq.child.pid!;
  assert.match(identity, new RegExp(`^${escapeRegExp(hostname())}:${pid}:[0-9a-f]{12}$`), "identity is host:pid:12hex");

  // One sleeper per queue, long enough (15 s) to still run at the next 10 s heartbeat. The time is taken
  // before the pushes: a job may start before this test's next line runs on a busy machine.
  const pushedAt = nowSeconds();
  const onDefault = await client.push({ class: "SleepJob", args: [15] });
  const onLow = await client.push({ class: "SleepJob", args: [15], queue: "low" });
  assert.ok(onDefault && onLow);
  await eventually(
    async () => (await redis.redis.llen("started")) === 2,
    10_000,
    `the two SleepJobs never started; output:\n${tsq.output().slice(-3000)}`,
  );
  const beatWait = Date.now();
  await eventually(
    async () => (await redis.redis.hget(identity, "busy")) === "2",
    ONE_BEAT_MS,
    'the process hash never showed busy "2"',
    200,
  );
  t.diagnostic(`busy "2" appeared ${((Date.now() - beatWait) / 1000).toFixed(1)} s after both jobs started`);

  const seen = await ruby<{
    processes: RubyProcess[];
    size: number;
    total_concurrency: number;
    work: RubyWork[];
    workers_size: number;
  }>(redis, PROCESS_SET_RB);
  assert.equal(seen.size, 1, "ProcessSet#size counts one process");
  assert.equal(seen.processes.length, 1, `ProcessSet lists one process: ${JSON.stringify(seen.processes)}`);
  const proc = seen.processes[0]!;
  assert.equal(proc.identity, identity);
  assert.equal(proc.tag, "mytag");
  assert.deepEqual(proc.queues, ["default", "low"]);
  assert.deepEqual(proc.labels, []);
  assert.equal(proc.concurrency, 4);
  assert.equal(seen.total_concurrency, 4);
  assert.equal(proc.busy, 2);
  assert.equal(proc.quiet, "false");
  assert.equal(proc.stopping, false);
  assert.equal(proc.pid, pid);
  assert.equal(proc.hostname, hostname());
  assert.equal(proc.beat_class, "Float");
  assert.equal(proc.started_at_class, "Float");
  const now = nowSeconds();
  assert.ok(
    now - proc.beat >= 0 && now - proc.beat < 12,
    `last beat ${proc.beat} is not within one interval of ${now}`,
  );
  assert.ok(
    proc.started_at <= pushedAt && pushedAt - proc.started_at < 30,
    `started_at ${proc.started_at} vs push at ${pushedAt}`,
  );
  assert.ok(proc.rss > 10_000, `rss ${proc.rss} KB is not a plausible Node RSS`);

  // Workers (WorkSet) in 6.4.1 reads `<identity>:workers`.
  assert.equal(seen.workers_size, 2, "WorkSet#size sums the busy fields");
  assert.equal(seen.work.length, 2, `Workers lists both running jobs: ${JSON.stringify(seen.work)}`);
  const byJid = new Map(seen.work.map((w) => [w.jid, w]));
  for (const [jid, queue] of [
    [onDefault, "default"],
    [onLow, "low"],
  ] as const) {
    const work = byJid.get(jid);
    assert.ok(work, `Workers does not show job ${jid}: ${JSON.stringify(seen.work)}`);
    assert.equal(work.process, identity);
    assert.equal(work.queue, queue);
    assert.equal(work.class, "SleepJob");
    assert.deepEqual(work.args, [15]);
    assert.equal(work.run_at_class, "Integer", "run_at is integer epoch seconds");
    assert.ok(work.run_at >= Math.floor(pushedAt) && work.run_at <= Math.ceil(nowSeconds()), `run_at ${work.run_at}`);
    assert.match(work.tid, /^[0-9a-z]+$/);
  }
  assert.notEqual(seen.work[0]!.tid, seen.work[1]!.tid, "each running job has its own tid");

  // A graceful stop lets the sleepers finish, then leaves `processes` and drops the work hash.
  assert.equal(await tsq.stop(30_000), 0);
  assert.equal(await redis.redis.llen("ran"), 2, "both SleepJobs finished before the process exited");
  assert.equal(await redis.redis.exists(legacyWorkKey(identity)), 0);
  const afterStop = await ruby<{ processes: RubyProcess[]; work: RubyWork[] }>(redis, PROCESS_SET_RB);
  assert.deepEqual(afterStop.processes, []);
  assert.deepEqual(afterStop.work, []);
});

test("Sidekiq::Stats reads the processed and failed counts tsq flushed (heartbeat, then stop)", async (t) => {
  if (!requireRubySidekiq(t)) return;
  const { tsq } = await startWorker(t);
  const client = testClient(t);

  for (let i = 0; i < 7; i++) await client.push({ class: "RecordJob", args: [i] });
  for (let i = 0; i < 3; i++) await client.push({ class: "FailJob", args: [`no retry ${i}`], retry: false });
  await eventually(
    async () => (await redis.redis.llen("ran")) === 7 && (await redis.redis.llen("failed-attempts")) === 3,
    10_000,
    "tsq did not run the 7 RecordJobs and 3 FailJobs",
  );
  // The next heartbeat flushes the counters.
  await eventually(
    async () => (await redis.redis.get("stat:processed")) === "10",
    ONE_BEAT_MS,
    "stat:processed never reached 10",
    200,
  );

  const STATS_RB = `
s = Sidekiq::Stats.new
h = Sidekiq::Stats::History.new(1)
{ "processed" => s.processed, "failed" => s.failed, "retry_size" => s.retry_size, "dead_size" => s.dead_size,
  "enqueued" => s.enqueued, "history_processed" => h.processed.values, "history_failed" => h.failed.values }
`;
  type Stats = {
    processed: number;
    failed: number;
    retry_size: number;
    dead_size: number;
    enqueued: number;
    history_processed: number[];
    history_failed: number[];
  };
  const stats = await ruby<Stats>(redis, STATS_RB);
  assert.deepEqual(stats, {
    processed: 10,
    failed: 3,
    retry_size: 0,
    dead_size: 0,
    enqueued: 0,
    history_processed: [10],
    history_failed: [3],
  });

  // Two more jobs right after that beat; the stop flushes them (the next beat is ~10 s away).
  for (let i = 0; i < 2; i++) await client.push({ class: "RecordJob", args: [`late ${i}`] });
  await eventually(async () => (await redis.redis.llen("ran")) === 9, 10_000, "the 2 late RecordJobs did not run");
  const beforeStop = await redis.redis.get("stat:processed");
  assert.equal(await tsq.stop(), 0);
  t.diagnostic(`stat:processed was ${beforeStop} just before TERM`);
  const final = await ruby<Stats>(redis, STATS_RB);
  assert.deepEqual(final, { ...stats, processed: 12, history_processed: [12] }, "stop flushed exactly the 2 late jobs");
});

test("Process#quiet! from Ruby quiets tsq (no new jobs), then Process#stop! makes it exit 0 and leave processes", async (t) => {
  if (!requireRubySidekiq(t)) return;
  const { tsq, identity } = await startWorker(t);
  const client = testClient(t);
  const FIND = 'p = Sidekiq::ProcessSet.new.find { |x| x.identity == ENV["TSQ_ID"] }';

  const quieted = await ruby<{ found: boolean }>(redis, `${FIND}\np&.quiet!\n{ "found" => !p.nil? }`, {
    TSQ_ID: identity,
  });
  assert.deepEqual(quieted, { found: true });
  const sentAt = Date.now();
  await tsq.waitForLine((line) => line.msg === "received remote signal" && line.signal === "TSTP", TWO_BEATS_MS);
  await tsq.waitForLine((line) => typeof line.msg === "string" && line.msg.includes("quieting"), 5000);
  await eventually(
    async () => (await redis.redis.hget(identity, "quiet")) === "true",
    TWO_BEATS_MS,
    'quiet never became "true"',
    200,
  );
  t.diagnostic(`quiet "true" ${((Date.now() - sentAt) / 1000).toFixed(1)} s after quiet!`);
  assert.equal(await redis.redis.llen(signalsKey(identity)), 0, "the heartbeat popped the TSTP");

  const state = await ruby<{ quiet: string; stopping: boolean }>(
    redis,
    `${FIND}\n{ "quiet" => p["quiet"], "stopping" => p.stopping? }`,
    {
      TSQ_ID: identity,
    },
  );
  assert.deepEqual(state, { quiet: "true", stopping: true });

  // A quiet process fetches nothing: the jobs stay queued through two BRPOP timeouts (2 s each).
  const jidDefault = await client.push({ class: "RecordJob", args: ["after quiet"] });
  const jidLow = await client.push({ class: "RecordJob", args: ["after quiet"], queue: "low" });
  await new Promise((resolve) => setTimeout(resolve, 4500));
  assert.equal(await redis.redis.llen("ran"), 0, "a quiet process ran a job");
  const queued = await ruby<Record<string, string[]>>(
    redis,
    '{ "default" => Sidekiq::Queue.new("default").map(&:jid), "low" => Sidekiq::Queue.new("low").map(&:jid) }',
  );
  assert.deepEqual(queued, { default: [jidDefault], low: [jidLow] });
  assert.equal(tsq.child.exitCode, null, "quiet must not stop the process");

  const stopped = await ruby<{ found: boolean }>(redis, `${FIND}\np&.stop!\n{ "found" => !p.nil? }`, {
    TSQ_ID: identity,
  });
  assert.deepEqual(stopped, { found: true });
  const stopSentAt = Date.now();
  const code = await within(tsq.exited, TWO_BEATS_MS, "still running");
  assert.equal(code, 0, `tsq did not exit 0 after stop!; output:\n${tsq.output().slice(-3000)}`);
  t.diagnostic(`exited ${((Date.now() - stopSentAt) / 1000).toFixed(1)} s after stop!`);
  assert.ok(tsq.lines.some((line) => line.msg === "received remote signal" && line.signal === "TERM"));
  assert.equal(await redis.redis.sismember(PROCESSES, identity), 0, "the stopped process left `processes`");
  const left = await ruby<{ identities: string[]; size: number; default: number; low: number }>(
    redis,
    '{ "identities" => Sidekiq::ProcessSet.new.map(&:identity), "size" => Sidekiq::ProcessSet.new.size, ' +
      '"default" => Sidekiq::Queue.new("default").size, "low" => Sidekiq::Queue.new("low").size }',
  );
  assert.deepEqual(
    left,
    { identities: [], size: 0, default: 1, low: 1 },
    "no process left, and the queued jobs were not lost",
  );
  assert.equal(await redis.redis.llen(queueKey("default")), 1);
});

test("a failed tsq job in RetrySet reads right in Ruby, and SortedEntry#retry makes tsq run it again", async (t) => {
  if (!requireRubySidekiq(t)) return;
  await startWorker(t);
  const client = testClient(t);

  // performAsync carries FailJob's static options (backtrace: 5) into the payload.
  const jid = await FailJob.set({ client }).performAsync("kaboom 42");
  assert.ok(jid);
  await eventually(
    async () => (await redis.redis.zcard(RETRY)) === 1,
    10_000,
    "the failed job never reached the retry set",
  );
  const failedAt = nowSeconds();

  const ENTRY_RB = `
e = Sidekiq::RetrySet.new.find_job(ENV["JID"])
e && { "size" => Sidekiq::RetrySet.new.size, "jid" => e.jid, "klass" => e.klass, "queue" => e.queue, "args" => e.args,
  "retry" => e["retry"], "retry_count" => e["retry_count"], "error_class" => e["error_class"],
  "error_message" => e["error_message"], "error_backtrace" => e.error_backtrace, "error" => e.error?,
  "failed_at" => e["failed_at"], "failed_at_class" => e["failed_at"].class.name,
  "retried_at" => e["retried_at"], "retried_at_class" => e["retried_at"].class.name, "score" => e.score,
  "first_jid" => Sidekiq::RetrySet.new.first.jid }
`;
  interface Entry {
    size: number;
    jid: string;
    klass: string;
    queue: string;
    args: unknown[];
    retry: unknown;
    retry_count: number;
    error_class: string;
    error_message: string;
    error_backtrace: unknown;
    error: boolean;
    failed_at: number;
    failed_at_class: string;
    retried_at: number | null;
    retried_at_class: string;
    score: number;
    first_jid: string;
  }
  const entry = await ruby<Entry | null>(redis, ENTRY_RB, { JID: jid });
  assert.ok(entry, "RetrySet#find_job did not find the job");
  assert.equal(entry.size, 1);
  assert.equal(entry.first_jid, jid, "RetrySet.new.first is the job");
  assert.equal(entry.klass, "FailJob");
  assert.equal(entry.queue, "default");
  assert.deepEqual(entry.args, ["kaboom 42"]);
  assert.equal(entry.retry, true);
  assert.equal(entry.retry_count, 0);
  assert.equal(entry.error_class, "Error");
  assert.equal(entry.error_message, "kaboom 42");
  assert.equal(entry.error, true);
  assert.equal(entry.failed_at_class, "Float");
  assert.ok(Math.abs(entry.failed_at - failedAt) < 10, `failed_at ${entry.failed_at} vs ${failedAt}`);
  assert.equal(entry.retried_at, null);
  // First retry: 0**4 + 15 s plus jitter rand(10) * 1.
  const delay = entry.score - entry.failed_at;
  assert.ok(delay >= 14.9 && delay < 25.1, `retry is due ${delay.toFixed(2)} s after the failure, not 15-24 s`);
  // JobRecord#error_backtrace: Base64 → Zlib::Inflate → JSON array, kept to `backtrace: 5` lines (the
  // job's own frames: tsq's chain adds no async frames of its own).
  assert.ok(
    Array.isArray(entry.error_backtrace),
    `error_backtrace is not an array: ${JSON.stringify(entry.error_backtrace)}`,
  );
  const frames = entry.error_backtrace as unknown[];
  assert.ok(frames.length >= 1 && frames.length <= 5, `expected 1 to 5 frames: ${JSON.stringify(frames)}`);
  for (const frame of frames)
    assert.ok(typeof frame === "string" && frame.length > 0, `bad frame ${JSON.stringify(frame)}`);
  assert.match(frames[0] as string, /FailJob\.perform .*testJobs\.js:\d+:\d+/, "the first frame is FailJob#perform");

  // Ruby's "Retry now": remove from `retry`, retry_count -= 1, Client.push back to the queue.
  const retried = await ruby<{ ok: boolean }>(
    redis,
    'e = Sidekiq::RetrySet.new.find_job(ENV["JID"])\ne&.retry\n{ "ok" => !e.nil? }',
    { JID: jid },
  );
  assert.deepEqual(retried, { ok: true });
  await eventually(
    async () => (await redis.redis.llen("failed-attempts")) === 2,
    10_000,
    "tsq did not run the retried job",
  );
  assert.deepEqual(await redis.redis.lrange("failed-attempts", 0, -1), [jid, jid]);
  await eventually(
    async () => (await redis.redis.zcard(RETRY)) === 1,
    10_000,
    "the second failure did not reach the retry set",
  );

  const second = await ruby<Entry | null>(redis, ENTRY_RB, { JID: jid });
  assert.ok(second, "the job is not back in the retry set");
  // Ruby's retry made retry_count -1; tsq's second failure adds 1, as Sidekiq's JobRetry does.
  assert.equal(second.retry_count, 0);
  assert.equal(second.retried_at_class, "Float");
  assert.ok(second.retried_at !== null && second.retried_at >= entry.failed_at);
  assert.equal(second.failed_at, entry.failed_at, "failed_at keeps the first failure");
  assert.equal(second.error_message, "kaboom 42");
  const again = second.error_backtrace as unknown[];
  assert.ok(again.length >= 1 && again.length <= 5, `expected 1 to 5 frames: ${JSON.stringify(again)}`);
  assert.match(again[0] as string, /FailJob\.perform /, "the second failure's first frame is FailJob#perform");
});
