/**
 * The keyed gate (keyed-limit-6.lua through KeyedLimiter) against a real Redis, without workers: what it
 * admits, parks and hands back, that a handed-back job runs on its pass, that each key gets its turn,
 * that the parked list is bounded, that its keys expire, and that bad `static limit` declarations fail
 * with a clear message.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { setTimeout as sleep } from "node:timers/promises";
import { ConcurrencyLimiter } from "../../../../src/features/locks/gitlab-concurrency-limits/ConcurrencyLimiter.js";
import { logger } from "../../../../src/platform/logger.js";
import { KeyedLimiter } from "../../../../src/features/locks/enterprise-rate-limits/KeyedLimiter.js";
import {
  keyedLimitOf,
  type KeyedLimitPolicy,
} from "../../../../src/features/locks/enterprise-rate-limits/keyedPolicy.js";
import { useRedis } from "../../../helpers/redis.js";

const handle = useRedis();

function gate(policies: Record<string, KeyedLimitPolicy>, maxParked = 100): KeyedLimiter {
  const leases = new ConcurrencyLimiter(handle.redis, { slotTtl: 60, refreshInterval: 10, maxParked }, logger());
  return new KeyedLimiter(
    handle.redis,
    new Map(Object.entries(policies)),
    leases,
    { leaseTtl: 60, resumeIntervalMs: 100, maxParked },
    logger(),
  );
}

function job(jid: string, tenant: string): string {
  return JSON.stringify({ class: "ChargeJob", args: [tenant], jid, queue: "default", limit_parked: 1 });
}

const byTenant = (args: unknown[]) => String(args[0]);

test("concurrency per key: the second job parks, and the first one's leave hands it back admitted", async () => {
  const policy: KeyedLimitPolicy = { key: byTenant, concurrency: 1, rate: 0, windowMs: 0 };
  const limiter = gate({ ChargeJob: policy });
  assert.equal(await limiter.enter("ChargeJob", "42", policy, "a", job("a", "42")), "run");
  assert.equal(await limiter.enter("ChargeJob", "42", policy, "b", job("b", "42")), "parked");
  assert.equal(await limiter.enter("ChargeJob", "7", policy, "c", job("c", "7")), "run", "other keys are not held up");
  assert.equal(await handle.redis.hget("tsq:rl-waiting", "ChargeJob"), "1");
  await limiter.leave("ChargeJob", "42", policy, "a");
  const queued = await handle.redis.lrange("queue:default", 0, -1);
  assert.deepEqual(
    queued.map((j) => (JSON.parse(j) as { jid: string }).jid),
    ["b"],
    "b handed back to its queue",
  );
  assert.equal(await handle.redis.hget("tsq:rl-waiting", "ChargeJob"), null, "nothing waiting");
  assert.equal(await limiter.enter("ChargeJob", "42", policy, "d", job("d", "42")), "parked", "b holds the slot");
  assert.equal(await limiter.enter("ChargeJob", "42", policy, "b", job("b", "42")), "run", "b runs on its pass");
  assert.ok((await handle.redis.pttl("tsq:lock:rate:k:ChargeJob:42")) > 0, "the leases expire");
});

test("rate per key: 3 a second; the rest are handed back by the resumer as the window slides", async () => {
  const policy: KeyedLimitPolicy = { key: byTenant, concurrency: 0, rate: 3, windowMs: 1000 };
  const limiter = gate({ ChargeJob: policy });
  const results = [];
  for (let i = 0; i < 5; i++) results.push(await limiter.enter("ChargeJob", "9", policy, `j${i}`, job(`j${i}`, "9")));
  assert.deepEqual(results, ["run", "run", "run", "parked", "parked"]);
  assert.equal(await limiter.resumeDue(), 0, "nothing is due within the second");
  const score = Number(await handle.redis.zscore("tsq:rl-ready:ChargeJob", "9"));
  assert.ok(score > Date.now() + 500, "the key is due when its oldest admission leaves the window");
  await sleep(1100);
  assert.equal(await limiter.resumeDue(), 2, "both handed back once the window slid");
  assert.equal(await handle.redis.zcard("tsq:rl-ready:ChargeJob"), 0, "the key left the ready set");
  assert.equal(await limiter.enter("ChargeJob", "9", policy, "j3", job("j3", "9")), "run", "on its pass");
  assert.equal(await limiter.enter("ChargeJob", "9", policy, "x", job("x", "9")), "run", "2 handed back + x = 3");
  assert.equal(await limiter.enter("ChargeJob", "9", policy, "y", job("y", "9")), "parked", "the window is full again");
  assert.ok((await handle.redis.pttl("tsq:rl:w:k:ChargeJob:9")) > 0, "the window expires");
});

test("round robin: 300 keys with parked jobs each get one back before any gets a second", async () => {
  const policy: KeyedLimitPolicy = { key: byTenant, concurrency: 0, rate: 1, windowMs: 1000 };
  const limiter = gate({ ChargeJob: policy });
  for (let k = 0; k < 300; k++)
    for (let i = 0; i < 3; i++)
      await limiter.enter("ChargeJob", `k${k}`, policy, `k${k}-${i}`, job(`k${k}-${i}`, `k${k}`));
  await sleep(1100);
  let handed = 0;
  for (let pass = 0; pass < 5; pass++) handed += await limiter.resumeDue();
  const queued = (await handle.redis.lrange("queue:default", 0, -1)).map((j) => (JSON.parse(j) as { jid: string }).jid);
  const keys = new Set(queued.map((jid) => jid.split("-")[0]));
  assert.equal(handed, 300, "one per key: the rate allows one a second");
  assert.equal(keys.size, 300, "every key got its turn");
  assert.equal(await handle.redis.hget("tsq:rl-waiting", "ChargeJob"), "300", "the second parked job of each waits");
});

test("a key's parked list is bounded: past maxParked the job is refused, not parked", async () => {
  const policy: KeyedLimitPolicy = { key: byTenant, concurrency: 1, rate: 0, windowMs: 0 };
  const limiter = gate({ ChargeJob: policy }, 3);
  const results = [];
  for (let i = 0; i < 5; i++) results.push(await limiter.enter("ChargeJob", "1", policy, `j${i}`, job(`j${i}`, "1")));
  assert.deepEqual(results, ["run", "parked", "parked", "parked", "refused"]);
  assert.equal(await handle.redis.llen("tsq:rl-parked:ChargeJob:1"), 3);
});

test("bad static limit declarations name the class and the fix", () => {
  const cases: [object, RegExp][] = [
    [{ name: "A", limit: 5 }, /job class A: static limit must be an object/],
    [{ name: "B", limit: { concurrency: 2 } }, /job class B: limit.key must be a function/],
    [{ name: "C", limit: { key: () => "k" } }, /limit needs a concurrency, a rate, or both/],
    [{ name: "D", limit: { key: () => "k", concurrency: -1 } }, /limit.concurrency must be an integer >= 1/],
    [{ name: "E", limit: { key: () => "k", rate: { limit: 0, period: 1 } } }, /limit.rate must be \{ limit:/],
    [{ name: "F", limit: { key: () => "k", rate: { limit: 5, period: "week" } } }, /the period must be "second"/],
    [{ name: "G", limit: { key: () => "k", concurency: 2 } }, /unknown limit option "concurency"/],
  ];
  for (const [klass, message] of cases) assert.throws(() => keyedLimitOf(klass), message);
  assert.equal(keyedLimitOf({ name: "Plain" }), undefined, "no limit, no policy");
});
