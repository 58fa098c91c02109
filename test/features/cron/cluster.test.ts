/**
 * Periodic jobs in a real 3-child `tsq-cluster` (issue 9, "Must show"): a `* * * * * *` schedule for
 * 30 s enqueues exactly one job per second whichever child leads, and SIGKILLing the leader's child
 * mid-run neither duplicates nor (within the grace period) loses a tick once a new leader is elected.
 *
 * The schedule pushes to a queue the cluster does not work (`cron-test`), so every enqueued job stays
 * in Redis to be counted. Leader timings are shortened in the config file (TTL 2 s) so the failover
 * takes seconds, not a minute.
 */
import { test, type TestContext } from "node:test";
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { useRedis } from "../../helpers/redis.js";
import { TEST_JOBS, eventually, startTsq } from "../../helpers/tsqProcess.js";
import { scratchDir } from "../../helpers/fixtures.js";
import { withinDeadline } from "../../helpers/timing.js";

const handle = useRedis();

const CONFIG = `
heartbeat_interval: 1
leader_ttl: 2
leader_renew_interval: 0.5
leader_check_interval: 1
cron:
  every_second:
    cron: "* * * * * *"
    class: CronTickJob
    queue: cron-test
    description: one job per second, cluster-wide
`;

const sleepUntil = (epochSeconds: number) =>
  new Promise((r) => setTimeout(r, Math.max(0, epochSeconds * 1000 - Date.now())));
const nowS = () => Math.floor(Date.now() / 1000);

/** The leader's identity and pid (from its process hash), once one is elected and heartbeating. */
async function leader(): Promise<{ identity: string; pid: number } | undefined> {
  const identity = await handle.redis.get("dear-leader");
  if (identity === null) return undefined;
  const info = await handle.redis.hget(identity, "info");
  return info ? { identity, pid: (JSON.parse(info) as { pid: number }).pid } : undefined;
}

async function enqueuedTicks(): Promise<number[]> {
  const jobs = await handle.redis.lrange("queue:cron-test", 0, -1);
  return jobs.map((json) => (JSON.parse(json) as { cron_at: number }).cron_at).sort((a, b) => a - b);
}

/**
 * Starts a 3-child cluster on `config`, waits for a leader and its first tick, SIGKILLs the leader
 * `killAfter` s into a window starting at `start`, and waits for the next leader (polled every 50 ms).
 */
async function killLeaderMidRun(t: TestContext, config: string, killAfter: number, waitMs: number) {
  const cluster = startTsq(
    ["--processes", "3", "-r", TEST_JOBS, "-q", "default", "-C", config, "--metrics-port", "0"],
    { REDIS_URL: handle.url },
    "bin/tsq-cluster.js",
  );
  t.after(() => cluster.stop(15_000));
  await eventually(
    async () => (await handle.redis.scard("processes")) === 3,
    30_000,
    `3 children up; output:\n${cluster.output().slice(-3000)}`,
  );
  const first = await eventually(leader, 10_000, `a leader elected; output:\n${cluster.output().slice(-3000)}`);
  await eventually(async () => (await handle.redis.llen("queue:cron-test")) > 0, 5000, "the first tick enqueued");
  const start = nowS() + 1;
  await sleepUntil(start + killAfter);
  const killedAt = Date.now() / 1000;
  process.kill(first.pid, "SIGKILL");
  const second = await eventually(
    async () => {
      const now = await leader();
      return now && now.identity !== first.identity ? now : undefined;
    },
    waitMs,
    "a new leader after the SIGKILL",
    50,
  );
  return { cluster, first, second, start, killedAt, failoverSeconds: Date.now() / 1000 - killedAt };
}

test(
  "3 children, every-second schedule for 30 s: one job per second, and no duplicate after the leader is SIGKILLed",
  { timeout: 120_000 },
  async (t) => {
    const dir = scratchDir("tsq-cron-cluster");
    const config = join(dir, "tsq.yml");
    writeFileSync(config, CONFIG);
    const { cluster, first, second, start, killedAt, failoverSeconds } = await killLeaderMidRun(t, config, 12, 15_000);
    assert.notEqual(second.pid, first.pid);
    await sleepUntil(start + 30);
    const end = nowS();
    await cluster.stop(15_000);

    const ticks = await enqueuedTicks();
    assert.equal(new Set(ticks).size, ticks.length, `no tick enqueued twice: ${ticks.join(", ")}`);
    const window = ticks.filter((tick) => tick >= start && tick <= end);
    const seconds = end - start;
    assert.ok(Math.abs(window.length - seconds) <= 1, `${window.length} jobs in ${seconds} s (±1 at the edges)`);
    const inner = Array.from({ length: seconds - 1 }, (_, i) => start + 1 + i);
    assert.deepEqual(
      inner.filter((tick) => !ticks.includes(tick)),
      [],
      `every second between ${start} and ${end} has its job (failover took ${failoverSeconds.toFixed(1)} s)`,
    );
    assert.ok(
      ticks.some((tick) => tick > killedAt + failoverSeconds + 2),
      "the new leader kept the ticks going",
    );
    t.diagnostic(
      `leaders: pid ${first.pid} (SIGKILLed) then pid ${second.pid}; failover ${failoverSeconds.toFixed(1)} s; ${window.length} jobs in ${seconds} s`,
    );
  },
);

test(
  "default leader timings (60 s TTL): a SIGKILLed leader child is replaced within about a second, no tick lost or doubled",
  { timeout: 120_000 },
  async (t) => {
    const dir = scratchDir("tsq-cron-handover");
    const config = join(dir, "tsq.yml");
    // Only the schedule: leader_ttl and leader_check_interval keep their defaults (60 s each).
    writeFileSync(config, CONFIG.replace(/^leader_.*\n/gm, ""));
    const { cluster, first, second, start, failoverSeconds } = await killLeaderMidRun(t, config, 10, 10_000);
    await sleepUntil(start + 20);
    const end = nowS();
    await cluster.stop(15_000);

    // The nudge moves leadership at once, not at the 60 s TTL.
    withinDeadline(failoverSeconds * 1000, 0, "leadership moving after the leader's death");
    const ticks = await enqueuedTicks();
    assert.equal(new Set(ticks).size, ticks.length, `no tick enqueued twice: ${ticks.join(", ")}`);
    const expected = Array.from({ length: end - start - 1 }, (_, i) => start + 1 + i);
    assert.deepEqual(
      expected.filter((tick) => !ticks.includes(tick)),
      [],
      `every second between ${start} and ${end} has its job (failover ${failoverSeconds.toFixed(2)} s)`,
    );
    t.diagnostic(`leader pid ${first.pid} SIGKILLed; pid ${second.pid} took over in ${failoverSeconds.toFixed(2)} s`);
  },
);
