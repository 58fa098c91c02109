/**
 * FleetVersion against a real Redis holding process records as Sidekiq 6.4, 7.3 and 8.0 and tsq write
 * them (`SADD processes <id>`, `HSET <id> info <json> …`; the `info` of each is its launcher's `to_data`).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { FleetVersion, RUBY_GONE_GRACE_MS, describeDecision } from "../../src/platform/FleetVersion.js";
import { PROCESSES } from "../../src/wire/keys.js";
import { WITHOUT_RUBY, formatsOf } from "../../src/wire/sidekiqVersion.js";
import { useRedis } from "../helpers/redis.js";

const handle = useRedis();

/** A process record as each version's heartbeat leaves it (fields other than `info` trimmed). */
async function addProcess(identity: string, version: string | undefined): Promise<void> {
  const info: Record<string, unknown> = { hostname: "web-1", started_at: 1.5, pid: 42, tag: "app", concurrency: 5 };
  if (version !== undefined) info.version = version;
  info.identity = identity;
  await handle.redis.multi().sadd(PROCESSES, identity).hset(identity, "info", JSON.stringify(info), "busy", "0").exec();
}

async function removeProcess(identity: string): Promise<void> {
  await handle.redis.multi().srem(PROCESSES, identity).del(identity).exec();
}

test("auto follows the Ruby processes as they come and go; tsq's own records do not count", async () => {
  let now = 1_000_000;
  const fleet = new FleetVersion("auto", () => now);
  const { redis } = handle;
  await addProcess("tsq-host:1:aaa", "tsq 0.9.0");
  let decision = await fleet.read(redis);
  assert.deepEqual(
    [decision.formats, decision.changed, decision.ruby],
    [WITHOUT_RUBY, true, {}],
    "the first read decides",
  );
  assert.match(describeDecision("auto", decision).message, /no Ruby Sidekiq process in Redis/);

  await addProcess("ruby-host:2:bbb", "8.0.10");
  decision = await fleet.read(redis);
  assert.deepEqual([decision.formats, decision.changed, decision.ruby], [formatsOf(8), true, { "8.0.10": 1 }]);
  assert.equal((await fleet.read(redis)).changed, false, "the same fleet: no change to announce");

  await addProcess("ruby-host:3:ccc", "7.3.10");
  decision = await fleet.read(redis);
  assert.deepEqual([decision.formats, decision.ruby], [formatsOf(7), { "8.0.10": 1, "7.3.10": 1 }]);
  const { fields, message } = describeDecision("auto", decision);
  assert.deepEqual(fields, {
    sidekiq_version: "auto",
    ruby_sidekiq: { "8.0.10": 1, "7.3.10": 1 },
    timestamps: "seconds",
    metrics_layout: "sidekiq7",
  });
  assert.equal(
    message,
    "writing float-second timestamps and Sidekiq 7's execution-metrics keys (sidekiq_version auto, Ruby Sidekiq in Redis: 8.0.10 ×1, 7.3.10 ×1)",
  );

  await removeProcess("ruby-host:3:ccc");
  assert.deepEqual((await fleet.read(redis)).formats, formatsOf(8), "the 7.3 process left");

  // Every Ruby process gone (a deploy): what was read holds for the grace period, then the default returns.
  await removeProcess("ruby-host:2:bbb");
  now += RUBY_GONE_GRACE_MS - 1;
  decision = await fleet.read(redis);
  assert.deepEqual([decision.formats, decision.changed, decision.ruby], [formatsOf(8), false, {}]);
  now += 1;
  decision = await fleet.read(redis);
  assert.deepEqual([decision.formats, decision.changed], [WITHOUT_RUBY, true]);
});

test("a 6.x process (no version in its info) keeps seconds; a record without info is not counted", async () => {
  const fleet = new FleetVersion("auto");
  await addProcess("old:1:aaa", undefined);
  await addProcess("new:2:bbb", "8.0.10");
  await handle.redis.sadd(PROCESSES, "gone:3:ccc"); // its hash expired, not pruned from the set yet
  const decision = await fleet.read(handle.redis);
  assert.deepEqual(decision.ruby, { "6.x": 1, "8.0.10": 1 });
  assert.deepEqual(decision.formats, { timestamps: "seconds", metrics: "sidekiq8" });
});

test("hostile info is ignored; an identity is read once, only the set is read again", async () => {
  const fleet = new FleetVersion("auto");
  const { redis } = handle;
  for (const [identity, info] of [
    ["x:1", "{not json"],
    ["x:2", '{"version":"__proto__"}'],
    ["x:3", `{"version":"7.3.1${"0".repeat(100_000)}"}`],
    ["x:4", '{"version":["8.0.10"]}'],
  ] as const)
    await redis.multi().sadd(PROCESSES, identity).hset(identity, "info", info).exec();
  assert.deepEqual((await fleet.read(redis)).ruby, {});
  await addProcess("ruby:5", "7.3.10");
  assert.deepEqual((await fleet.read(redis)).formats, formatsOf(7));
  // A record's version never changes under one identity (a restart is a new identity): not read again.
  await redis.hset("ruby:5", "info", JSON.stringify({ version: "8.0.10" }));
  assert.deepEqual((await fleet.read(redis)).ruby, { "7.3.10": 1 });
  await redis.srem(PROCESSES, "ruby:5");
  assert.deepEqual((await fleet.read(redis)).ruby, {}, "gone from the set: forgotten");
});

test("a fixed setting reads nothing and decides once; concurrent reads share one round trip", async () => {
  const fixed = new FleetVersion(7);
  await addProcess("ruby:1", "8.0.10");
  const first = await fixed.read(handle.redis);
  assert.deepEqual([first.formats, first.changed, first.ruby], [formatsOf(7), true, {}]);
  assert.equal((await fixed.read(handle.redis)).changed, false);
  assert.match(describeDecision(7, first).message, /\(sidekiq_version 7\)$/);

  const auto = new FleetVersion("auto");
  const [a, b] = [auto.read(handle.redis), auto.read(handle.redis)];
  assert.equal(a, b, "one read in flight at a time");
  assert.deepEqual((await a).formats, formatsOf(8));
});
