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
import { ManualClock } from "../../helpers/manualClock.js";

const handle = useRedis();

class TickJob {
  static options = { queue: "ticks", retry: 3 };
  perform(): void {}
}

const always: LeaderView = { isLeader: () => true };
/** 2030-01-01T00:00:00Z, epoch s: every test's clock starts on this whole second. */
const T0 = Date.UTC(2030, 0, 1) / 1000;

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

function scheduler(
  t: TestContext,
  clock: ManualClock,
  entries: CronEntry[],
  leader: LeaderView = always,
  grace = 60,
): CronScheduler {
  const ctx = testLauncher(handle.url, [TickJob], { clock }).ctx;
  const s = new CronScheduler(ctx, entries, leader, { grace, claimTtl: grace + 60 });
  t.after(() => s.stop());
  return s;
}

/**
 * Moves `clock` forward `ms`, letting each started scheduler finish its pass and go back to sleep
 * before the next timer fires, so a pass at every due moment is certain however busy the machine.
 */
function run(clock: ManualClock, ms: number, schedulers = 1): Promise<void> {
  return clock.advance(ms, () => clock.waitForTimers(schedulers));
}

/** The jobs pushed to `queue:<queue>`, oldest first. */
async function queued(queue = "ticks"): Promise<Record<string, unknown>[]> {
  return (await handle.redis.lrange(`queue:${queue}`, 0, -1))
    .reverse()
    .map((json) => JSON.parse(json) as Record<string, unknown>);
}

const ticksOf = async (): Promise<number[]> => (await queued()).map((job) => job.cron_at as number);
/** T0 + each offset, in s. */
const at = (...offsets: number[]): number[] => offsets.map((offset) => T0 + offset);

test("an every-second schedule pushes one job per tick, with the class's options and the tick time", async (t) => {
  const clock = new ManualClock(T0 * 1000);
  const s = scheduler(t, clock, [entry()]);
  s.start();
  s.start(); // idempotent
  await clock.waitForTimers(1);
  await run(clock, 5000);
  await s.stop();
  await s.stop(); // idempotent
  assert.equal(clock.pending, 0, "no timer left after stop");
  const jobs = await queued();
  assert.deepEqual(
    jobs.map((job) => job.cron_at),
    at(1, 2, 3, 4, 5),
    "each tick of the 5 s once, in order",
  );
  const job = jobs[0]!;
  assert.equal(job.class, "TickJob");
  assert.deepEqual(job.args, [1]);
  assert.equal(job.queue, "ticks", "the class's static options.queue applies");
  assert.equal(job.retry, 3);
  assert.equal(job.cron, "tick");

  const stored = await new CronStore(handle.redis).get("tick");
  assert.ok(stored);
  assert.equal(stored.lastTick, T0 + 5);
  assert.equal(stored.lastJid, jobs.at(-1)!.jid);
  assert.equal(stored.cursor, T0 + 5);
  assert.equal(stored.nextRun, T0 + 6);
  assert.equal(stored.queue, "ticks");
  assert.deepEqual(stored.jobOptions, { queue: "ticks", retry: 3 });
  assert.equal((await handle.redis.get(`tsq:cron-tick:tick:${T0 + 1}`)) !== null, true, "each tick was claimed");
});

test("two leaders passing at the same moments push each tick once", async (t) => {
  const clock = new ManualClock(T0 * 1000);
  const a = scheduler(t, clock, [entry()]);
  const b = scheduler(t, clock, [entry()]);
  a.start();
  b.start();
  await clock.waitForTimers(2);
  await run(clock, 4000, 2);
  await Promise.all([a.stop(), b.stop()]);
  assert.deepEqual(await ticksOf(), at(1, 2, 3, 4));
});

test("a new leader resumes after the old one's last tick: no duplicate, the gap within grace is filled", async (t) => {
  const clock = new ManualClock(T0 * 1000);
  const first = scheduler(t, clock, [entry()]);
  first.start();
  await clock.waitForTimers(1);
  await run(clock, 2000);
  await first.stop(); // as if it died: no one schedules for the next 2 s
  assert.deepEqual(await ticksOf(), at(1, 2));
  await clock.advance(2000);
  const second = scheduler(t, clock, [entry()]);
  second.start();
  await clock.waitForTimers(1);
  assert.deepEqual(await ticksOf(), at(1, 2, 3, 4), "the gap was filled at once");
  await run(clock, 1000);
  await second.stop();
  assert.deepEqual(await ticksOf(), at(1, 2, 3, 4, 5));
});

test("missed ticks beyond the grace period are dropped; catch_up enqueues only the most recent", async (t) => {
  // An hourly expression whose last tick (23:30 the day before) is 30 minutes old: "missed" with a 60 s grace.
  const hourly = { cron: "30 * * * *", tz: "UTC" };
  const clock = new ManualClock(T0 * 1000);
  const store = new CronStore(handle.redis);
  const seed = async (name: string) => {
    await handle.redis.hset(`tsq:cron:${name}`, {
      name,
      cron: hourly.cron,
      cursor: String(T0 - 5 * 3600),
      since: String(T0 - 86400),
    });
    await handle.redis.sadd("tsq:cron", name);
  };
  await seed("dropped");
  await seed("caught");
  const s = scheduler(t, clock, [
    entry({ name: "dropped", ...hourly }),
    entry({ name: "caught", catchUp: true, ...hourly }),
  ]);
  await s.pass();
  await clock.advance(1000);
  await s.pass(); // nothing more: the cursor moved past the missed ticks
  const jobs = await queued();
  assert.deepEqual(
    jobs.map((job) => job.cron),
    ["caught"],
  );
  assert.equal(jobs[0]!.cron_at, T0 - 1800);
  assert.equal(jobs[0]!.cron_at, lastTickAtOrBefore({ name: "caught", ...hourly }, T0));
  assert.equal((await store.get("caught"))?.lastTick, jobs[0]!.cron_at);
  assert.equal((await store.get("dropped"))?.lastTick, undefined);
});

test("a schedule seen for the first time starts now: nothing from before it existed is enqueued", async (t) => {
  const clock = new ManualClock(T0 * 1000);
  const s = scheduler(t, clock, [entry({ name: "fresh", cron: "30 * * * *", tz: "UTC", catchUp: true })]);
  await s.pass();
  assert.equal((await queued()).length, 0);
  const stored = await new CronStore(handle.redis).get("fresh");
  assert.equal(stored?.since, T0, "stored with since");
  assert.equal(stored.nextRun, T0 + 1800, "and next_run");
});

test("a disabled schedule skips its ticks; enabling resumes it; a follower enqueues nothing", async (t) => {
  let leading = true;
  const clock = new ManualClock(T0 * 1000);
  const s = scheduler(t, clock, [entry()], { isLeader: () => leading });
  const store = new CronStore(handle.redis);
  s.start();
  await clock.waitForTimers(1);
  await run(clock, 2000);
  assert.deepEqual(await ticksOf(), at(1, 2));
  assert.equal(await store.setEnabled("tick", false), true);
  assert.equal(await store.setEnabled("nope", false), false);
  await run(clock, 3000);
  assert.deepEqual(await ticksOf(), at(1, 2), "no job while disabled");
  assert.equal(await store.setEnabled("tick", true), true);
  await run(clock, 2000);
  assert.deepEqual(await ticksOf(), at(1, 2, 6, 7), "the ticks after enabling, not the skipped ones");
  leading = false;
  await run(clock, 3000);
  assert.deepEqual(await ticksOf(), at(1, 2, 6, 7), "no job while following");
  assert.equal((await store.get("tick"))?.cursor, T0 + 7, "a follower moves no cursor");
});

test("a new leader's sync replaces the stored schedules; a stale leader cannot push a removed one", async (t) => {
  const store = new CronStore(handle.redis);
  const clock = new ManualClock(T0 * 1000);
  const old = scheduler(t, clock, [
    entry({ name: "old", cron: "0 0 1 1 *" }),
    entry({ name: "kept", cron: "0 0 1 1 *", enabled: false }),
  ]);
  await old.pass();
  assert.deepEqual(
    (await store.list()).map((s) => s.name),
    ["kept", "old"],
  );
  await store.setEnabled("kept", true); // the operator's switch survives a sync that does not change `enabled:`
  const fresh = scheduler(t, clock, [
    entry({ name: "kept", cron: "0 0 1 1 *", enabled: false }),
    entry({ name: "tick" }),
  ]);
  await fresh.pass();
  assert.deepEqual(
    (await store.list()).map((s) => s.name),
    ["kept", "tick"],
  );
  assert.equal((await store.get("kept"))?.enabled, true);
  assert.equal(await store.claim({ name: "old", tick: 1_800_000_000, identity: "stale", ttlSeconds: 60 }), "gone");
  // The config flipping `enabled:` wins over the operator's earlier switch.
  const flipped = scheduler(t, clock, [entry({ name: "kept", cron: "0 0 1 1 *", enabled: true })]);
  await store.setEnabled("kept", false);
  await flipped.pass();
  assert.equal((await store.get("kept"))?.enabled, true);
});
