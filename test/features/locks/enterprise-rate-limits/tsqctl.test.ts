/**
 * `tsqctl ratelimits`, a real tsqctl process against a real Redis: the limiters in use with what they
 * hold, the classes with jobs parked on keyed limits, and the reschedule count; idle limiters are gone.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { ConcurrencyLimiter } from "../../../../src/features/locks/gitlab-concurrency-limits/ConcurrencyLimiter.js";
import { logger } from "../../../../src/platform/logger.js";
import { KeyedLimiter } from "../../../../src/features/locks/enterprise-rate-limits/KeyedLimiter.js";
import { Limiter } from "../../../../src/features/locks/enterprise-rate-limits/index.js";
import type { KeyedLimitPolicy } from "../../../../src/features/locks/enterprise-rate-limits/keyedPolicy.js";
import { useRedis } from "../../../helpers/redis.js";
import { tsqctl as runTsqctl } from "../../../helpers/tsqctl.js";

const handle = useRedis();

async function tsqctl(...args: string[]): Promise<string> {
  const run = await runTsqctl([...args, "--redis-url", handle.url], process.env, { stripFinalNewline: false });
  assert.equal(run.exitCode, 0, run.stderr);
  return run.stdout;
}

test("tsqctl ratelimits lists limiters, keyed classes with parked jobs, and reschedules", async () => {
  const redis = handle.redis;
  assert.match(await tsqctl("ratelimits"), /no rate limiter has state in Redis/);
  await Limiter.window("mailer", 10, 60, { redis }).withinLimit({ used: 3 }, () => undefined);
  await Limiter.bucket("stripe-42", 10, "hour", { redis }).withinLimit(() => undefined);
  let release!: () => void;
  const held = Limiter.concurrent("erp", 2, { redis }).withinLimit(() => new Promise<void>((r) => (release = r)));
  const policy: KeyedLimitPolicy = { key: (a) => a[0], concurrency: 1, rate: 0, windowMs: 0 };
  const leases = new ConcurrencyLimiter(redis, { slotTtl: 60, refreshInterval: 10, maxParked: 100 }, logger());
  const gate = new KeyedLimiter(
    redis,
    new Map([["ChargeJob", policy]]),
    leases,
    { leaseTtl: 60, resumeIntervalMs: 100, maxParked: 100 },
    logger(),
  );
  const job = (jid: string) => JSON.stringify({ class: "ChargeJob", args: ["a"], jid, queue: "default" });
  for (const jid of ["j1", "j2", "j3"]) await gate.enter("ChargeJob", "a", policy, jid, job(jid));
  await redis.set("tsq:stat:overrated", "4");

  const status = JSON.parse(await tsqctl("ratelimits", "--json")) as {
    limiters: { kind: string; name: string; used: number }[];
    keyed: { class: string; parked: number; keys: number }[];
    overrated: number;
  };
  assert.deepEqual(status.limiters, [
    { kind: "bucket", name: "stripe-42", used: 1 },
    { kind: "concurrent", name: "erp", used: 1 },
    { kind: "window", name: "mailer", used: 3 },
  ]);
  assert.deepEqual(status.keyed, [{ class: "ChargeJob", parked: 2, keys: 1 }]);
  assert.equal(status.overrated, 4);
  const text = await tsqctl("ratelimits");
  assert.match(text, /window\s+mailer\s+3/);
  assert.match(text, /ChargeJob\s+2\s+1/);
  assert.match(text, /jobs rescheduled by OverLimit \(all time\): 4/);
  release();
  await held;
});
