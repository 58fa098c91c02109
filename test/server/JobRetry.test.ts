/** JobRetry: Sidekiq's retry maths, fields, hooks, death handlers and the dead set. */
import { test } from "node:test";
import assert from "node:assert/strict";
import { inflateSync } from "node:zlib";
import { useRedis } from "../helpers/redis.js";
import { testLauncher } from "../helpers/context.js";
import { JobRetry } from "../../src/server/JobRetry.js";
import { sendToMorgue } from "../../src/server/morgue.js";
import { newJid, type JobPayload } from "../../src/wire/payload.js";
import type { RunnableClass } from "../../src/server/Registry.js";

const handle = useRedis();

function job(fields: Partial<JobPayload> = {}): JobPayload {
  return {
    class: "SomeJob",
    args: [1],
    jid: newJid(),
    queue: "default",
    retry: true,
    created_at: Date.now() / 1000,
    ...fields,
  };
}

function setup(overrides = {}) {
  const launcher = testLauncher(handle.url, [], overrides);
  const died: [JobPayload, Error][] = [];
  launcher.ctx.deathHandlers.length = 0;
  launcher.ctx.deathHandlers.push((j, e) => void died.push([j, e]));
  return { retry: new JobRetry(launcher.ctx), died };
}

async function retryEntry(): Promise<{ job: JobPayload; score: number }> {
  const [member, score] = await handle.redis.zrange("retry", 0, 0, "WITHSCORES");
  assert.ok(member, "a retry entry exists");
  return { job: JSON.parse(member) as JobPayload, score: Number(score) };
}

test("first failure: retry_count 0, failed_at, error fields; delay 15 s + jitter rand(10)", async () => {
  const { retry } = setup();
  const before = Date.now() / 1000;
  assert.equal(await retry.handle(job(), new TypeError("bad input"), undefined), "retried");
  const { job: stored, score } = await retryEntry();
  assert.equal(stored.retry_count, 0);
  assert.equal(stored.error_class, "TypeError");
  assert.equal(stored.error_message, "bad input");
  assert.ok(typeof stored.failed_at === "number" && stored.failed_at >= before - 1);
  assert.equal(stored.retried_at, undefined);
  assert.ok(score - before >= 15 - 0.5 && score - before < 15 + 10 + 0.5, `delay ${score - before}`);
});

test("later failures: retry_count + 1, retried_at; delay count**4 + 15 + rand(10 * (count + 1))", async () => {
  const { retry } = setup();
  const before = Date.now() / 1000;
  await retry.handle(job({ retry_count: 4, failed_at: before - 100 }), new Error("again"), undefined);
  const { job: stored, score } = await retryEntry();
  assert.equal(stored.retry_count, 5);
  assert.ok(typeof stored.retried_at === "number");
  const delay = score - before;
  assert.ok(delay >= 5 ** 4 + 15 - 0.5 && delay < 5 ** 4 + 15 + 60 + 0.5, `delay ${delay}`);
});

test("retry_queue moves the retry to another queue; error_message is truncated to 10,000 characters", async () => {
  const { retry } = setup();
  await retry.handle(job({ retry_queue: "slow" }), new Error("x".repeat(20_000)), undefined);
  const { job: stored } = await retryEntry();
  assert.equal(stored.queue, "slow");
  assert.equal(stored.error_message!.length, 10_000);
});

test("retry: N is exhausted after N retries; retry: 0 dies at once; death handlers run", async () => {
  const { retry, died } = setup();
  assert.equal(await retry.handle(job({ retry: 2, retry_count: 0 }), new Error("e"), undefined), "retried");
  assert.equal(await retry.handle(job({ retry: 2, retry_count: 1 }), new Error("e"), undefined), "dead");
  assert.equal(await retry.handle(job({ retry: 0 }), new Error("e"), undefined), "dead");
  assert.equal(await handle.redis.zcard("dead"), 2);
  assert.equal(died.length, 2);
  const [member] = await handle.redis.zrange("dead", 0, 0);
  assert.equal((JSON.parse(member!) as JobPayload).retry_count, 2);
});

test("retry: true uses maxRetries (25); retry: false drops the job but runs death handlers", async () => {
  const { retry, died } = setup();
  assert.equal(await retry.handle(job({ retry_count: 24 }), new Error("e"), undefined), "dead");
  assert.equal(await retry.handle(job({ retry: false }), new Error("no"), undefined), "dropped");
  assert.equal(await handle.redis.zcard("retry"), 0);
  assert.equal(await handle.redis.zcard("dead"), 1);
  assert.equal(died.length, 2);
  assert.equal(died[1]![1].message, "no");
});

test("retry_for: exhausted once failed_at + retry_for is past, whatever the count", async () => {
  const { retry } = setup();
  const now = Date.now() / 1000;
  assert.equal(
    await retry.handle(job({ retry_for: 3600, retry_count: 40, failed_at: now - 60 }), new Error("e"), undefined),
    "retried",
  );
  assert.equal(
    await retry.handle(job({ retry_for: 60, retry_count: 1, failed_at: now - 120 }), new Error("e"), undefined),
    "dead",
  );
});

test("backtrace: error_backtrace is base64 of zlib-deflated JSON lines, limited to N lines", async () => {
  const { retry } = setup();
  await retry.handle(job({ backtrace: 2 }), new Error("with trace"), undefined);
  const { job: stored } = await retryEntry();
  const lines = JSON.parse(inflateSync(Buffer.from(stored.error_backtrace!, "base64")).toString()) as string[];
  assert.equal(lines.length, 2);
  assert.ok(lines.every((l) => typeof l === "string" && l.length > 0));
});

test("retryIn hook: a number sets the delay, 'kill' goes to dead, 'discard' drops with death handlers", async () => {
  const { retry, died } = setup();
  let answer: unknown = 1000;
  const klass = class HookedJob {
    static retryIn() {
      return answer;
    }
    perform() {}
  } as unknown as RunnableClass;
  const before = Date.now() / 1000;
  await retry.handle(job(), new Error("e"), klass);
  const { score } = await retryEntry();
  assert.ok(score - before >= 1000 - 0.5 && score - before < 1010 + 0.5);
  answer = "kill";
  assert.equal(await retry.handle(job(), new Error("e"), klass), "dead");
  answer = "discard";
  const discarded = job();
  assert.equal(await retry.handle(discarded, new Error("e"), klass), "discarded");
  assert.equal(typeof discarded.discarded_at, "number");
  assert.equal(died.length, 2);
});

test("retriesExhausted returning 'discard', or dead: false, keeps the job out of the dead set", async () => {
  const { retry, died } = setup();
  const klass = class Quiet {
    static retriesExhausted() {
      return "discard";
    }
    perform() {}
  } as unknown as RunnableClass;
  assert.equal(await retry.handle(job({ retry: 0 }), new Error("e"), klass), "discarded");
  assert.equal(await retry.handle(job({ retry: 0, dead: false }), new Error("e"), undefined), "discarded");
  assert.equal(await handle.redis.zcard("dead"), 0);
  assert.equal(died.length, 2);
});

test("the dead set is trimmed on every add by size and by age", async () => {
  const limits = { deadMaxJobs: 5, deadTimeoutInSeconds: 3600 };
  await handle.redis.zadd("dead", String(Date.now() / 1000 - 7200), "ancient");
  for (let i = 0; i < 8; i++) await sendToMorgue(handle.redis, `job-${i}`, limits);
  const members = await handle.redis.zrange("dead", 0, -1);
  assert.equal(members.includes("ancient"), false);
  // Sidekiq's ZREMRANGEBYRANK 0 -max keeps max - 1 entries.
  assert.deepEqual(members, ["job-4", "job-5", "job-6", "job-7"]);
});
