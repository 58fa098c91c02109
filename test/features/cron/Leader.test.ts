/**
 * Leader election on `dear-leader` (src/features/cron/Leader.ts), among in-process contexts that each have their
 * own identity, against a private redis-server.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { performance } from "node:perf_hooks";
import { Leader, type LeaderTiming } from "../../../src/features/cron/Leader.js";
import type { ServerContext } from "../../../src/server/context.js";
import { useRedis } from "../../helpers/redis.js";
import { testLauncher } from "../../helpers/context.js";
import { eventually } from "../../helpers/tsqProcess.js";
import { ManualClock } from "../../helpers/manualClock.js";

const handle = useRedis();
const FAST: LeaderTiming = { ttl: 2, renewInterval: 0.5, checkInterval: 1 };

function leaders(
  n: number,
  timing = FAST,
  t?: { after(fn: () => Promise<void>): void },
  clock?: ManualClock,
): { leader: Leader; ctx: ServerContext }[] {
  return Array.from({ length: n }, () => {
    const ctx = testLauncher(handle.url, [], clock ? { clock } : {}).ctx;
    const leader = new Leader(ctx, timing);
    t?.after(() => leader.stop());
    return { leader, ctx };
  });
}

test("exactly one of three processes is elected, and dear-leader holds its identity", async (t) => {
  const clock = new ManualClock();
  const all = leaders(3, FAST, t, clock);
  for (const { leader } of all) leader.start();
  const elected = await eventually(
    async () => {
      const winners = all.filter((p) => p.leader.isLeader());
      return winners.length === 1 ? winners[0] : undefined;
    },
    5000,
    "one leader elected",
  );
  assert.equal(await handle.redis.get("dear-leader"), elected.ctx.identity);
  const ttl = await handle.redis.ttl("dear-leader");
  assert.ok(ttl > 0 && ttl <= FAST.ttl, `dear-leader has a TTL of at most ${FAST.ttl} s, got ${ttl}`);
  // Renewals keep it: after several TTLs of the leaders' clock the same process still leads, and only it.
  await clock.waitForTimers(3);
  await clock.advance(FAST.ttl * 1000 * 3, () => clock.waitForTimers(3));
  assert.deepEqual(
    all.map((p) => p.leader.isLeader()),
    all.map((p) => p === elected),
  );
  assert.equal(await handle.redis.get("dear-leader"), elected.ctx.identity);
});

test("stop steps down (deletes the record) and a follower takes over", async (t) => {
  const all = leaders(2, { ttl: 30, renewInterval: 1, checkInterval: 1 }, t);
  for (const { leader } of all) leader.start();
  const first = await eventually(async () => all.find((p) => p.leader.isLeader()), 5000, "a leader");
  await first.leader.stop();
  await first.leader.stop(); // idempotent
  assert.equal(first.leader.isLeader(), false);
  const started = performance.now();
  const second = await eventually(async () => all.find((p) => p.leader.isLeader()), 5000, "a new leader");
  assert.notEqual(second, first);
  assert.ok(performance.now() - started < 3000, "took over at its next check, not after the 30 s TTL");
  assert.equal(await handle.redis.get("dear-leader"), second.ctx.identity);
});

test("a follower takes over as soon as a dead leader's record expires, before its check interval", async (t) => {
  // A leader that died without stepping down (SIGKILL): its record lives out its TTL.
  await handle.redis.set("dear-leader", "host:1:deadbeef0000", "EX", 2);
  const [follower] = leaders(1, { ttl: 5, renewInterval: 1, checkInterval: 60 }, t);
  follower!.leader.start();
  await new Promise((r) => setTimeout(r, 500));
  assert.equal(follower!.leader.isLeader(), false, "the record still names the dead process");
  await eventually(async () => follower!.leader.isLeader(), 4000, "took over within ~2 s, not 60 s");
  assert.equal(await handle.redis.get("dear-leader"), follower!.ctx.identity);
});

test("renewal only extends our own record: a leader whose record was taken steps down and leaves it", async (t) => {
  const [only] = leaders(1, FAST, t);
  only!.leader.start();
  await eventually(async () => only!.leader.isLeader(), 5000, "elected");
  await handle.redis.set("dear-leader", "other:2:abcdefabcdef", "EX", 30);
  await eventually(async () => !only!.leader.isLeader(), 3000, "stepped down at the next renewal");
  await only!.leader.stop();
  assert.equal(
    await handle.redis.get("dear-leader"),
    "other:2:abcdefabcdef",
    "stop did not delete another process's record",
  );
});

test("a leader that cannot renew stops calling itself leader when its record may have expired, not before", async (t) => {
  const clock = new ManualClock();
  const [only] = leaders(1, FAST, t, clock);
  only!.leader.start();
  await eventually(async () => only!.leader.isLeader(), 5000, "elected");
  await clock.waitForTimers(1);
  only!.ctx.redis.disconnect(); // every renewal from now on fails
  // Renewals fail every 0.5 s; the record was last confirmed at clock 0 and lives FAST.ttl (2 s).
  await clock.advance(FAST.ttl * 1000 - 100, () => clock.waitForTimers(1));
  assert.equal(only!.leader.isLeader(), true, "within the record's TTL it may still lead");
  await clock.advance(100, () => clock.waitForTimers(1));
  assert.equal(only!.leader.isLeader(), false, "once the record may have expired it does not");
  await clock.advance(5000, () => clock.waitForTimers(1));
  assert.equal(only!.leader.isLeader(), false, "and it stays a follower while Redis is away");
});

test("stop before start, and start after stop, do nothing", async () => {
  const [one] = leaders(1);
  await one!.leader.stop();
  one!.leader.start();
  await new Promise((r) => setTimeout(r, 300));
  assert.equal(one!.leader.isLeader(), false);
  assert.equal(await handle.redis.get("dear-leader"), null);
});
