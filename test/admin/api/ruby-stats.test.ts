/**
 * tsq's Stats read the counters, sizes and history a real Ruby Sidekiq 6.4.1 process and Ruby's
 * client wrote, and agree with Ruby's own `Sidekiq::Stats`; a reset through tsq is what Ruby sees.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { Queue, Stats } from "../../../src/admin/api/index.js";
import { useRedis } from "../../helpers/redis.js";
import { requireRubySidekiq } from "../../helpers/ruby.js";
import { rubyTestFile, startSidekiq, useSidekiqCleanup } from "../../helpers/sidekiqProcess.js";
import { eventually } from "../../helpers/tsqProcess.js";
import { ruby } from "./rubyApi.js";

const redis = useRedis();
useSidekiqCleanup();

const RUBY_STATS = `s = Sidekiq::Stats.new
h = Sidekiq::Stats::History.new(3)
{ "processed" => s.processed, "failed" => s.failed, "scheduled_size" => s.scheduled_size, "retry_size" => s.retry_size,
  "dead_size" => s.dead_size, "processes_size" => s.processes_size, "workers_size" => s.workers_size,
  "enqueued" => s.enqueued, "queues" => s.queues.to_a, "history" => { "processed" => h.processed, "failed" => h.failed },
  "waiting_latency" => Sidekiq::Queue.new("waiting").latency }`;

interface RubyStats {
  processed: number;
  failed: number;
  scheduled_size: number;
  retry_size: number;
  dead_size: number;
  processes_size: number;
  workers_size: number;
  enqueued: number;
  queues: [string, number][];
  history: { processed: Record<string, number>; failed: Record<string, number> };
  waiting_latency: number;
}

test("Stats agrees with Sidekiq::Stats on what a Ruby process and Ruby's client wrote; reset reaches Ruby", async (t) => {
  if (!requireRubySidekiq(t)) return;
  const sidekiq = await startSidekiq({ redis, requireFile: rubyTestFile("api_jobs.rb") });
  await ruby(
    redis,
    `4.times { |i| Sidekiq::Client.push("class" => "RecordJob", "args" => ["ok", i]) }
     2.times { |i| Sidekiq::Client.push("class" => "RecordJob", "args" => ["fail", i], "retry" => 0) }
     3.times { |i| Sidekiq::Client.push("class" => "RecordJob", "args" => [i], "queue" => "waiting") }
     Sidekiq::Client.push("class" => "RecordJob", "args" => [], "at" => Time.now.to_f + 3600)
     true`,
  );
  // 6.4.1 flushes its counters with the heartbeat, every 5 s.
  await eventually(
    async () => (await redis.redis.get("stat:processed")) === "6",
    15_000,
    `stat:processed never reached 6; log:\n${sidekiq.output().slice(-2000)}`,
    200,
  );

  const stats = new Stats(redis.redis);
  const snapshot = await stats.fetch();
  const history = await stats.history(3);
  const waitingLatency = await new Queue(redis.redis, "waiting").latency();
  const { waiting_latency: rubyLatency, ...rubyView } = await ruby<RubyStats>(redis, RUBY_STATS);
  const latencyAfter = await new Queue(redis.redis, "waiting").latency();
  assert.deepEqual(
    {
      processed: snapshot.processed,
      failed: snapshot.failed,
      scheduled_size: snapshot.scheduledSize,
      retry_size: snapshot.retrySize,
      dead_size: snapshot.deadSize,
      processes_size: snapshot.processesSize,
      workers_size: snapshot.workersSize,
      enqueued: snapshot.enqueued,
      queues: [...snapshot.queues],
      history,
    },
    rubyView,
  );
  assert.deepEqual(
    [snapshot.processed, snapshot.failed, snapshot.deadSize, snapshot.scheduledSize, snapshot.enqueued],
    [6, 2, 2, 1, 3],
  );
  assert.deepEqual(
    [...snapshot.queues],
    [
      ["waiting", 3],
      ["default", 0],
    ],
  );
  assert.equal(Object.values(history.processed)[0], 6, "today's daily counter");
  // Latency grows while Ruby starts (seconds on a busy machine): Ruby's reading falls between tsq's
  // before and after it (10 ms for rounding).
  assert.ok(
    rubyLatency >= waitingLatency - 0.01 && rubyLatency <= latencyAfter + 0.01,
    `Ruby latency ${rubyLatency} between tsq's ${waitingLatency} and ${latencyAfter}`,
  );
  assert.ok(waitingLatency > 0);

  await stats.reset("failed");
  const after = await ruby<RubyStats>(redis, RUBY_STATS);
  assert.deepEqual(
    [after.processed, after.failed, after.history.failed[Object.keys(after.history.failed)[0]!]],
    [6, 0, 2],
  );
});
