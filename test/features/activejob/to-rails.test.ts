/**
 * performLater writes what Rails' Sidekiq adapter writes: the same jobs pushed by a real ActiveJob 6.1
 * (test/ruby/activejob_push.rb) and by performLater are compared field by field; then a real Sidekiq
 * 6.4.1 process with ActiveJob (test/ruby/activejob_jobs.rb) runs the TypeScript-pushed jobs and
 * records the Ruby values it received, with their classes.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { useRedis } from "../../helpers/redis.js";
import { requireRubyLibrary, runRubyScript } from "../../helpers/rails.js";
import { startSidekiq, useSidekiqCleanup, rubyTestFile } from "../../helpers/sidekiqProcess.js";
import { Client } from "../../../src/client/Client.js";
import { performLater, type PerformLaterOptions } from "../../../src/features/activejob/performLater.js";
import {
  indifferentAccess,
  RubyDate,
  RubyDuration,
  RubyModule,
  RubySymbol,
  RubyTime,
  symbolKeys,
} from "../../../src/features/activejob/values.js";
import type { JobPayload } from "../../../src/wire/payload.js";

const redis = useRedis();
useSidekiqCleanup();

/** Each case of activejob_push.rb, pushed from TypeScript. */
const CASES: Record<string, { args: unknown[]; options?: PerformLaterOptions }> = {
  positional: { args: ["bob", 3, 2.5, null, true, ["x", 1]] },
  keywords: { args: ["bob", { count: 3, tags: ["a"] }], options: { keywords: true } },
  symbol_keys: { args: [symbolKeys({ name: "bob", nested: symbolKeys({ deep: 1 }) })] },
  string_keys: { args: [{ name: "bob", n: 2 }] },
  indifferent: { args: [indifferentAccess({ a: 1 })] },
  time: { args: [new RubyTime("2024-01-02T03:04:05.123456789Z")] },
  values: {
    args: [
      new RubyDate("2024-01-02"),
      new RubySymbol("draft"),
      new RubyDuration(300, { minutes: 5 }),
      new RubyDuration(5400, { hours: 1.5 }),
      new RubyModule("String"),
      new RubyTime("2024-01-02T12:00:00.000000000+09:00", "ActiveSupport::TimeWithZone"),
      new RubyTime("2024-01-02T03:04:05.000000000+00:00", "DateTime"),
    ],
    options: { timezone: "Tokyo" },
  },
  scheduled: { args: ["later"], options: { wait: 5 } },
  context: { args: ["ctx"], options: { queue: "critical", priority: 7, locale: "fr", timezone: "UTC" } },
};

/** Every stored job (queues and schedule), by jid. */
async function stored(): Promise<Map<string, JobPayload>> {
  const jobs = new Map<string, JobPayload>();
  for (const queue of await redis.redis.smembers("queues")) {
    for (const raw of await redis.redis.lrange(`queue:${queue}`, 0, -1)) {
      const job = JSON.parse(raw) as JobPayload;
      jobs.set(job.jid, job);
    }
  }
  for (const raw of await redis.redis.zrange("schedule", 0, -1)) {
    const job = JSON.parse(raw) as JobPayload;
    jobs.set(job.jid, job);
  }
  return jobs;
}

test("performLater writes the payload Rails' adapter writes, case by case", async (t) => {
  if (!requireRubyLibrary(t, "active_job", "ruby-activejob")) return;
  const names = Object.keys(CASES);
  const fromRuby = await runRubyScript<Record<string, { jid: string }>>("activejob_push.rb", names, redis.url);
  const client = new Client({ redis: redis.url });
  const fromTs: Record<string, string> = {};
  for (const name of names) {
    const { args, options } = CASES[name]!;
    fromTs[name] = (await performLater("RecordJob", args, { ...options, client })).jid!;
  }
  await client.close();
  const jobs = await stored();
  for (const name of names) {
    const ruby = jobs.get(fromRuby[name]!.jid)!;
    const ts = jobs.get(fromTs[name]!)!;
    assert.deepEqual(Object.keys(ts).sort(), Object.keys(ruby).sort(), `${name}: the same payload fields`);
    for (const field of ["class", "wrapped", "queue", "retry"]) {
      assert.deepEqual(ts[field], ruby[field], `${name}: ${field}`);
    }
    const [rubyData, tsData] = [ruby.args[0], ts.args[0]] as Record<string, unknown>[];
    assert.deepEqual(Object.keys(tsData!), Object.keys(rubyData!), `${name}: job.serialize's fields, in order`);
    for (const field of ["job_class", "provider_job_id", "queue_name", "priority", "arguments", "executions"]) {
      assert.deepEqual(tsData![field], rubyData![field], `${name}: ${field}`);
    }
    for (const field of ["exception_executions", "locale", "timezone"]) {
      assert.deepEqual(tsData![field], rubyData![field], `${name}: ${field}`);
    }
    assert.match(tsData!.job_id as string, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    assert.match(tsData!.enqueued_at as string, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/, "Time.now.utc.iso8601");
  }
  assert.equal(await redis.redis.zcard("schedule"), 2, "both scheduled jobs wait in the schedule set");
});

type Described = [string, unknown];

interface RubyRecord {
  job_id: string;
  provider_job_id: string;
  queue_name: string;
  priority: number | null;
  executions: number;
  locale: string;
  time_zone: string | null;
  ran_at: number;
  args: Described;
  kwargs: Described;
}

const str = (value: string): Described => ["String", value];
const int = (value: number): Described => ["Integer", value];
const sym = (value: string): Described => ["Symbol", value];

test("a real Sidekiq 6.4.1 with ActiveJob runs the TypeScript-pushed jobs and receives the Ruby values", async (t) => {
  if (!requireRubyLibrary(t, "active_job", "ruby-activejob")) return;
  const client = new Client({ redis: redis.url });
  const pushed = new Map<string, { jid: string; jobId: string; at: number }>();
  for (const [name, { args, options }] of Object.entries(CASES)) {
    const at = Date.now() / 1000 + (options?.wait ?? 0);
    const { jid, jobId } = await performLater("RecordJob", args, { ...options, client });
    pushed.set(name, { jid: jid!, jobId, at });
  }
  // A JavaScript Date goes as a Ruby Time, to the millisecond.
  const date = await performLater("RecordJob", [new Date("2024-01-02T03:04:05.123Z")], { client });
  await client.close();

  const sidekiq = await startSidekiq({
    redis,
    queues: ["default", "critical"],
    requireFile: rubyTestFile("activejob_jobs.rb"),
  });
  t.after(() => sidekiq.stop());
  const deadline = Date.now() + 30_000;
  while ((await redis.redis.llen("activejob:ran")) < pushed.size + 1) {
    if (Date.now() > deadline) throw new Error(`Ruby did not run every job; log tail:\n${sidekiq.output()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  const records = (await redis.redis.lrange("activejob:ran", 0, -1)).map((raw) => JSON.parse(raw) as RubyRecord);
  const byJid = new Map(records.map((record) => [record.provider_job_id, record]));
  const ran = (name: string) => byJid.get(pushed.get(name)!.jid)!;
  const noKeywords: Described = ["Hash", []];

  assert.deepEqual(ran("positional").args, [
    "Array",
    [str("bob"), int(3), ["Float", 2.5], ["NilClass", null], ["TrueClass", true], ["Array", [str("x"), int(1)]]],
  ]);
  assert.deepEqual(ran("positional").kwargs, noKeywords);
  assert.deepEqual(ran("keywords").args, ["Array", [str("bob")]], "perform(name, count: 3, tags: [...])");
  assert.deepEqual(ran("keywords").kwargs, [
    "Hash",
    [
      [sym("count"), int(3)],
      [sym("tags"), ["Array", [str("a")]]],
    ],
  ]);
  assert.deepEqual(ran("symbol_keys").args, [
    "Array",
    [
      [
        "Hash",
        [
          [sym("name"), str("bob")],
          [sym("nested"), ["Hash", [[sym("deep"), int(1)]]]],
        ],
      ],
    ],
  ]);
  assert.deepEqual(ran("symbol_keys").kwargs, noKeywords, "a Symbol-keyed hash stays positional");
  assert.deepEqual(ran("string_keys").args, [
    "Array",
    [
      [
        "Hash",
        [
          [str("name"), str("bob")],
          [str("n"), int(2)],
        ],
      ],
    ],
  ]);
  assert.deepEqual(ran("indifferent").args, ["Array", [["HashWithIndifferentAccess", [[str("a"), int(1)]]]]]);
  assert.deepEqual(ran("time").args, ["Array", [["Time", "2024-01-02T03:04:05.123456789Z"]]]);
  assert.deepEqual(byJid.get(date.jid!)!.args, ["Array", [["Time", "2024-01-02T03:04:05.123000000Z"]]]);
  assert.deepEqual(ran("values").args, [
    "Array",
    [
      ["Date", "2024-01-02"],
      sym("draft"),
      ["ActiveSupport::Duration", [300, [["minutes", 5]]]],
      ["ActiveSupport::Duration", [5400, [["hours", 1.5]]]],
      ["Module", "String"],
      // Rails reads it with `in_time_zone` before the job's zone is set; outside a Rails app (no
      // config.time_zone) that is a plain Time, exactly as for a Ruby-pushed TimeWithZone.
      ["Time", "2024-01-02T12:00:00.000000000+09:00"],
      ["DateTime", "2024-01-02T03:04:05.000000000+00:00"],
    ],
  ]);
  assert.equal(ran("values").time_zone, "Tokyo");
  assert.ok(ran("scheduled").ran_at >= pushed.get("scheduled")!.at - 0.05, "set(wait: 5) is honoured");

  const context = ran("context");
  assert.equal(context.job_id, pushed.get("context")!.jobId);
  assert.equal(context.queue_name, "critical");
  assert.equal(context.priority, 7);
  assert.equal(context.locale, "fr");
  assert.equal(context.time_zone, "UTC");
  assert.equal(context.executions, 1);
});

test("arguments ActiveJob cannot represent are rejected before Redis, naming the value", async () => {
  const client = new Client({ redis: redis.url });
  const rejects = async (args: unknown[], pattern: RegExp, options: PerformLaterOptions = {}) =>
    assert.rejects(performLater("GreetJob", args, { ...options, client }), pattern);
  await rejects(["ok", { when: new Map() }], /performLater\(GreetJob\): arguments\[1\]\.when is a Map/);
  await rejects([1n], /arguments\[0\] is a BigInt/);
  await rejects([undefined], /arguments\[0\] is undefined/);
  await rejects([{ n: NaN }], /arguments\[0\]\.n is NaN/);
  await rejects([Symbol("x")], /arguments\[0\] is a JavaScript Symbol/);
  await rejects([new (class Money {})()], /arguments\[0\] is an instance of Money/);
  await rejects([{ _aj_symbol_keys: [] }], /uses the key "_aj_symbol_keys", which ActiveJob reserves/);
  await rejects([new Date("nope")], /arguments\[0\] is an invalid Date/);
  const loop: Record<string, unknown> = {};
  loop.self = loop;
  await rejects([loop], /arguments\[0\]\.self is a circular reference/);
  await rejects(["bob", "not an object"], /arguments\[1\] must be a plain object of keyword arguments/, {
    keywords: true,
  });
  await client.close();
  assert.equal(await redis.redis.dbsize(), 0, "nothing reached Redis");
});
