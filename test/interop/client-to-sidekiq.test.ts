/**
 * Jobs pushed by tsq's client are executed by a real Ruby Sidekiq 6.4.1 process with the arguments,
 * queue and timestamps the TypeScript side meant. The Ruby jobs (test/ruby/jobs.rb) RPUSH what they
 * saw to `interop:ran`:
 *
 *   {"class":"InteropJob","jid":"…","queue":"default","args":["é😀",1,1.5],
 *    "arg_types":["String","Integer","Float"],"ran_at":1795266310.9387555,
 *    "created_at":1795266310.934286,"created_at_class":"Float","enqueued_at":…,"enqueued_at_class":"Float",…}
 */
import { test, type TestContext } from "node:test";
import assert from "node:assert/strict";
import { performance } from "node:perf_hooks";
import { Client } from "../../src/client/Client.js";
import { Job } from "../../src/client/Job.js";
import type { JsonValue } from "../../src/wire/payload.js";
import { SCHEDULE, queueKey } from "../../src/wire/keys.js";
import { nowSeconds } from "../../src/wire/timestamps.js";
import { useRedis, type RedisHandle } from "../helpers/redis.js";
import { requireRubySidekiq } from "../helpers/ruby.js";
import {
  startSidekiq,
  useSidekiqCleanup,
  type SidekiqOptions,
  type SidekiqProcess,
} from "../helpers/sidekiqProcess.js";

/** Written by test/ruby/jobs.rb, one JSON record per job run. */
const RAN = "interop:ran";

interface RubyRun {
  class: string;
  jid: string;
  queue: string;
  args: JsonValue[];
  /** Ruby class names in the shape of `args`, e.g. ["String", {"a": "Float"}]. */
  arg_types: JsonValue;
  ran_at: number;
  created_at: number | null;
  created_at_class: string;
  enqueued_at: number | null;
  enqueued_at_class: string;
  payload_keys: string[];
}

const redis = useRedis();
useSidekiqCleanup();

/**
 * A client on the private Redis, closed after the test. Made inside the test: Node 20 does not wait for
 * one top-level `before` hook (useRedis's) before running the next, and a Client without a URL would
 * fall back to 127.0.0.1:6379.
 */
function clientFor(t: TestContext): Client {
  assert.ok(redis.url, "the private Redis is not up");
  const client = new Client({ redis: redis.url });
  t.after(() => client.close());
  return client;
}

/** The TypeScript twin of test/ruby/jobs.rb's InteropJob; only its name and enqueueing API are used. */
class InteropJob extends Job {
  perform(..._args: JsonValue[]): void {}
}

async function runSidekiq(t: TestContext, options: Omit<SidekiqOptions, "redis"> = {}): Promise<SidekiqProcess> {
  const sidekiq = await startSidekiq({ redis, ...options });
  t.after(() => sidekiq.stop());
  return sidekiq;
}

/** Waits until Ruby has recorded at least `count` runs, then returns every record in run order. */
async function waitForRuns(
  handle: RedisHandle,
  sidekiq: SidekiqProcess,
  count: number,
  timeoutMs: number,
): Promise<RubyRun[]> {
  const deadline = Date.now() + timeoutMs;
  let seen: number;
  while ((seen = await handle.redis.llen(RAN)) < count) {
    if (Date.now() > deadline) {
      assert.fail(`Ruby ran ${seen} of ${count} jobs within ${timeoutMs} ms; sidekiq log tail:\n${sidekiq.output()}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return (await handle.redis.lrange(RAN, 0, -1)).map((line) => JSON.parse(line) as RubyRun);
}

// JavaScript has one number type, so what Ruby sees depends on the JSON text: integral values
// (including 2.0, which JSON.stringify writes as 2) arrive as Integer, anything with a fraction or
// an exponent as Float.
const MIXED_ARGS: JsonValue[] = [
  "plain",
  'unicode é ü 中文 😀 \u2028 "quoted" back\\slash\nnewline\ttab\u0001 /slash',
  "",
  0,
  42,
  -7,
  Number.MAX_SAFE_INTEGER,
  3.14159,
  -0.5,
  0.1 + 0.2,
  1e-7,
  1.5e300,
  { nested: { list: [1, "two", null, false], deep: { x: 1.25 } }, "key with spaces": true, ключ: "значение" },
  [],
  {},
  null,
  true,
  false,
];
const MIXED_TYPES: JsonValue = [
  "String",
  "String",
  "String",
  "Integer",
  "Integer",
  "Integer",
  "Integer",
  "Float",
  "Float",
  "Float",
  "Float",
  "Float",
  {
    nested: { list: ["Integer", "String", "NilClass", "FalseClass"], deep: { x: "Float" } },
    "key with spaces": "TrueClass",
    ключ: "String",
  },
  [],
  {},
  "NilClass",
  "TrueClass",
  "FalseClass",
];

test("Ruby runs client.push and Job.performAsync jobs with identical args, types and queue", async (t) => {
  if (!requireRubySidekiq(t)) return;
  const client = clientFor(t);
  const sidekiq = await runSidekiq(t, { queues: ["critical", "default"] });

  const viaPush = await client.push({ class: "InteropJob", args: MIXED_ARGS });
  const viaJob = await InteropJob.set({ client }).performAsync(...MIXED_ARGS);
  const viaQueue = await InteropJob.set({ client, queue: "critical" }).performAsync("to critical", 1.5);
  assert.ok(viaPush && viaJob && viaQueue, "no middleware is installed, so every push returns a jid");

  const runs = await waitForRuns(redis, sidekiq, 3, 20_000);
  const byJid = new Map(runs.map((run) => [run.jid, run]));
  for (const [how, jid] of [
    ["client.push", viaPush],
    ["performAsync", viaJob],
  ] as const) {
    const run = byJid.get(jid);
    assert.ok(run, `Ruby never ran the ${how} job ${jid}; ran: ${JSON.stringify(runs)}`);
    assert.equal(run.class, "InteropJob");
    assert.equal(run.queue, "default");
    assert.deepEqual(run.args, MIXED_ARGS, `${how}: Ruby saw different args`);
    assert.deepEqual(run.arg_types, MIXED_TYPES, `${how}: Ruby saw different types`);
  }
  const critical = byJid.get(viaQueue);
  assert.ok(critical, "Ruby never ran the job set to queue critical");
  assert.equal(critical.queue, "critical");
  assert.deepEqual(critical.args, ["to critical", 1.5]);
  assert.deepEqual(critical.arg_types, ["String", "Float"]);
  assert.equal(runs.length, 3, "each job runs exactly once");
});

test("performIn(3) runs in Ruby only after its time, after an immediate job pushed with it", async (t) => {
  if (!requireRubySidekiq(t)) return;
  const client = clientFor(t);
  const sidekiq = await runSidekiq(t);

  const pushedAt = nowSeconds();
  const laterJid = await InteropJob.set({ client }).performIn(3, "later");
  const nowJid = await InteropJob.set({ client }).performAsync("now");
  assert.ok(laterJid && nowJid);

  // Ruby's poller cannot have moved it yet: it is due in 3 s.
  const [member, score] = await redis.redis.zrange(SCHEDULE, 0, -1, "WITHSCORES");
  assert.ok(member !== undefined && score !== undefined, "performIn wrote nothing to schedule");
  const scheduled = JSON.parse(member) as { jid: string; created_at: number };
  assert.equal(scheduled.jid, laterJid);
  const runAt = Number(score);
  assert.ok(runAt >= pushedAt + 3 && runAt < pushedAt + 4, `schedule score ${score} is not ~3 s after ${pushedAt}`);

  const runs = await waitForRuns(redis, sidekiq, 2, 20_000);
  assert.deepEqual(
    runs.map((run) => run.jid),
    [nowJid, laterJid],
    "the immediate job runs first, the scheduled one second",
  );
  const [now, later] = runs as [RubyRun, RubyRun];
  assert.ok(now.ran_at < runAt, `the immediate job ran at ${now.ran_at}, not before the scheduled time ${runAt}`);
  assert.ok(later.ran_at >= runAt, `the scheduled job ran at ${later.ran_at}, before its time ${runAt}`);
  assert.deepEqual(later.args, ["later"]);
  // created_at is tsq's; enqueued_at is set by Ruby's poller when it moves the job to its queue.
  assert.equal(later.created_at, scheduled.created_at);
  assert.ok(later.enqueued_at !== null && later.enqueued_at >= runAt);
  t.diagnostic(`scheduled job ran ${(later.ran_at - runAt).toFixed(2)} s after its time (6.4.1 polls every 0.5-1.5 s)`);
});

test("performBulk of 10,000 jobs: Ruby runs every one exactly once", async (t) => {
  if (!requireRubySidekiq(t)) return;
  const client = clientFor(t);
  const count = 10_000;
  const sidekiq = await runSidekiq(t, { concurrency: 10 });

  const argsList = Array.from({ length: count }, (_, i) => [i]);
  const pushStart = performance.now();
  const jids = await InteropJob.set({ client }).performBulk(argsList);
  const pushMs = performance.now() - pushStart;
  assert.equal(jids.length, count);
  const expected = new Map(jids.map((jid, i) => [jid, i]));
  assert.equal(expected.size, count, "every job has its own jid");

  const runs = await waitForRuns(redis, sidekiq, count, 90_000);
  const drainMs = performance.now() - pushStart;
  // A duplicate run would show up as extra records shortly after the last one.
  await new Promise((resolve) => setTimeout(resolve, 1000));
  assert.equal(await redis.redis.llen(RAN), count, "no job ran twice");
  assert.equal(await redis.redis.llen(queueKey("default")), 0);

  const seen = new Set<string>();
  for (const run of runs) {
    assert.ok(!seen.has(run.jid), `jid ${run.jid} ran twice`);
    seen.add(run.jid);
    const index = expected.get(run.jid);
    assert.ok(index !== undefined, `Ruby ran a jid tsq never pushed: ${run.jid}`);
    assert.deepEqual(run.args, [index], `jid ${run.jid} ran with the wrong args`);
  }
  assert.equal(seen.size, count);
  const message =
    `pushed ${count} jobs in ${pushMs.toFixed(0)} ms; Ruby Sidekiq (-c 10) finished them ` +
    `${(drainMs / 1000).toFixed(1)} s after the push started`;
  t.diagnostic(message);
});

test("Ruby reads tsq's created_at and enqueued_at as Float, even for a whole-second value", async (t) => {
  if (!requireRubySidekiq(t)) return;
  const client = clientFor(t);
  // A whole second: JSON.stringify would write 1712345678, which Ruby parses as Integer (and Sidekiq 8
  // would take for milliseconds). tsq must write 1712345678.0.
  const wholeSecond = 1712345678;
  const wholeJid = await client.push({ class: "InteropJob", args: ["whole"], created_at: wholeSecond });
  const normalJid = await client.push({ class: "InteropJob", args: ["normal"] });
  assert.ok(wholeJid && normalJid);

  const raw = await redis.redis.lrange(queueKey("default"), 0, -1);
  const wholeRaw = raw.find((json) => json.includes(wholeJid));
  assert.ok(wholeRaw?.includes(`"created_at":${wholeSecond}.0,`), `created_at lost its fraction: ${wholeRaw}`);
  for (const json of raw) assert.match(json, /"enqueued_at":\d+\.\d+[,}]/, "enqueued_at is written as a float");

  const sidekiq = await runSidekiq(t);
  const runs = await waitForRuns(redis, sidekiq, 2, 20_000);
  for (const run of runs) {
    assert.equal(
      run.created_at_class,
      "Float",
      `created_at of ${JSON.stringify(run.args[0])} is a Ruby ${run.created_at_class}`,
    );
    assert.equal(
      run.enqueued_at_class,
      "Float",
      `enqueued_at of ${JSON.stringify(run.args[0])} is a Ruby ${run.enqueued_at_class}`,
    );
  }
  const whole = runs.find((run) => run.jid === wholeJid);
  assert.equal(whole?.created_at, wholeSecond);
  const normal = runs.find((run) => run.jid === normalJid);
  assert.ok(normal && normal.created_at !== null && Math.abs(normal.created_at - nowSeconds()) < 60);
});
