/**
 * Each rate-limiter algorithm against a real Redis: what it admits, when it says there is room again,
 * that every key it writes expires, that a SIGKILLed `concurrent` holder frees its slot after
 * `lockTimeout` (a real child process), and that bad settings fail at once with a clear message.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { ConfigError } from "../../../../src/wire/errors.js";
import { Limiter, OverLimitError, type Grant } from "../../../../src/features/locks/enterprise-rate-limits/index.js";
import { useRedis } from "../../../helpers/redis.js";
import { ROOT, eventually } from "../../../helpers/tsqProcess.js";

const handle = useRedis();

/** Ms since the epoch on the Redis clock (the limiters' clock). */
async function redisNow(): Promise<number> {
  const [s, us] = await handle.redis.time();
  return Number(s) * 1000 + Math.floor(Number(us) / 1000);
}

/** Resolves once the Redis clock is early in a second, so a 1-second test does not straddle a boundary. */
async function startOfSecond(): Promise<void> {
  const ms = (await redisNow()) % 1000;
  if (ms > 100) await sleep(1000 - ms + 5);
}

async function overLimit(call: Promise<unknown>): Promise<OverLimitError> {
  try {
    await call;
  } catch (error) {
    assert.ok(error instanceof OverLimitError, `expected OverLimitError, got ${String(error)}`);
    return error;
  }
  assert.fail("the call was admitted, expected OverLimitError");
}

test("concurrent: at most N at once, the N+1th is refused, a freed lease admits again", async () => {
  const redis = handle.redis;
  const limiter = Limiter.concurrent("erp", 3, { redis, lockTimeout: 10 });
  let inside = 0;
  let most = 0;
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  const held = Array.from({ length: 3 }, () =>
    limiter.withinLimit(async () => {
      most = Math.max(most, ++inside);
      await gate;
      inside--;
    }),
  );
  await eventually(async () => inside === 3, 5_000, "three leases taken");
  const refused = await overLimit(limiter.withinLimit(() => undefined));
  assert.equal(refused.limiter, "concurrent erp");
  release();
  await Promise.all(held);
  assert.equal(most, 3);
  assert.equal(await limiter.withinLimit(() => "again"), "again", "a freed lease admits the next call");
  assert.equal(await redis.hlen("tsq:lock:rate:c:erp"), 0, "every lease given back");
});

test("concurrent with waitTimeout: 20 calls through 5 leases, never more than 5 inside", async () => {
  const limiter = Limiter.concurrent("pool", 5, { redis: handle.redis, waitTimeout: 10 });
  let inside = 0;
  let most = 0;
  await Promise.all(
    Array.from({ length: 20 }, () =>
      limiter.withinLimit(async () => {
        most = Math.max(most, ++inside);
        await sleep(50);
        inside--;
      }),
    ),
  );
  assert.equal(most, 5, `at most 5 inside at once (saw ${most})`);
});

test("concurrent: a holder killed with SIGKILL frees its slot after lockTimeout, not before", async (t) => {
  const lockTimeout = 2; // seconds
  const child = spawn(
    process.execPath,
    [join(ROOT, "dist/test/jobs/rateLimitHolder.js"), handle.url, "mutex", String(lockTimeout)],
    { stdio: ["ignore", "pipe", "inherit"] },
  );
  t.after(() => child.kill("SIGKILL"));
  await new Promise<void>((resolve) =>
    child.stdout.on("data", (d: Buffer) => d.toString().includes("held") && resolve()),
  );
  const mutex = Limiter.concurrent("mutex", 1, { redis: handle.redis, lockTimeout });
  child.kill("SIGKILL");
  const killedAt = Date.now();
  await overLimit(mutex.withinLimit(() => undefined));
  await eventually(
    async () => {
      try {
        return await mutex.withinLimit(() => true);
      } catch (error) {
        if (error instanceof OverLimitError) return false;
        throw error;
      }
    },
    lockTimeout * 1000 + 10_000,
    "the dead holder's lease lapsed",
    50,
  );
  const freedAfter = Date.now() - killedAt;
  console.log(`lease of a SIGKILLed holder freed ${freedAfter} ms after the kill (lockTimeout ${lockTimeout} s)`);
  assert.ok(freedAfter >= lockTimeout * 1000 - 1000, `not long before lockTimeout (${freedAfter} ms)`);
});

test("bucket: N per calendar interval, then over until the interval ends", async () => {
  const limiter = Limiter.bucket("api", 5, "second", { redis: handle.redis });
  await startOfSecond();
  for (let i = 0; i < 5; i++) await limiter.withinLimit(() => undefined);
  const over = await overLimit(limiter.withinLimit(() => undefined));
  assert.ok(over.retryAfterMs > 0 && over.retryAfterMs <= 1000, `room at the next second (${over.retryAfterMs} ms)`);
  await sleep(over.retryAfterMs + 20);
  await limiter.withinLimit(() => undefined);
  await overLimit(limiter.withinLimit({ used: 5 }, () => undefined)); // 1 + 5 > 5
  assert.ok((await handle.redis.pttl("tsq:rl:b:api")) > 0, "the bucket's key expires");
});

test("window: N in any sliding window; room comes back as the oldest admission leaves", async () => {
  const limiter = Limiter.window("mail", 10, 1, { redis: handle.redis });
  const grants: Grant[] = [];
  for (let i = 0; i < 7; i++) grants.push(await limiter.withinLimit((g) => g));
  await sleep(400);
  for (let i = 0; i < 3; i++) grants.push(await limiter.withinLimit((g) => g));
  const before = await redisNow();
  const over = await overLimit(limiter.withinLimit(() => undefined));
  const after = await redisNow();
  // Room comes back when the oldest admission leaves, 1 s after it (not at a second boundary): exact on
  // the Redis clock, whatever the machine's speed made of the 400 ms sleep.
  const oldestLeaves = grants[0]!.at + 1000;
  assert.ok(
    over.retryAfterMs >= oldestLeaves - after - 2 && over.retryAfterMs <= Math.max(oldestLeaves - before, 0) + 2,
    `waits for the oldest (${over.retryAfterMs} ms; it leaves ${oldestLeaves - after}–${oldestLeaves - before} ms on)`,
  );
  // Until the 7th has left too: on a loaded machine the first 7 admissions may be spread over a while.
  await sleep(Math.max(over.retryAfterMs, grants[6]!.at + 1000 - (await redisNow())) + 20);
  await limiter.withinLimit({ used: 7 }, () => undefined); // the first 7 left; the last 3 are still in
  await overLimit(limiter.withinLimit(() => undefined));
  assert.ok((await handle.redis.zcard("tsq:rl:w:mail")) <= 10, "the window holds at most N members");
  assert.ok(
    grants.every((g, i) => i === 0 || g.at >= grants[i - 1]!.at),
    "grants carry their Redis time",
  );
});

test("leaky: a burst of `size`, then one drop per period/size", async () => {
  const limiter = Limiter.leaky("sms", 4, 2, { redis: handle.redis }); // drains 4 per 2 s: one per 500 ms
  const first = await redisNow();
  for (let i = 0; i < 4; i++) await limiter.withinLimit(() => undefined);
  const over = await overLimit(limiter.withinLimit(() => undefined));
  // One drop drains 500 ms after the bucket began to fill, less what has drained since: on the Redis
  // clock, whatever the machine's speed made of the four calls.
  const spent = (await redisNow()) - first;
  assert.ok(
    over.retryAfterMs > 500 - spent - 2 && over.retryAfterMs <= 500,
    `one drop drains in ${over.retryAfterMs} ms (500 ms less the ${spent} ms the calls took)`,
  );
  await sleep(over.retryAfterMs + 20);
  await limiter.withinLimit(() => undefined);
  await overLimit(limiter.withinLimit(() => undefined));
});

test("points: each call spends its estimated points; the rest refill over the period", async () => {
  const limiter = Limiter.points("graphql", 100, 1, { redis: handle.redis }); // 100 points a second
  const first = await redisNow();
  await limiter.withinLimit(60, () => undefined);
  const over = await overLimit(limiter.withinLimit(60, () => undefined));
  // 20 points refill in 200 ms, less what refilled while the calls ran (on the Redis clock).
  const spent = (await redisNow()) - first;
  assert.ok(
    over.retryAfterMs > 200 - spent - 2 && over.retryAfterMs <= 202,
    `20 points refill in ${over.retryAfterMs} ms (200 ms less the ${spent} ms the calls took)`,
  );
  await limiter.withinLimit(40, () => undefined);
  await sleep(over.retryAfterMs + 420); // 60 points refill in 600 ms
  await limiter.withinLimit(60, () => undefined);
  await assert.rejects(
    limiter.withinLimit(101, () => undefined),
    /can never fit 100/,
  );
});

test("1,000 dynamic names: every key written expires, and all are gone after their period", async () => {
  const redis = handle.redis;
  // Every key the limiters touch, from Redis' own keyspace events: a count taken afterwards with KEYS would
  // depend on how fast the machine wrote them, since a 1-second bucket can expire before the last is written.
  await redis.config("SET", "notify-keyspace-events", "KA");
  const events = redis.duplicate();
  const touched = new Set<string>();
  let flushed: () => void = () => undefined;
  events.on("pmessage", (_pattern: string, channel: string) => {
    if (channel === "limiter-test-flush") flushed();
    else touched.add(channel.slice(channel.indexOf(":") + 1));
  });
  await events.psubscribe("__keyspace@*__:tsq:*", "limiter-test-flush");
  try {
    await Promise.all(
      Array.from({ length: 1000 }, async (_, i) => {
        const user = `user-${i}`;
        await Limiter.window(`w-${user}`, 5, 4, { redis }).withinLimit(() => undefined);
        await Limiter.bucket(`b-${user}`, 5, "second", { redis }).withinLimit(() => undefined);
        await Limiter.leaky(`l-${user}`, 5, 4, { redis }).withinLimit(() => undefined);
        await Limiter.points(`p-${user}`, 5, 4, { redis }).withinLimit(2, () => undefined);
        await Limiter.concurrent(`c-${user}`, 5, { redis, lockTimeout: 1 }).withinLimit(() => undefined);
      }),
    );
    // Pub/sub messages arrive in the order Redis ran the commands: once this one is here, every keyspace
    // event of the calls above is too.
    await new Promise<void>((resolve) => {
      flushed = resolve;
      void redis.publish("limiter-test-flush", "");
    });
  } finally {
    events.disconnect();
  }
  // Five limiter kinds per name; a concurrent lease is given back (an empty hash is no key) but was written.
  for (const kind of ["w", "b", "l", "p", "c"]) {
    const names = [...touched].filter((key) => new RegExp(`[:{]${kind}-user-\\d+`).test(key));
    const users = new Set(names.map((key) => /user-(\d+)/.exec(key)?.[1]));
    assert.equal(users.size, 1000, `every ${kind}-user name wrote a key (${users.size})`);
  }
  const keys = [...touched];
  const ttls = await Promise.all(keys.map((k) => redis.pttl(k)));
  assert.deepEqual(
    keys.filter((_, i) => ttls[i] === -1),
    [],
    "no key without an expiry (-1; -2 is a key that expired or was given back)",
  );
  await eventually(async () => (await redis.dbsize()) === 0, 60_000, "every key expired", 250);
});

test("unlimited admits every call and writes nothing", async () => {
  const limiter = Limiter.unlimited();
  const results = await Promise.all(Array.from({ length: 100 }, (_, i) => limiter.withinLimit(() => i)));
  assert.equal(results.length, 100);
  assert.equal(await handle.redis.dbsize(), 0);
});

test("a function's error passes through and releases the lease", async () => {
  const limiter = Limiter.concurrent("boom", 1, { redis: handle.redis });
  await assert.rejects(
    limiter.withinLimit(() => Promise.reject(new Error("boom"))),
    /boom/,
  );
  assert.equal(await limiter.withinLimit(() => 1), 1, "the lease was given back");
});

test("bad settings fail when the limiter is built, saying what to write", () => {
  const cases: [() => unknown, RegExp][] = [
    [() => Limiter.concurrent("has space", 1), /name "has space" is not valid; use 1-200 letters/],
    [() => Limiter.concurrent("", 1), /name "" is not valid/],
    [() => Limiter.concurrent("erp", 0), /the limit must be an integer >= 1, got 0/],
    [() => Limiter.concurrent("erp", 2, { lockTimeout: 0 }), /lockTimeout must be a number of seconds > 0/],
    [() => Limiter.concurrent("erp", 2, { waitTimeout: -1 }), /waitTimeout must be a number of seconds >= 0/],
    [() => Limiter.bucket("api", 5, "week" as "day"), /the period must be "second", "minute", "hour", "day"/],
    [() => Limiter.window("api", 1.5, 1), /the limit must be an integer >= 1, got 1.5/],
    [() => Limiter.window("api", 5, 0), /the period must be a number of seconds > 0/],
    [() => Limiter.leaky("api", 5, "fortnight" as "day"), /the period must be/],
    [() => Limiter.points("api", -1, "minute"), /the points must be an integer >= 1/],
    [() => Limiter.window("api", 5, 1, { reschedule: -1 }), /reschedule must be an integer >= 0/],
    [() => Limiter.configure({ reschedule: 1.5 }), /reschedule must be an integer >= 0/],
  ];
  for (const [build, message] of cases)
    assert.throws(build, (error: unknown) => {
      assert.ok(error instanceof ConfigError, `ConfigError, got ${String(error)}`);
      assert.match(error.message, message);
      return true;
    });
});
