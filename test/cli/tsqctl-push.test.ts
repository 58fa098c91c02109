import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { tsqctl as runTsqctl } from "../helpers/tsqctl.js";
import { freePort, useRedis } from "../helpers/redis.js";

const redis = useRedis();

interface Run {
  exitCode: number;
  stdout: string;
  stderr: string;
}

/** Runs tsqctl (in this process) against the private Redis (or the given REDIS_URL). */
async function tsqctl(args: string[], env: Record<string, string> = {}): Promise<Run> {
  if (!redis.url) throw new Error("the private Redis is not running; refusing to run tsqctl against a default Redis");
  return runTsqctl(args, { REDIS_URL: redis.url, ...env }, { stripFinalNewline: false });
}

type Stored = Record<string, unknown>;

describe("tsqctl push", () => {
  test("prints the jid and enqueues the job with Sidekiq's fields", async () => {
    const run = await tsqctl(["push", "HardJob", '["bob", 5, {"k": [null, true]}]']);
    assert.equal(run.exitCode, 0, run.stderr);
    assert.equal(run.stderr, "");
    assert.match(run.stdout, /^[0-9a-f]{24}\n$/);
    const jid = run.stdout.trim();
    assert.deepEqual(await redis.redis.smembers("queues"), ["default"]);
    const [raw] = await redis.redis.lrange("queue:default", 0, -1);
    assert.ok(raw);
    assert.match(raw, /"created_at":\d+\.\d+/);
    assert.match(raw, /"enqueued_at":\d+\.\d+/);
    const job = JSON.parse(raw) as Stored;
    assert.equal(job.jid, jid);
    assert.equal(job.class, "HardJob");
    assert.deepEqual(job.args, ["bob", 5, { k: [null, true] }]);
    assert.equal(job.queue, "default");
    assert.equal(job.retry, true);
  });

  test("with a Sidekiq 8 fleet in Redis: integer-millisecond timestamps, as its processes read", async () => {
    const info = JSON.stringify({ hostname: "web", pid: 3, identity: "web:3:abc", version: "8.0.10" });
    await redis.redis.multi().sadd("processes", "web:3:abc").hset("web:3:abc", "info", info).exec();
    const run = await tsqctl(["push", "HardJob", "[]"]);
    assert.equal(run.exitCode, 0, run.stderr);
    const [raw] = await redis.redis.lrange("queue:default", 0, -1);
    assert.match(raw ?? "", /"created_at":\d{13}[,}]/);
    assert.match(raw ?? "", /"enqueued_at":\d{13}[,}]/);
  });

  test("json-args defaults to []", async () => {
    const run = await tsqctl(["push", "Cleanup::Nightly"]);
    assert.equal(run.exitCode, 0, run.stderr);
    const job = JSON.parse((await redis.redis.lrange("queue:default", 0, -1))[0]!) as Stored;
    assert.equal(job.class, "Cleanup::Nightly");
    assert.deepEqual(job.args, []);
  });

  test("--queue and --retry", async () => {
    const a = await tsqctl(["push", "HardJob", "[1]", "-q", "critical", "--retry", "3"]);
    const b = await tsqctl(["push", "HardJob", "[2]", "--queue", "low", "--retry", "false"]);
    assert.equal(a.exitCode, 0, a.stderr);
    assert.equal(b.exitCode, 0, b.stderr);
    const critical = JSON.parse((await redis.redis.lrange("queue:critical", 0, -1))[0]!) as Stored;
    const low = JSON.parse((await redis.redis.lrange("queue:low", 0, -1))[0]!) as Stored;
    assert.deepEqual([critical.queue, critical.retry], ["critical", 3]);
    assert.deepEqual([low.queue, low.retry], ["low", false]);
    assert.deepEqual((await redis.redis.smembers("queues")).sort(), ["critical", "low"]);
  });

  test("--in 60 lands in schedule, scored 60 s from now, without an at field", async () => {
    const before = Date.now() / 1000;
    const run = await tsqctl(["push", "LaterJob", '["x"]', "--in", "60", "-q", "critical"]);
    const after = Date.now() / 1000;
    assert.equal(run.exitCode, 0, run.stderr);
    const [member, score] = (await redis.redis.zrange("schedule", 0, -1, "WITHSCORES")) as [string, string];
    assert.ok(Number(score) >= before + 60 && Number(score) <= after + 60, `score ${score}`);
    const job = JSON.parse(member) as Stored;
    assert.equal(job.jid, run.stdout.trim());
    assert.equal(job.queue, "critical");
    assert.ok(!("at" in job));
    assert.equal(await redis.redis.exists("queue:critical"), 0);
  });

  test("--at schedules at an epoch time; a past --at or --in 0 enqueues now", async () => {
    const at = Math.floor(Date.now() / 1000) + 3600;
    assert.equal((await tsqctl(["push", "LaterJob", "[]", "--at", String(at)])).exitCode, 0);
    assert.deepEqual(await redis.redis.zrange("schedule", 0, -1, "WITHSCORES").then((e) => e[1]), String(at));
    assert.equal((await tsqctl(["push", "NowJob", "[]", "--at", "1000000000"])).exitCode, 0);
    assert.equal((await tsqctl(["push", "NowJob", "[]", "--in", "0"])).exitCode, 0);
    assert.equal(await redis.redis.llen("queue:default"), 2);
    assert.equal(await redis.redis.zcard("schedule"), 1);
  });

  test("--redis-url wins over REDIS_URL", async () => {
    const closed = `redis://127.0.0.1:${await freePort()}/0`;
    const run = await tsqctl(["push", "HardJob", "[]", "--redis-url", redis.url], { REDIS_URL: closed });
    assert.equal(run.exitCode, 0, run.stderr);
    assert.equal(await redis.redis.llen("queue:default"), 1);
  });

  test("--help exits 0", async () => {
    const run = await tsqctl(["push", "--help"]);
    assert.equal(run.exitCode, 0);
    assert.match(run.stdout, /Usage: tsqctl push \[options\] <class> \[json-args\]/);
    assert.match(run.stdout, /--in <seconds>/);
  });
});

describe("tsqctl push errors", () => {
  async function fails(args: string[], code: number, stderr: RegExp, env: Record<string, string> = {}): Promise<void> {
    const run = await tsqctl(args, env);
    assert.equal(run.exitCode, code, `${args.join(" ")}: ${run.stderr}`);
    assert.equal(run.stdout, "", args.join(" "));
    assert.match(run.stderr, stderr, args.join(" "));
  }

  test("bad JSON args: exit 2, naming the problem", async () => {
    await fails(["push", "HardJob", "[1,"], 2, /^tsqctl push: json-args is not valid JSON \(.+\); quote it/);
    await fails(["push", "HardJob", "bob"], 2, /json-args is not valid JSON/);
    assert.equal(await redis.redis.dbsize(), 0);
  });

  test("JSON args that are not an array: exit 2", async () => {
    await fails(
      ["push", "HardJob", '{"a":1}'],
      2,
      /json-args must be a JSON array of job arguments, e\.g\. '\["bob", 5\]'; got an object/,
    );
    await fails(["push", "HardJob", '"bob"'], 2, /must be a JSON array .*; got a string/);
    await fails(["push", "HardJob", "5"], 2, /must be a JSON array .*; got a number/);
    await fails(["push", "HardJob", "null"], 2, /must be a JSON array .*; got null/);
    assert.equal(await redis.redis.dbsize(), 0);
  });

  test("strict-arg errors from the client: exit 2 with the message", async () => {
    await fails(
      ["push", "HardJob", "[1e400]"],
      2,
      /^tsqctl push: args\[0\] is Infinity; job arguments must be JSON-native/,
    );
    await fails(["push", "HardJob", '[{"n": [-1e999]}]'], 2, /args\[0\]\.n\[0\] is -Infinity/);
    assert.equal(await redis.redis.dbsize(), 0);
  });

  test("--in and --at together: exit 2", async () => {
    await fails(["push", "HardJob", "[]", "--in", "5", "--at", "1800000000"], 2, /cannot be used with option '--at/);
    assert.equal(await redis.redis.dbsize(), 0);
  });

  test("bad flags and values: exit 2 with usage", async () => {
    const usage = /Usage: tsqctl push \[options\] <class> \[json-args\]/;
    await fails(["push", "HardJob", "--bogus"], 2, /error: unknown option '--bogus'[\s\S]*Usage: tsqctl push/);
    await fails(["push", "HardJob", "--retry", "maybe"], 2, /--retry must be true, false or a number of retries/);
    await fails(["push", "HardJob", "--retry", "-1"], 2, usage);
    await fails(["push", "HardJob", "--in", "soon"], 2, /--in must be a number of seconds/);
    await fails(["push", "HardJob", "--in", "-5"], 2, /--in must not be negative/);
    await fails(["push", "HardJob", "--in", "2000000000"], 2, /use --at for epoch seconds/);
    await fails(["push", "HardJob", "--at", "1712345678123"], 2, /looks like milliseconds/);
    await fails(["push", "HardJob", "-q", ""], 2, /--queue must not be empty/);
    await fails(["push"], 2, /missing required argument 'class'/);
    await fails(["push", "HardJob", "[]", "extra"], 2, /too many arguments/);
    await fails([], 2, /Usage: tsqctl \[options\] \[command\]/);
    await fails(["pusj"], 2, /unknown command 'pusj'/);
    assert.equal(await redis.redis.dbsize(), 0);
  });

  test("a Redis URL that is not redis:// or rediss://: exit 2", async () => {
    await fails(["push", "HardJob", "--redis-url", "http://localhost"], 2, /must start with redis:\/\/ or rediss:\/\//);
  });

  test("Redis unreachable: exit 1 at once, password redacted", async () => {
    const port = await freePort();
    const started = Date.now();
    await fails(
      ["push", "HardJob"],
      1,
      new RegExp(`^tsqctl push: cannot reach Redis at redis://:\\*\\*\\*@127\\.0\\.0\\.1:${port}/0: .*ECONNREFUSED`),
      {
        REDIS_URL: `redis://:secret@127.0.0.1:${port}/0`,
      },
    );
    assert.ok(Date.now() - started < 10_000);
  });
});
