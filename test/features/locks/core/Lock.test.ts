/** The lock core against a real Redis: holders, limits, expiry, owner-only release, refresh, inspect. */
import { test } from "node:test";
import assert from "node:assert/strict";
import { useRedis } from "../../../helpers/redis.js";
import { acquireLock, inspectLock, refreshLock, releaseLock } from "../../../../src/features/locks/Lock.js";

const handle = useRedis();
const KEY = "tsq:lock:dedup:default:abc";

test("a mutex: the first holder takes it, others are told who holds it, the holder may take it again", async () => {
  const { redis } = handle;
  assert.deepEqual(await acquireLock(redis, KEY, "jid-a", { ttlMs: 60_000 }), { acquired: true });
  assert.deepEqual(await acquireLock(redis, KEY, "jid-b", { ttlMs: 60_000 }), { acquired: false, holder: "jid-a" });
  assert.deepEqual(await acquireLock(redis, KEY, "jid-a", { ttlMs: 1_000 }), { acquired: true }, "re-entrant");
  const [hold] = await inspectLock(redis, KEY);
  assert.equal(hold?.holder, "jid-a");
  assert.ok(hold.expiresAt > Date.now() + 50_000, "taking it again never shortens the hold");
  const pttl = await redis.pttl(KEY);
  assert.ok(pttl > 50_000 && pttl <= 60_000, `the key expires with its holder (PTTL ${pttl})`);
});

test("only the holder releases or refreshes", async () => {
  const { redis } = handle;
  await acquireLock(redis, KEY, "jid-a", { ttlMs: 60_000 });
  assert.equal(await releaseLock(redis, KEY, "jid-b"), false);
  assert.equal(await refreshLock(redis, KEY, "jid-b", 120_000), false);
  assert.equal(await refreshLock(redis, KEY, "jid-a", 120_000), true);
  assert.ok((await redis.pttl(KEY)) > 100_000, "refresh extends the key too");
  assert.equal(await releaseLock(redis, KEY, "jid-a"), true);
  assert.equal(await redis.exists(KEY), 0, "the last release removes the key");
  assert.deepEqual(await acquireLock(redis, KEY, "jid-b", { ttlMs: 60_000 }), { acquired: true });
});

test("an expired hold is dropped by the next acquire, whatever the key's TTL", async () => {
  const { redis } = handle;
  await redis.hset(KEY, "crashed", String(Date.now() - 1));
  await redis.pexpire(KEY, 600_000);
  assert.deepEqual(await inspectLock(redis, KEY), [], "inspect hides expired holds");
  assert.deepEqual(await acquireLock(redis, KEY, "jid-a", { ttlMs: 60_000 }), { acquired: true });
  assert.deepEqual(Object.keys(await redis.hgetall(KEY)), ["jid-a"]);
  assert.equal(await refreshLock(redis, "tsq:lock:dedup:none", "jid-a", 1000), false);
});

test("a limit of N admits N holders at once (the shape a concurrency limiter needs)", async () => {
  const { redis } = handle;
  const results = await Promise.all(
    Array.from({ length: 10 }, (_, i) => acquireLock(redis, KEY, `jid-${i}`, { ttlMs: 60_000, limit: 3 })),
  );
  assert.equal(results.filter((r) => r.acquired).length, 3);
  assert.equal((await inspectLock(redis, KEY)).length, 3);
  await releaseLock(redis, KEY, "jid-0");
  assert.deepEqual(await acquireLock(redis, KEY, "jid-9", { ttlMs: 60_000, limit: 3 }), { acquired: true });
});

test("the flag key is set when refused and cleared when taken, atomically with the decision", async () => {
  const { redis } = handle;
  const flagKey = "tsq:dedup-signal:default:abc";
  await acquireLock(redis, KEY, "jid-a", { ttlMs: 60_000, flagKey });
  assert.equal(await redis.exists(flagKey), 0);
  await acquireLock(redis, KEY, "jid-b", { ttlMs: 60_000, flagKey });
  assert.equal(await redis.get(flagKey), "1");
  assert.ok((await redis.pttl(flagKey)) > 50_000);
  await releaseLock(redis, KEY, "jid-a");
  await acquireLock(redis, KEY, "jid-c", { ttlMs: 60_000, flagKey });
  assert.equal(await redis.exists(flagKey), 0);
});
