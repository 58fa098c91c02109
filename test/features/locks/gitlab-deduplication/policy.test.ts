/** Reading a class's deduplication attributes, and what a push does with them (real Redis). */
import { test } from "node:test";
import assert from "node:assert/strict";
import { Client } from "../../../../src/client/Client.js";
import { ConfigError } from "../../../../src/wire/errors.js";
import { dedupPolicyOf } from "../../../../src/features/locks/gitlab-deduplication/policy.js";
import { useRedis } from "../../../helpers/redis.js";
import { FirstArgJob, PlainRecordJob, UntilExecutedJob } from "../../../jobs/dedupJobs.js";

const handle = useRedis();

test("defaults are GitLab's: until_executing, 600 s, scheduled jobs not locked", () => {
  class Defaults {
    static idempotent = true;
  }
  const policy = dedupPolicyOf(Defaults);
  assert.equal(policy?.strategy, "until_executing");
  assert.equal(policy?.ttl, 600);
  assert.equal(policy?.includingScheduled, false);
  assert.equal(policy?.rescheduleOnce, false);
  assert.equal(dedupPolicyOf(PlainRecordJob), undefined, "not idempotent: not deduplicated");
  class NoneJob {
    static idempotent = true;
    static deduplicate = { strategy: "none" };
  }
  assert.equal(dedupPolicyOf(NoneJob), undefined);
});

test("a bad declaration is a ConfigError naming the class and the field", () => {
  const cases: [string, object, RegExp][] = [
    ["BadStrategy", { strategy: "until_done" }, /BadStrategy.*strategy must be one of until_executing/],
    ["BadTtl", { ttl: -1 }, /BadTtl.*ttl must be a positive number/],
    ["BadOption", { including_scheduled: true }, /BadOption.*unknown deduplicate option "including_scheduled"/],
    ["BadReschedule", { ifDeduplicated: "reschedule_once" }, /BadReschedule.*needs strategy "until_executed"/],
  ];
  for (const [name, deduplicate, message] of cases) {
    const klass = { [name]: class {} }[name]!;
    Object.assign(klass, { idempotent: true, deduplicate });
    assert.throws(
      () => dedupPolicyOf(klass),
      (e: unknown) => e instanceof ConfigError && message.test(e.message),
    );
  }
});

test("idempotencyArguments chooses the arguments that identify a duplicate", async (t) => {
  const client = new Client({ redis: handle.url });
  t.after(() => client.close());
  const first = await client.push({ class: FirstArgJob, args: [1, "a"] });
  assert.equal(await client.push({ class: FirstArgJob, args: [1, "b"] }), first, "same first argument");
  assert.notEqual(await client.push({ class: FirstArgJob, args: [2, "a"] }), first, "another first argument");
  const stored = JSON.parse((await handle.redis.lrange("queue:default", -1, -1))[0]!) as Record<string, unknown>;
  assert.match(String(stored.idempotency_key), /^tsq:lock:dedup:default:[0-9a-f]{64}$/);
});

test("pushBulk gives the existing jid in place of each dropped job; other queues are other jobs", async (t) => {
  const client = new Client({ redis: handle.url });
  t.after(() => client.close());
  const jids = await client.pushBulk({ class: UntilExecutedJob, args: [[1], [2], [1], [2], [3]] });
  assert.equal(jids[2], jids[0]);
  assert.equal(jids[3], jids[1]);
  assert.equal(new Set(jids).size, 3);
  assert.equal(await handle.redis.llen("queue:default"), 3);
  const elsewhere = await client.push({ class: UntilExecutedJob, args: [1], queue: "other" });
  assert.ok(elsewhere !== null && !jids.includes(elsewhere), "the queue is part of the identity");
  // A push by name finds no class in this process that registered none: not deduplicated.
  assert.notEqual(await client.push({ class: "UntilExecutedJob", args: [1] }), jids[0]);
});
