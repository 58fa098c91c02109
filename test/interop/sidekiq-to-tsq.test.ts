/**
 * Payloads written by the real Ruby client (Sidekiq 6.4.1, test/ruby/push_golden.rb) are read by tsq
 * field for field, re-serialized byte for byte, and pinned as golden fixtures in
 * test/fixtures/sidekiq-6.4.1/<case>.json. A fixture is Ruby's exact JSON text with the values that
 * change on every push replaced by placeholders:
 *
 *   {"retry":true,"queue":"default","args":[…],"class":"HardJob","jid":"<jid>",
 *    "created_at":"<float seconds>","enqueued_at":"<float seconds>"}
 *
 * Then the reverse: tsq pushing the same jobs writes the same key set with the same types.
 *
 * Regenerate the fixtures (after checking the change is really Sidekiq's) with
 *   UPDATE_FIXTURES=1 node --test dist/test/interop/sidekiq-to-tsq.test.js
 */
import { test, type TestContext } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { Client } from "../../src/client/Client.js";
import { Job } from "../../src/client/Job.js";
import { dumpPayload, parsePayload, TIMESTAMP_FIELDS, type JsonValue } from "../../src/wire/payload.js";
import { QUEUES, SCHEDULE, queueKey } from "../../src/wire/keys.js";
import { nowSeconds } from "../../src/wire/timestamps.js";
import { useRedis } from "../helpers/redis.js";
import { requireRubySidekiq } from "../helpers/ruby.js";
import { repoRoot, rubyTestFile } from "../helpers/sidekiqProcess.js";

const FIXTURES = join(repoRoot(), "test", "fixtures", "sidekiq-6.4.1");
const UPDATE = process.env.UPDATE_FIXTURES === "1";
/** One fixture per case in test/ruby/push_golden.rb. */
const FIXTURE_NAMES = ["plain", "perform_in", "options", "push_bulk", "extra_fields", "numbers"];
/** Cases whose Ruby args JavaScript numbers cannot reproduce; skipped by the reverse check. */
const RUBY_ONLY = new Set(["numbers"]);

const redis = useRedis();

/** What push_golden.rb printed for one case. */
interface RubyPush {
  code: string;
  jids: string[];
  before: number;
  after: number;
}

/** One job as stored in Redis: its key, its exact JSON text and, in a sorted set, its score. */
interface Stored {
  key: string;
  raw: string;
  score?: string;
}

interface Fixture {
  ruby: string;
  key: string;
  payloads: Record<string, JsonValue>[];
}

// ---------------------------------------------------------------------------------------------
// Reading Redis and normalizing payloads
// ---------------------------------------------------------------------------------------------

async function pushFromRuby(): Promise<Record<string, RubyPush>> {
  assert.ok(redis.url, "the private Redis is not up");
  const { stdout } = await promisify(execFile)("ruby", [rubyTestFile("push_golden.rb")], {
    env: { ...process.env, REDIS_URL: redis.url },
  });
  const last = stdout.trim().split("\n").pop() ?? "";
  return JSON.parse(last) as Record<string, RubyPush>;
}

/** Every job in every queue and in `schedule`, by jid. */
async function readStored(): Promise<Map<string, Stored>> {
  const byJid = new Map<string, Stored>();
  const add = (entry: Stored) => byJid.set((JSON.parse(entry.raw) as { jid: string }).jid, entry);
  for (const queue of await redis.redis.smembers(QUEUES)) {
    const key = queueKey(queue);
    for (const raw of await redis.redis.lrange(key, 0, -1)) add({ key, raw });
  }
  const scored = await redis.redis.zrange(SCHEDULE, 0, -1, "WITHSCORES");
  for (let i = 0; i < scored.length; i += 2) add({ key: SCHEDULE, raw: scored[i]!, score: scored[i + 1]! });
  return byJid;
}

/**
 * The raw text span of each top-level value of a JSON object, so a value can be replaced without
 * re-serializing (and so reformatting) anything else. `json` must already be valid JSON.
 */
function topLevelSpans(json: string): Map<string, [start: number, end: number]> {
  let i = 0;
  const ws = () => {
    while (/\s/.test(json[i] ?? "")) i++;
  };
  const skipString = () => {
    for (i++; json[i] !== '"'; i++) if (json[i] === "\\") i++;
    i++;
  };
  const skipValue = (): void => {
    ws();
    const open = json[i];
    if (open === '"') return skipString();
    if (open === "{" || open === "[") {
      i++;
      for (ws(); json[i] !== (open === "{" ? "}" : "]"); ws()) {
        if (open === "{") {
          ws();
          skipString();
          ws();
          i++; // ':'
        }
        skipValue();
        ws();
        if (json[i] === ",") i++;
      }
      i++;
      return;
    }
    while (i < json.length && !/[\s,\]}]/.test(json[i]!)) i++; // number, true, false, null
  };
  const spans = new Map<string, [number, number]>();
  ws();
  i++; // '{'
  for (ws(); json[i] !== "}"; ws()) {
    const keyStart = i;
    skipString();
    const key = JSON.parse(json.slice(keyStart, i)) as string;
    ws();
    i++; // ':'
    ws();
    const start = i;
    skipValue();
    spans.set(key, [start, i]);
    ws();
    if (json[i] === ",") i++;
  }
  return spans;
}

/** "<float seconds>" for a seconds timestamp within a day of now, "<integer milliseconds>" likewise. */
function timestampPlaceholder(literal: string): string {
  const value = Number(literal);
  const day = 86_400;
  if (/^\d{10}\.\d+$/.test(literal) && Math.abs(value - nowSeconds()) < day) return "<float seconds>";
  if (/^\d{13}$/.test(literal) && Math.abs(value / 1000 - nowSeconds()) < day) return "<integer milliseconds>";
  return `<unexpected timestamp ${literal}>`;
}

/** Ruby's exact JSON text with the jid and the timestamps replaced by placeholders. */
function normalize(raw: string): string {
  const spans = [...topLevelSpans(raw)].sort((a, b) => b[1][0] - a[1][0]); // replace from the end
  let text = raw;
  for (const [key, [start, end]] of spans) {
    const literal = raw.slice(start, end);
    let placeholder: string | undefined;
    if (key === "jid") placeholder = /^"[0-9a-f]{24}"$/.test(literal) ? "<jid>" : `<unexpected jid ${literal}>`;
    else if (TIMESTAMP_FIELDS.has(key)) placeholder = timestampPlaceholder(literal);
    if (placeholder !== undefined) text = text.slice(0, start) + JSON.stringify(placeholder) + text.slice(end);
  }
  return text;
}

/** The fixture file's text: readable, valid JSON, and each payload line exactly as normalized. */
function fixtureText(ruby: string, key: string, normalized: string[]): string {
  const payloads = normalized.map((line) => `    ${line}`).join(",\n");
  return `{\n  "ruby": ${JSON.stringify(ruby)},\n  "key": ${JSON.stringify(key)},\n  "payloads": [\n${payloads}\n  ]\n}\n`;
}

function fixturePath(name: string): string {
  return join(FIXTURES, `${name}.json`);
}

function readFixture(name: string): Fixture {
  const path = fixturePath(name);
  assert.ok(existsSync(path), `missing fixture ${path}; create it with UPDATE_FIXTURES=1`);
  return JSON.parse(readFileSync(path, "utf8")) as Fixture;
}

// ---------------------------------------------------------------------------------------------
// Ruby -> tsq
// ---------------------------------------------------------------------------------------------

test("payloads the Ruby client writes match the golden fixtures and survive parsePayload/dumpPayload", async (t) => {
  if (!requireRubySidekiq(t)) return;
  const pushed = await pushFromRuby();
  const stored = await readStored();
  assert.deepEqual(
    Object.keys(pushed).sort(),
    [...FIXTURE_NAMES].sort(),
    "push_golden.rb and the fixture list disagree",
  );

  for (const [name, push] of Object.entries(pushed)) {
    const entries = push.jids.map((jid) => {
      const entry = stored.get(jid);
      assert.ok(entry, `${name}: Ruby returned jid ${jid} but it is in no queue and not in schedule`);
      return entry;
    });
    const key = entries[0]!.key;
    assert.ok(
      entries.every((entry) => entry.key === key),
      `${name}: jobs landed in different keys`,
    );

    await t.test(`${name}: normalized payload equals test/fixtures/sidekiq-6.4.1/${name}.json`, () => {
      const actual = fixtureText(
        push.code,
        key,
        entries.map((entry) => normalize(entry.raw)),
      );
      const path = fixturePath(name);
      if (UPDATE || !existsSync(path)) {
        assert.ok(UPDATE, `missing fixture ${path}; create it with UPDATE_FIXTURES=1`);
        mkdirSync(FIXTURES, { recursive: true });
        writeFileSync(path, actual);
        t.diagnostic(`wrote ${path}`);
        return;
      }
      assert.equal(actual, readFileSync(path, "utf8"), `Sidekiq's wire format for ${name} changed`);
    });

    await t.test(`${name}: parsePayload reads every field as Ruby wrote it`, () => {
      for (const [index, entry] of entries.entries()) {
        const job = parsePayload(entry.raw);
        assert.deepEqual({ ...job }, JSON.parse(entry.raw), "parsePayload added, dropped or changed a field");
        assert.deepEqual(Object.keys(job), Object.keys(JSON.parse(entry.raw) as object), "field order changed");
        assert.equal(job.class, "HardJob");
        assert.equal(job.jid, push.jids[index]);
        assert.equal(job.queue, key === SCHEDULE ? "default" : key.slice("queue:".length));
        assert.ok(Array.isArray(job.args));
        assert.equal(typeof job.created_at, "number");
        assert.ok(job.created_at! >= push.before - 0.001 && job.created_at! <= push.after + 0.001);
      }
    });

    await t.test(`${name}: dumpPayload(parsePayload(raw)) is byte-for-byte Ruby's JSON`, () => {
      for (const entry of entries) assert.equal(dumpPayload(parsePayload(entry.raw)), entry.raw);
    });
  }

  await t.test("perform_in: the schedule score is float epoch seconds, 60 s after the push", () => {
    const push = pushed.perform_in!;
    const entry = stored.get(push.jids[0]!)!;
    assert.equal(entry.key, SCHEDULE);
    assert.match(entry.score!, /^\d{10}\.\d+$/, "the score is seconds with a fraction (not ms, not an integer)");
    const score = Number(entry.score);
    assert.ok(score >= push.before + 60 && score <= push.after + 60, `score ${score} is not 60 s after the push`);
    const job = JSON.parse(entry.raw) as Record<string, unknown>;
    assert.ok(!("at" in job) && !("enqueued_at" in job), "6.4.1 drops `at` and writes no enqueued_at when scheduling");
  });
});

test("tsq re-serializes 20,000 Ruby-written timestamps exactly as Ruby's Float#to_s wrote them", async (t) => {
  if (!requireRubySidekiq(t)) return;
  // Sidekiq.dump_json is JSON.generate; Time#to_f values near now, arbitrary doubles over the whole
  // epoch-seconds range, and whole seconds (written "1712345678.0") rounded to 0..6 decimals.
  const script = `
    require "json"
    srand(6_4_1)
    10_000.times do |i|
      at = case i % 3
           when 0 then Time.now.to_f + rand
           when 1 then rand(1.0e9..2.0e9)
           else rand(1.0e9..2.0e9).round(i % 7).to_f # round(0) is an Integer
           end
      job = {"retry" => true, "queue" => "default", "class" => "HardJob", "args" => [], "jid" => "0" * 24}
      puts JSON.generate(job.merge("created_at" => at, "enqueued_at" => Time.now.to_f))
    end`;
  const { stdout } = await promisify(execFile)("ruby", ["-e", script], { maxBuffer: 64 * 1024 * 1024 });
  const lines = stdout.trim().split("\n");
  assert.equal(lines.length, 10_000);
  assert.ok(
    lines.some((line) => /"created_at":\d+\.0,/.test(line)),
    "the sample includes whole seconds",
  );
  const differing = lines
    .map((ruby) => ({ ruby, tsq: dumpPayload(parsePayload(ruby)) }))
    .filter(({ ruby, tsq }) => ruby !== tsq);
  assert.deepEqual(differing.slice(0, 5), [], `${differing.length} of ${lines.length} payloads changed`);
});

// ---------------------------------------------------------------------------------------------
// tsq -> same wire shape
// ---------------------------------------------------------------------------------------------

class HardJob extends Job {
  perform(..._args: JsonValue[]): void {}
}

/** tsq's twin of each push in test/ruby/push_golden.rb (same class, args and options). */
const TSQ_PUSHES: Record<string, (client: Client) => Promise<unknown>> = {
  plain: (client) => client.push({ class: "HardJob", args: ["bob", 5, 1.5, { nested: [true, null] }, "unicode é 😀"] }),
  perform_in: (client) => HardJob.set({ client }).performIn(60, "later", 2),
  options: (client) =>
    HardJob.set({ client, retry: 5, queue: "critical", backtrace: true, tags: ["alpha", "beta"] }).performAsync(
      "important",
    ),
  push_bulk: (client) => client.pushBulk({ class: "HardJob", args: [[1], [2], [3]], queue: "bulk" }),
  extra_fields: (client) => client.push({ class: "HardJob", args: [], bid: "abc", custom: { x: 1 } }),
};

function jsonType(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  return typeof value;
}

test("tsq writes the key set and types Ruby writes for the same pushes", async (t: TestContext) => {
  assert.ok(redis.url, "the private Redis is not up");
  const client = new Client({ redis: redis.url });
  t.after(() => client.close());
  assert.deepEqual(
    Object.keys(TSQ_PUSHES).sort(),
    FIXTURE_NAMES.filter((name) => !RUBY_ONLY.has(name)).sort(),
    "every fixture but the Ruby-only ones has a tsq twin",
  );

  for (const [name, push] of Object.entries(TSQ_PUSHES)) {
    await t.test(name, async () => {
      await redis.redis.flushdb();
      const before = nowSeconds();
      await push(client);
      const stored = [...(await readStored()).values()];
      const fixture = readFixture(name);
      assert.equal(stored.length, fixture.payloads.length, "as many jobs as Ruby wrote");
      // Bulk jobs: match by args, since list order is LPUSH order.
      const sortKey = (args: unknown) => JSON.stringify(args);
      const expected = [...fixture.payloads].sort((a, b) => sortKey(a.args).localeCompare(sortKey(b.args)));
      const actual = stored
        .map((entry) => ({ entry, job: JSON.parse(normalize(entry.raw)) as Record<string, JsonValue> }))
        .sort((a, b) => sortKey(a.job.args).localeCompare(sortKey(b.job.args)));

      for (const [index, { entry, job }] of actual.entries()) {
        const want = expected[index]!;
        assert.equal(entry.key, fixture.key, "stored under the key Ruby uses");
        assert.deepEqual(Object.keys(job).sort(), Object.keys(want).sort(), "same key set as Ruby");
        for (const key of Object.keys(want)) {
          assert.equal(jsonType(job[key]), jsonType(want[key]), `${key}: JSON type differs from Ruby's`);
          assert.deepEqual(job[key], want[key], `${key}: value differs from Ruby's`);
        }
        if (entry.score !== undefined) {
          assert.match(entry.score, /^\d{10}\.\d+$/, "the schedule score is float seconds");
          const score = Number(entry.score);
          assert.ok(score >= before + 60 && score <= nowSeconds() + 60, `score ${score} is not 60 s after the push`);
        }
      }
    });
  }
});
