/**
 * A fleet moving from Ruby to TypeScript keeps a sidekiq-cron schedule firing once per tick: a real
 * Sidekiq 6.4.1 with sidekiq-cron 1.8.0 (test/ruby/cron_fleet.rb) and a real `tsq` process opted in
 * with `sidekiq_cron: true` share one every-10-s schedule for a minute and a half:
 *
 *   0–30 s    Ruby alone
 *   30–60 s   Ruby and tsq together, racing for every tick
 *   60–90 s   tsq alone (Ruby stopped with TERM)
 *
 * Every tick is claimed once in `cron_job:<name>:enqueued` and has exactly one job; Ruby's jobs carry
 * CronTickJob's `retry: 3` (only the Ruby process has the class) and tsq's the stored message's default,
 * which shows who pushed each one. The jobs go to a queue nobody works, so they can be counted.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import type { JobPayload } from "../../src/wire/payload.js";
import { useRedis } from "../helpers/redis.js";
import { requireRubyLibrary, runRubyScript } from "../helpers/rails.js";
import { scratchDir } from "../helpers/fixtures.js";
import { rubyTestFile, startSidekiq, useSidekiqCleanup } from "../helpers/sidekiqProcess.js";
import { TEST_JOBS, eventually, startTsq } from "../helpers/tsqProcess.js";

const redis = useRedis();
useSidekiqCleanup();

const PHASE_MS = 30_000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const now = () => Date.now() / 1000;

test(
  "Ruby alone, then Ruby and tsq, then tsq alone: each tick of an every-10-s schedule enqueued exactly once",
  { timeout: 300_000 },
  async (t) => {
    if (!requireRubyLibrary(t, "sidekiq/cron/job", "ruby-sidekiq-cron")) return;
    const schedule = { name: "every10", cron: "*/10 * * * * *", class: "CronTickJob", queue: "ticks" };
    assert.deepEqual(await runRubyScript("cron_schedules.rb", ["create", JSON.stringify([schedule])], redis.url), {});
    const markedAtSave = new Set(await redis.redis.zrange("cron_job:every10:enqueued", 0, -1));

    const ruby = await startSidekiq({ redis, requireFile: rubyTestFile("cron_fleet.rb") });
    const rubyUp = now();
    await sleep(PHASE_MS);

    const dir = scratchDir("tsq-cron-fleet");
    const config = join(dir, "tsq.yml");
    writeFileSync(config, "sidekiq_cron: true\n");
    const tsqStarting = now();
    const tsq = startTsq(["-r", TEST_JOBS, "-q", "default", "-C", config], { REDIS_URL: redis.url });
    t.after(() => tsq.stop(10_000));
    await eventually(async () => (await redis.redis.scard("processes")) === 2, 30_000, "tsq registered");
    await sleep(Math.max(0, tsqStarting * 1000 + PHASE_MS - Date.now()));

    const status = await ruby.stop();
    assert.equal(status.killed, false, "Ruby stopped on TERM");
    const rubyGone = now();
    await sleep(PHASE_MS);
    const end = now();
    await tsq.stop(10_000);

    const members = await redis.redis.zrange("cron_job:every10:enqueued", 0, -1);
    const claimed = members.filter((iso) => !markedAtSave.has(iso)).map((iso) => Date.parse(iso) / 1000);
    const jobs = (await redis.redis.lrange("queue:ticks", 0, -1)).map((raw) => JSON.parse(raw) as JobPayload);
    // A tick T is pushed from T+1 s on (fugit's previous_time), within a poll interval.
    const tickOf = (job: JobPayload) => Math.floor(((job.created_at as number) - 1) / 10) * 10;
    const byTick = new Map<number, JobPayload[]>();
    for (const job of jobs) byTick.set(tickOf(job), [...(byTick.get(tickOf(job)) ?? []), job]);

    const report = [...byTick.entries()]
      .sort(([a], [b]) => a - b)
      .map(([tick, list]) => `${tick}: ${list.map((j) => (j.retry === 3 ? "ruby" : "tsq")).join("+")}`)
      .join(", ");
    t.diagnostic(`ticks by pusher: ${report}`);
    assert.equal(jobs.length, claimed.length, `one job per claimed tick (${report})`);
    for (const [tick, list] of byTick) assert.equal(list.length, 1, `tick ${tick} enqueued once (${report})`);
    assert.deepEqual([...byTick.keys()].sort(), [...claimed].sort(), "the jobs are the claimed ticks");

    // Ruby's first poll comes 0–5 s after it starts; from then on no tick may be missed.
    const firstCovered = Math.ceil((rubyUp + 6) / 10) * 10;
    for (let tick = firstCovered; tick + 3 <= end; tick += 10) {
      assert.ok(byTick.has(tick), `tick ${tick} enqueued (${report})`);
    }
    assert.ok(byTick.size >= 7, `${byTick.size} ticks in 90 s (${report})`);

    for (const [tick, [job]] of byTick) {
      const pushedBy = job!.retry === 3 ? "ruby" : "tsq";
      // A tick is due from T+1 s, and Ruby's poller may take up to ~8 s (a randomized 5 s average) to claim
      // it: a tsq starting in that window may rightly claim it first. Ticks due a full period earlier are Ruby's.
      if (tick + 10 < tsqStarting) assert.equal(pushedBy, "ruby", `tick ${tick}, before tsq started (${report})`);
      if (tick > rubyGone) assert.equal(pushedBy, "tsq", `tick ${tick}, after Ruby stopped (${report})`);
    }
  },
);
