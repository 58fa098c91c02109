/**
 * A mixed fleet: one Ruby Sidekiq 6.4.1 process and one tsq process share queue `default` and drain
 * 20,000 FleetJobs, half pushed by Ruby's `Sidekiq::Client.push_bulk`, half by tsq's `Client#pushBulk`,
 * both pushes running while both workers consume. FleetJob exists on both sides (test/ruby/fleet.rb,
 * test/jobs/testJobs.ts): each run RPUSHes its jid to `fleet` and INCRs `fleet:ruby` or `fleet:tsq`.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { performance } from "node:perf_hooks";
import { Client } from "../../src/client/Client.js";
import { PROCESSES, queueKey } from "../../src/wire/keys.js";
import { useRedis, type RedisHandle } from "../helpers/redis.js";
import { requireRubySidekiq } from "../helpers/ruby.js";
import { rubyTestFile, startSidekiq, useSidekiqCleanup } from "../helpers/sidekiqProcess.js";
import { TEST_JOBS, eventually, startTsq } from "../helpers/tsqProcess.js";

const redis = useRedis();
useSidekiqCleanup();

const PER_SIDE = 10_000;
const FLEET_RB = rubyTestFile("fleet.rb");

/** `Sidekiq::Client.push_bulk` of `count` FleetJobs from a Ruby process; resolves to their jids. */
function rubyPushBulk(handle: RedisHandle, count: number): Promise<string[]> {
  const script = [
    'require "json"',
    'jids = Sidekiq::Client.push_bulk("class" => "FleetJob", "queue" => "default", ' +
      `"args" => (0...${count}).map { |i| ["ruby", i] })`,
    '$stdout.puts("@@JIDS " + JSON.generate(jids))',
  ].join("\n");
  return new Promise((resolve, reject) => {
    execFile(
      "ruby",
      ["-r", FLEET_RB, "-e", script],
      { env: { ...process.env, REDIS_URL: handle.url }, maxBuffer: 64 * 1024 * 1024 },
      (error, stdout, stderr) => {
        if (error) return reject(new Error(`Ruby push_bulk failed: ${error.message}\n${stderr}`));
        const line = stdout.split("\n").find((l) => l.startsWith("@@JIDS "));
        if (!line)
          return reject(
            new Error(`Ruby push_bulk printed no jids; stdout:\n${stdout.slice(-2000)}\nstderr:\n${stderr}`),
          );
        resolve(JSON.parse(line.slice("@@JIDS ".length)) as string[]);
      },
    );
  });
}

test("Ruby sidekiq and tsq on one queue drain 20,000 jobs pushed by both clients, each exactly once", async (t) => {
  if (!requireRubySidekiq(t)) return;
  const sidekiq = await startSidekiq({ redis, queues: ["default"], concurrency: 10, requireFile: FLEET_RB });
  t.after(() => sidekiq.stop());
  const tsq = startTsq(["-r", TEST_JOBS, "-q", "default", "-c", "10"], { REDIS_URL: redis.url });
  t.after(() => tsq.stop(15_000));
  const started = await tsq.waitForLine((line) => line.msg === "tsq worker started");
  await eventually(
    async () => (await redis.redis.sismember(PROCESSES, String(started.identity))) === 1,
    10_000,
    "tsq never registered in processes",
  );
  assert.equal(await redis.redis.scard(PROCESSES), 2, "both workers are registered");

  // Made here, not in a file-level `before`: Node 20 runs that before useRedis's async `before` has
  // set redis.url, and the client would fall back to REDIS_URL.
  assert.ok(redis.url, "the private Redis is not up yet");
  const client = new Client({ redis: redis.url });
  t.after(() => client.close());

  const start = performance.now();
  const [rubyJids, tsqJids] = await Promise.all([
    rubyPushBulk(redis, PER_SIDE),
    client.pushBulk({ class: "FleetJob", args: Array.from({ length: PER_SIDE }, (_, i) => ["tsq", i]) }),
  ]);
  const pushMs = performance.now() - start;
  assert.equal(rubyJids.length, PER_SIDE);
  assert.equal(tsqJids.length, PER_SIDE);
  const pushed = new Set<string>([...rubyJids, ...tsqJids.map((jid) => jid!)]);
  assert.equal(pushed.size, 2 * PER_SIDE, "every pushed job has its own jid");

  const total = 2 * PER_SIDE;
  let done: number;
  const deadline = Date.now() + 100_000;
  let last = -1;
  let lastChange = Date.now();
  while ((done = await redis.redis.llen("fleet")) < total) {
    const failed = await redis.redis.zrange("retry", 0, 0);
    if (failed.length > 0) assert.fail(`a FleetJob failed instead of running: ${failed[0]}`);
    if (done !== last) [last, lastChange] = [done, Date.now()];
    // Nothing left to fetch and no progress for 10 s: the missing jobs were lost, not slow.
    if (Date.now() - lastChange > 10_000 && (await redis.redis.llen(queueKey("default"))) === 0) break;
    if (Date.now() > deadline) {
      assert.fail(
        `only ${done} of ${total} jobs ran within 100 s (queue left: ${await redis.redis.llen(queueKey("default"))})\n` +
          `sidekiq log tail:\n${sidekiq.output().slice(-2000)}\ntsq log tail:\n${tsq.output().slice(-2000)}`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const drainMs = performance.now() - start;
  // A duplicate run would show up as extra entries shortly after the last one.
  await new Promise((resolve) => setTimeout(resolve, 1500));

  const ran = await redis.redis.lrange("fleet", 0, -1);
  const ranSet = new Set(ran);
  const duplicates = ran.length - ranSet.size;
  const missing = [...pushed].filter((jid) => !ranSet.has(jid));
  const unknown = [...ranSet].filter((jid) => !pushed.has(jid));
  assert.equal(duplicates, 0, `${duplicates} jobs ran more than once`);
  assert.deepEqual(missing, [], `${missing.length} pushed jobs never ran`);
  assert.deepEqual(unknown, [], "a jid that nobody pushed ran");
  assert.equal(ran.length, total);
  assert.equal(await redis.redis.llen(queueKey("default")), 0, "the queue is drained");
  assert.equal(await redis.redis.zcard("retry"), 0, "no job failed");
  assert.equal(await redis.redis.zcard("dead"), 0);

  const byRuby = Number(await redis.redis.get("fleet:ruby"));
  const byTsq = Number(await redis.redis.get("fleet:tsq"));
  assert.equal(byRuby + byTsq, total, "the per-side counters add up to the jobs run");
  assert.ok(byRuby > 0, "Ruby sidekiq ran none of the jobs");
  assert.ok(byTsq > 0, "tsq ran none of the jobs");

  const message =
    `mixed fleet: ${total} jobs (${PER_SIDE} Ruby push_bulk + ${PER_SIDE} tsq pushBulk, pushed in ${(pushMs / 1000).toFixed(1)} s) ` +
    `drained in ${(drainMs / 1000).toFixed(1)} s (${Math.round(total / (drainMs / 1000))} jobs/s); ` +
    `Ruby sidekiq -c 10 ran ${byRuby}, tsq -c 10 ran ${byTsq}`;
  t.diagnostic(message);
  console.log(`# ${message}`);

  assert.equal(await tsq.stop(), 0, "tsq exits 0");
  const status = await sidekiq.stop();
  assert.deepEqual(status, { code: 0, signal: null, killed: false }, "sidekiq exits 0 on TERM");
});
