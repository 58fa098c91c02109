/**
 * The leader's scheduler (src/features/cron/CronScheduler.ts) against a private redis-server: one job per tick,
 * no duplicates with two overlapping leaders or across a leader change, missed ticks and catch_up,
 * disable/enable, and the schedule hash `tsqctl cron` reads.
 */
import { test, type TestContext } from "node:test";
import assert from "node:assert/strict";
import { CronScheduler, type LeaderView } from "../../../src/features/cron/CronScheduler.js";
import { CronStore } from "../../../src/features/cron/CronStore.js";
import type { CronEntry } from "../../../src/platform/config/cronEntry.js";
import { lastTickAtOrBefore } from "../../../src/features/cron/expression.js";
import { useRedis } from "../../helpers/redis.js";
import { testLauncher } from "../../helpers/context.js";
import { eventually } from "../../helpers/tsqProcess.js";

const handle = useRedis();

class TickJob {
  static options = { queue: "ticks", retry: 3 };
  perform(): void {}
}

const always: LeaderView = { isLeader: () => true };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function entry(overrides: Partial<CronEntry> = {}): CronEntry {
  return {
    name: "tick",
    cron: "* * * * * *",
    class: "TickJob",
    args: [1],
    enabled: true,
    catchUp: false,
    source: "test",
    ...overrides,
  };
}

function scheduler(t: TestContext, entries: CronEntry[], leader: LeaderView = always, grace = 60): CronScheduler {
  const ctx = testLauncher(handle.url, [TickJob]).ctx;
  const s = new CronScheduler(ctx, entries, leader, { grace, claimTtl: grace + 60 });
  t.after(() => s.stop());
  return s;
}

/** The jobs pushed to `queue:<queue>`, oldest first. */
async function queued(queue = "ticks"): Promise<Record<string, unknown>[]> {
  return (await handle.redis.lrange(`queue:${queue}`, 0, -1))
    .reverse()
    .map((json) => JSON.parse(json) as Record<string, unknown>);
}

function assertConsecutive(ticks: number[]): void {
  assert.equal(new Set(ticks).size, ticks.length, `no tick twice: ${ticks.join(", ")}`);
  const sorted = [...ticks].sort((a, b) => a - b);
  sorted.forEach((tick, i) => i > 0 && assert.equal(tick, sorted[i - 1]! + 1, `no gap: ${sorted.join(", ")}`));
}

test("an every-second schedule pushes one job per tick, with the class's options and the tick time", async (t) => {
  const s = scheduler(t, [entry()]);
  const start = Math.floor(Date.now() / 1000);
  s.start();
  s.start(); // idempotent
  await sleep(3500);
  await s.stop();
  await s.stop(); // idempotent
  const end = Math.floor(Date.now() / 1000);
  const jobs = await queued();
  const ticks = jobs.map((job) => job.cron_at as number);
  assertConsecutive(ticks);
  assert.ok(
    jobs.length >= end - start - 1 && jobs.length <= end - start + 1,
    `${jobs.length} jobs in ${end - start} s`,
  );
  const job = jobs[0]!;
  assert.equal(job.class, "TickJob");
  assert.deepEqual(job.args, [1]);
  assert.equal(job.queue, "ticks", "the class's static options.queue applies");
  assert.equal(job.retry, 3);
  assert.equal(job.cron, "tick");
  assert.ok(
    typeof job.created_at === "number" && Math.abs(job.created_at - (job.cron_at as number)) < 1.5,
    "pushed on time",
  );

  const stored = await new CronStore(handle.redis).get("tick");
  assert.ok(stored);
  assert.equal(stored.lastTick, Math.max(...ticks));
  assert.equal(stored.lastJid, jobs.at(-1)!.jid);
  assert.equal(stored.cursor, Math.max(...ticks));
  assert.ok(stored.nextRun !== undefined && stored.nextRun > stored.lastTick);
  assert.equal(stored.queue, "ticks");
  assert.deepEqual(stored.jobOptions, { queue: "ticks", retry: 3 });
  assert.equal((await handle.redis.get(`tsq:cron-tick:tick:${ticks[0]}`)) !== null, true, "each tick was claimed");
});

test("two leaders overlapping for seconds push each tick once", async (t) => {
  const a = scheduler(t, [entry()]);
  const b = scheduler(t, [entry()]);
  a.start();
  b.start();
  await sleep(4200);
  await Promise.all([a.stop(), b.stop()]);
  const ticks = (await queued()).map((job) => job.cron_at as number);
  assert.ok(ticks.length >= 3, `got ${ticks.length} jobs`);
  assertConsecutive(ticks);
});

test("a new leader resumes after the old one's last tick: no duplicate, the gap within grace is filled", async (t) => {
  const first = scheduler(t, [entry()]);
  first.start();
  await sleep(2200);
  await first.stop(); // as if it died: no one schedules for the next 2 s
  const before = (await queued()).length;
  await sleep(2000);
  const second = scheduler(t, [entry()]);
  second.start();
  await sleep(1500);
  await second.stop();
  const ticks = (await queued()).map((job) => job.cron_at as number);
  assert.ok(ticks.length >= before + 3, `the gap was filled: ${before} then ${ticks.length}`);
  assertConsecutive(ticks);
});

test("missed ticks beyond the grace period are dropped; catch_up enqueues only the most recent", async (t) => {
  // An hourly expression whose last tick is at least 29 minutes old: always "missed" with a 60 s grace.
  const minute = (new Date().getUTCMinutes() + 30) % 60;
  const hourly = { cron: `${minute} * * * *`, tz: "UTC" };
  const now = Math.floor(Date.now() / 1000);
  const store = new CronStore(handle.redis);
  const seed = async (name: string) => {
    await handle.redis.hset(`tsq:cron:${name}`, {
      name,
      cron: hourly.cron,
      cursor: String(now - 5 * 3600),
      since: String(now - 86400),
    });
    await handle.redis.sadd("tsq:cron", name);
  };
  await seed("dropped");
  await seed("caught");
  const s = scheduler(t, [entry({ name: "dropped", ...hourly }), entry({ name: "caught", catchUp: true, ...hourly })]);
  await s.pass();
  await s.pass(); // nothing more: the cursor moved past the missed ticks
  const jobs = await queued();
  assert.deepEqual(
    jobs.map((job) => job.cron),
    ["caught"],
  );
  assert.equal(jobs[0]!.cron_at, lastTickAtOrBefore({ name: "caught", ...hourly }, now));
  assert.equal((await store.get("caught"))?.lastTick, jobs[0]!.cron_at);
  assert.equal((await store.get("dropped"))?.lastTick, undefined);
});

test("a schedule seen for the first time starts now: nothing from before it existed is enqueued", async (t) => {
  const minute = (new Date().getUTCMinutes() + 30) % 60;
  const s = scheduler(t, [entry({ name: "fresh", cron: `${minute} * * * *`, tz: "UTC", catchUp: true })]);
  await s.pass();
  assert.equal((await queued()).length, 0);
  const stored = await new CronStore(handle.redis).get("fresh");
  assert.ok(stored?.since !== undefined && stored.nextRun !== undefined, "stored with since and next_run");
});

test("a disabled schedule skips its ticks; enabling resumes it; a follower enqueues nothing", async (t) => {
  let leading = true;
  const s = scheduler(t, [entry()], { isLeader: () => leading });
  const store = new CronStore(handle.redis);
  s.start();
  await eventually(async () => (await queued()).length > 0, 3000, "first tick");
  assert.equal(await store.setEnabled("tick", false), true);
  assert.equal(await store.setEnabled("nope", false), false);
  await sleep(300); // a tick already claimed may still be pushed
  const whileDisabled = (await queued()).length;
  await sleep(2200);
  assert.equal((await queued()).length, whileDisabled, "no job while disabled");
  await store.setEnabled("tick", true);
  await eventually(async () => (await queued()).length > whileDisabled, 3000, "ticks resume");
  leading = false;
  await sleep(1200);
  const asFollower = (await queued()).length;
  await sleep(1500);
  assert.equal((await queued()).length, asFollower, "no job while following");
  const ticks = (await queued()).map((job) => job.cron_at as number);
  assert.equal(new Set(ticks).size, ticks.length, "no tick twice");
});

test("a new leader's sync replaces the stored schedules; a stale leader cannot push a removed one", async (t) => {
  const store = new CronStore(handle.redis);
  const old = scheduler(t, [
    entry({ name: "old", cron: "0 0 1 1 *" }),
    entry({ name: "kept", cron: "0 0 1 1 *", enabled: false }),
  ]);
  await old.pass();
  assert.deepEqual(
    (await store.list()).map((s) => s.name),
    ["kept", "old"],
  );
  await store.setEnabled("kept", true); // the operator's switch survives a sync that does not change `enabled:`
  const fresh = scheduler(t, [entry({ name: "kept", cron: "0 0 1 1 *", enabled: false }), entry({ name: "tick" })]);
  await fresh.pass();
  assert.deepEqual(
    (await store.list()).map((s) => s.name),
    ["kept", "tick"],
  );
  assert.equal((await store.get("kept"))?.enabled, true);
  assert.equal(await store.claim({ name: "old", tick: 1_800_000_000, identity: "stale", ttlSeconds: 60 }), "gone");
  // The config flipping `enabled:` wins over the operator's earlier switch.
  const flipped = scheduler(t, [entry({ name: "kept", cron: "0 0 1 1 *", enabled: true })]);
  await store.setEnabled("kept", false);
  await flipped.pass();
  assert.equal((await store.get("kept"))?.enabled, true);
});
