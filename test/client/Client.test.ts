import { describe, test, afterEach } from "node:test";
import assert from "node:assert/strict";
import { spawnSync, type ChildProcess } from "node:child_process";
import { rmSync } from "node:fs";
import { Client } from "../../src/client/Client.js";
import { Job } from "../../src/client/Job.js";
import { Chain } from "../../src/platform/Chain.js";
import type { ClientMiddlewareArgs } from "../../src/client/Client.js";
import { ArgumentError, EnqueueError } from "../../src/wire/errors.js";
import { connect, type TsqRedis } from "../../src/platform/redis/connection.js";
import { startRedisServer, useRedis } from "../helpers/redis.js";

const redis = useRedis();
const JID = /^[0-9a-f]{24}$/;
/** A JSON number with a fractional part, as Sidekiq 6/7 readers need for float seconds. */
const FLOAT_FIELD = (field: string) => new RegExp(`"${field}":\\d{10}\\.\\d+[,}]`);
const MS_FIELD = (field: string) => new RegExp(`"${field}":\\d{13}[,}]`);

const clients: Client[] = [];
function newClient(options: ConstructorParameters<typeof Client>[0] = {}): Client {
  if (!redis.url) throw new Error("the private Redis is not running; refusing to fall back to REDIS_URL");
  const client = new Client({ redis: redis.url, ...options });
  clients.push(client);
  return client;
}
/** Closes this test's clients while the private Redis is surely up (useRedis()'s `after` stops it first). */
async function closeClients(): Promise<void> {
  await Promise.all(clients.splice(0).map((c) => c.close()));
}
afterEach(closeClients);

async function queued(queue = "default"): Promise<string[]> {
  return redis.redis.lrange(`queue:${queue}`, 0, -1);
}

/** `calls` and `rejected_calls` of one command from INFO commandstats. */
async function commandStats(conn: TsqRedis, command: string): Promise<{ calls: number; rejected: number }> {
  const info = await conn.info("commandstats");
  const line = new RegExp(`cmdstat_${command}:calls=(\\d+).*?rejected_calls=(\\d+)`).exec(info);
  return { calls: Number(line?.[1] ?? 0), rejected: Number(line?.[2] ?? 0) };
}

describe("push, immediate", () => {
  test("writes SADD queues + LPUSH queue:default with Sidekiq's defaults", async () => {
    const client = newClient();
    const before = Date.now() / 1000;
    const jid = await client.push({ class: "HardJob", args: ["bob", 5] });
    assert.match(jid ?? "", JID);
    assert.deepEqual(await redis.redis.smembers("queues"), ["default"]);
    assert.deepEqual((await redis.redis.keys("*")).sort(), ["queue:default", "queues"]);
    const [raw] = await queued();
    assert.ok(raw);
    assert.match(raw, FLOAT_FIELD("created_at"));
    assert.match(raw, FLOAT_FIELD("enqueued_at"));
    const job = JSON.parse(raw) as Record<string, unknown>;
    assert.deepEqual(
      { class: job.class, args: job.args, retry: job.retry, queue: job.queue, jid: job.jid },
      { class: "HardJob", args: ["bob", 5], retry: true, queue: "default", jid },
    );
    assert.equal(Object.keys(job)[0], "class");
    assert.ok(!("at" in job));
    const created = job.created_at as number;
    const enqueued = job.enqueued_at as number;
    assert.ok(created >= before - 1 && created <= Date.now() / 1000 + 1, `created_at ${created}`);
    assert.ok(enqueued >= created, "enqueued_at is set after created_at");
  });

  test("integral float seconds keep a fraction in the raw JSON", async () => {
    const client = newClient();
    await client.push({ class: "HardJob", args: [], created_at: 1712345678 });
    const [raw] = await queued();
    assert.match(raw ?? "", /"created_at":1712345678\.0[,}]/);
    assert.match(raw ?? "", FLOAT_FIELD("enqueued_at"));
  });

  test("sidekiqVersion 8 writes integer epoch milliseconds", async () => {
    const client = newClient({ sidekiqVersion: 8 });
    const before = Date.now();
    await client.push({ class: "HardJob", args: [] });
    const [raw] = await queued();
    assert.match(raw ?? "", MS_FIELD("created_at"));
    assert.match(raw ?? "", MS_FIELD("enqueued_at"));
    const job = JSON.parse(raw!) as { created_at: number; enqueued_at: number };
    assert.ok(Number.isInteger(job.created_at) && job.created_at >= before && job.created_at <= Date.now());
    assert.ok(job.enqueued_at >= job.created_at);
  });

  test('sidekiqVersion "auto" (the default): seconds until it has read a Sidekiq 8 fleet, then milliseconds', async () => {
    const client = newClient();
    assert.equal(client.fleetVersion.setting, "auto");
    // A Ruby Sidekiq 8 process's record, as its heartbeat writes it.
    const info = JSON.stringify({ hostname: "web", pid: 7, identity: "web:7:abc", version: "8.0.10" });
    await redis.redis.multi().sadd("processes", "web:7:abc").hset("web:7:abc", "info", info).exec();
    await client.push({ class: "HardJob", args: [] });
    assert.match((await queued())[0] ?? "", FLOAT_FIELD("created_at"), "the first push, before any read: seconds");
    // The write started a read in the background (at most one a minute).
    const deadline = Date.now() + 10_000;
    while (client.timestampFormat !== "milliseconds" && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 20));
    await client.push({ class: "HardJob", args: [] });
    assert.match((await queued())[0] ?? "", MS_FIELD("created_at"));
    assert.match((await queued())[0] ?? "", MS_FIELD("enqueued_at"));
    assert.equal(client.fleetVersion.formats.metrics, "sidekiq8");
  });

  test("a given queue, jid and created_at are kept; created_at is not overwritten", async () => {
    const client = newClient();
    const jid = await client.push({
      class: "HardJob",
      args: [1],
      queue: "critical",
      jid: "abc",
      created_at: 1700000000.5,
    });
    assert.equal(jid, "abc");
    assert.deepEqual(await redis.redis.smembers("queues"), ["critical"]);
    const job = JSON.parse((await queued("critical"))[0]!) as Record<string, unknown>;
    assert.equal(job.jid, "abc");
    assert.equal(job.created_at, 1700000000.5);
    assert.equal(job.queue, "critical");
  });

  test("unknown fields are preserved in order", async () => {
    const client = newClient();
    await client.push({ class: "HardJob", args: [], bid: "b-1", unique_for: 60, custom: { a: [1, "x"] }, tags: ["t"] });
    const raw = (await queued())[0]!;
    assert.match(raw, /"bid":"b-1","unique_for":60,"custom":\{"a":\[1,"x"\]\},"tags":\["t"\]/);
  });

  test("fields set to undefined count as not given", async () => {
    const client = newClient();
    const jid = await client.push({ class: "HardJob", args: [], queue: undefined, at: undefined, retry: undefined });
    assert.match(jid ?? "", JID);
    const job = JSON.parse((await queued())[0]!) as Record<string, unknown>;
    assert.equal(job.queue, "default");
    assert.equal(job.retry, true);
    assert.ok(!("at" in job));
  });

  test("jobs pushed one after another are LPUSHed, so the oldest is at the right (RPOP end)", async () => {
    const client = newClient();
    const first = await client.push({ class: "A", args: [] });
    const second = await client.push({ class: "B", args: [] });
    const list = (await queued()).map((raw) => (JSON.parse(raw) as { jid: string }).jid);
    assert.deepEqual(list, [second, first]);
  });
});

describe("push, scheduled", () => {
  test("ZADD schedule with a float-seconds score and no at field in the member", async () => {
    const client = newClient();
    const at = Date.now() / 1000 + 60;
    const jid = await client.push({ class: "LaterJob", args: [1], at });
    const entries = await redis.redis.zrange("schedule", 0, -1, "WITHSCORES");
    assert.equal(entries.length, 2);
    const [member, score] = entries as [string, string];
    assert.equal(Number(score), at);
    const job = JSON.parse(member) as Record<string, unknown>;
    assert.equal(job.jid, jid);
    assert.ok(!("at" in job), "at is the score, not a field");
    assert.ok(!("enqueued_at" in job), "a scheduled job has not been enqueued yet");
    assert.match(member, FLOAT_FIELD("created_at"));
    assert.equal(await redis.redis.exists("queues"), 0, "scheduling does not register a queue");
  });

  test("an integral at becomes an integral score, and 8.x drops a given enqueued_at", async () => {
    const client = newClient({ sidekiqVersion: 8 });
    await client.push({ class: "LaterJob", args: [], at: 2_000_000_000, enqueued_at: 1 });
    const [member, score] = (await redis.redis.zrange("schedule", 0, -1, "WITHSCORES")) as [string, string];
    assert.equal(score, "2000000000");
    assert.ok(!member.includes("enqueued_at"));
    assert.match(member, MS_FIELD("created_at"));
  });

  test("at must be a finite number", async () => {
    const client = newClient();
    await assert.rejects(client.push({ class: "X", args: [], at: Infinity }), /at for X must be epoch seconds/);
    await assert.rejects(
      client.push({ class: "X", args: [], at: "soon" as unknown as number }),
      /at for X must be epoch seconds/,
    );
    assert.equal(await redis.redis.dbsize(), 0);
  });
});

describe("push validation", () => {
  const cases: [string, Record<string, unknown>, string][] = [
    ["empty class", { class: "", args: [] }, 'push: "class" must not be empty'],
    ["class not a string", { class: 5, args: [] }, 'push: "class" must be a class name or a job class'],
    ["args not an array", { class: "X", args: "a" }, "push: args for X must be an array"],
    ["empty queue", { class: "X", args: [], queue: "" }, "push: queue for X must be a non-empty string"],
    ["tags not an array", { class: "X", args: [], tags: "a" }, "push: tags for X must be an array"],
    [
      "negative retry",
      { class: "X", args: [], retry: -1 },
      "push: retry for X must be true, false or a retry count >= 0",
    ],
    [
      "absolute retry_for",
      { class: "X", args: [], retry_for: 2e9 },
      "push: retry_for for X must be relative seconds (0 to 1e9)",
    ],
    ["empty jid", { class: "X", args: [], jid: "" }, "push: jid must be a non-empty string"],
  ];
  for (const [label, item, message] of cases) {
    test(label, async () => {
      const client = newClient();
      await assert.rejects(client.push(item as never), new ArgumentError(message));
      assert.equal(await redis.redis.dbsize(), 0);
    });
  }
  test("retry false and 0 are valid", async () => {
    const client = newClient();
    await client.push({ class: "X", args: [], retry: false });
    await client.push({ class: "X", args: [], retry: 0 });
    const retries = (await queued()).map((raw) => (JSON.parse(raw) as { retry: unknown }).retry);
    assert.deepEqual(retries, [0, false]);
  });
});

describe("class options", () => {
  class PlainJob {
    static options = { queue: "critical", retry: 5, retryQueue: "slow", backtrace: 10, someOption: "x" };
    perform(): void {}
  }
  class NamedJob extends Job {
    static override jobName = "Billing::Invoice";
    static override options = { queue: "billing", retryFor: 3600, dead: false };
    async perform(_id: number): Promise<void> {}
  }

  test("static options are merged, camelCase becoming snake_case on the wire", async () => {
    const client = newClient();
    await client.push({ class: PlainJob, args: [] });
    const job = JSON.parse((await queued("critical"))[0]!) as Record<string, unknown>;
    assert.equal(job.class, "PlainJob");
    assert.equal(job.queue, "critical");
    assert.equal(job.retry, 5);
    assert.equal(job.retry_queue, "slow");
    assert.equal(job.backtrace, 10);
    assert.equal(job.some_option, "x");
    assert.ok(!("retryQueue" in job));
  });

  test("item fields override class options", async () => {
    const client = newClient();
    await client.push({ class: PlainJob, args: [], queue: "low", retry: false });
    const job = JSON.parse((await queued("low"))[0]!) as Record<string, unknown>;
    assert.equal(job.queue, "low");
    assert.equal(job.retry, false);
    assert.equal(job.retry_queue, "slow");
  });

  test("jobName is the wire name; set() overrides static options", async () => {
    const client = newClient();
    await NamedJob.set({ client, queue: "urgent", retryQueue: "later" }).performAsync(7);
    const job = JSON.parse((await queued("urgent"))[0]!) as Record<string, unknown>;
    assert.equal(job.class, "Billing::Invoice");
    assert.equal(job.queue, "urgent");
    assert.equal(job.retry_for, 3600);
    assert.equal(job.retry_queue, "later");
    assert.equal(job.dead, false);
    assert.deepEqual(job.args, [7]);
  });
});

describe("client middleware", () => {
  test("sees (class, job, queue, redis) and may add fields", async () => {
    const seen: [string, string, boolean][] = [];
    const chain = new Chain<ClientMiddlewareArgs>().add(async (className, job, queue, conn, next) => {
      seen.push([className, queue, typeof conn.lpush === "function"]);
      job.tenant = "acme";
      await next();
    });
    const client = newClient({ middleware: chain });
    await client.push({ class: "HardJob", args: [], queue: "q1" });
    assert.deepEqual(seen, [["HardJob", "q1", true]]);
    const job = JSON.parse((await queued("q1"))[0]!) as Record<string, unknown>;
    assert.equal(job.tenant, "acme");
  });

  test("a middleware that does not call next stops the push: null and nothing written", async () => {
    const client = newClient();
    client.middleware.add(() => undefined);
    assert.equal(await client.push({ class: "HardJob", args: [] }), null);
    assert.equal(await client.push({ class: "HardJob", args: [], at: Date.now() / 1000 + 5 }), null);
    assert.equal(await redis.redis.dbsize(), 0);
  });
});

describe("pushBulk", () => {
  test("pushes in slices of batchSize, one pipeline each, results in order", async () => {
    const client = newClient();
    await redis.redis.config("RESETSTAT");
    const args = Array.from({ length: 2500 }, (_, i) => [i]);
    const jids = await client.pushBulk({ class: "BulkJob", args });
    assert.equal(jids.length, 2500);
    assert.ok(jids.every((j) => j !== null && JID.test(j)));
    assert.equal(new Set(jids).size, 2500);
    // Default batch size 1,000: three LPUSH and three SADD round trips (1000 + 1000 + 500).
    assert.deepEqual(await commandStats(redis.redis, "lpush"), { calls: 3, rejected: 0 });
    assert.deepEqual(await commandStats(redis.redis, "sadd"), { calls: 3, rejected: 0 });
    const list = (await queued()).reverse().map((raw) => JSON.parse(raw) as { jid: string; args: number[] });
    assert.deepEqual(
      list.map((j) => j.jid),
      jids,
    );
    assert.deepEqual(
      list.map((j) => j.args[0]),
      args.map((a) => a[0]),
    );
  });

  test("batchSize is honoured and must be a positive integer", async () => {
    const client = newClient();
    await redis.redis.config("RESETSTAT");
    await client.pushBulk({ class: "BulkJob", args: Array.from({ length: 10 }, (_, i) => [i]), batchSize: 3 });
    assert.equal((await commandStats(redis.redis, "lpush")).calls, 4);
    await assert.rejects(
      client.pushBulk({ class: "BulkJob", args: [[1]], batchSize: 0 }),
      /batchSize must be a positive integer, got 0/,
    );
  });

  test("null where middleware refused; refused jobs are not written", async () => {
    const client = newClient();
    client.middleware.add(async (_c, job, _q, _r, next) => {
      if ((job.args[0] as number) % 2 === 0) await next();
    });
    const jids = await client.pushBulk({ class: "BulkJob", args: [[0], [1], [2], [3], [4]] });
    assert.equal(jids.length, 5);
    assert.deepEqual(
      jids.map((j) => j === null),
      [false, true, false, true, false],
    );
    const args = (await queued()).reverse().map((raw) => (JSON.parse(raw) as { args: number[] }).args[0]);
    assert.deepEqual(args, [0, 2, 4]);
  });

  test("an at array must have one time per job", async () => {
    const client = newClient();
    const now = Date.now() / 1000;
    await assert.rejects(
      client.pushBulk({ class: "BulkJob", args: [[1], [2], [3]], at: [now + 10, now + 20] }),
      new ArgumentError("pushBulk: at has 2 times for 3 jobs; give one per job"),
    );
    assert.equal(await redis.redis.dbsize(), 0);
  });

  test("an explicit jid is rejected for more than one job, kept for one", async () => {
    const client = newClient();
    await assert.rejects(
      client.pushBulk({ class: "BulkJob", args: [[1], [2]], jid: "same" }),
      new ArgumentError("pushBulk: an explicit jid cannot be shared by several jobs; drop `jid`"),
    );
    assert.deepEqual(await client.pushBulk({ class: "BulkJob", args: [[1]], jid: "only" }), ["only"]);
  });

  test("args must be an array of arrays", async () => {
    const client = newClient();
    await assert.rejects(
      client.pushBulk({ class: "BulkJob", args: [1, 2] as never }),
      /args must be an array of argument arrays/,
    );
    assert.deepEqual(await client.pushBulk({ class: "BulkJob", args: [] }), []);
    assert.equal(await redis.redis.dbsize(), 0);
  });

  test("scheduled bulk: one time for all, in slices of 100", async () => {
    const client = newClient();
    await redis.redis.config("RESETSTAT");
    const at = Date.now() / 1000 + 300;
    const jids = await client.pushBulk({ class: "BulkJob", args: Array.from({ length: 250 }, (_, i) => [i]), at });
    assert.equal(jids.length, 250);
    assert.equal((await commandStats(redis.redis, "zadd")).calls, 3);
    assert.equal(await redis.redis.zcard("schedule"), 250);
    assert.equal(await redis.redis.zcount("schedule", at, at), 250);
    assert.equal(await redis.redis.exists("queues"), 0);
    const [member] = await redis.redis.zrange("schedule", 0, 0);
    assert.ok(!("at" in (JSON.parse(member!) as object)));
  });

  test("scheduled bulk: one time per job", async () => {
    const client = newClient();
    const base = Math.floor(Date.now() / 1000) + 100;
    const jids = await client.pushBulk({
      class: "BulkJob",
      args: [["a"], ["b"], ["c"]],
      at: [base + 3, base + 1, base + 2],
    });
    const entries = await redis.redis.zrange("schedule", 0, -1, "WITHSCORES");
    const byJid = new Map<string, number>();
    for (let i = 0; i < entries.length; i += 2)
      byJid.set((JSON.parse(entries[i]!) as { jid: string }).jid, Number(entries[i + 1]));
    assert.deepEqual(
      jids.map((j) => byJid.get(j!)),
      [base + 3, base + 1, base + 2],
    );
  });
});

describe("failover (READONLY): reconnect and retry once", () => {
  let replica: { port: number; child: ChildProcess; dir: string } | undefined;
  let admin: TsqRedis | undefined;

  async function startReplica(): Promise<{ port: number; admin: TsqRedis }> {
    replica = await startRedisServer();
    admin = connect(`redis://127.0.0.1:${replica.port}/0`, { name: "tsq-test-admin" });
    await admin.replicaof("127.0.0.1", redis.port);
    await admin.config("RESETSTAT");
    return { port: replica.port, admin };
  }

  afterEach(async () => {
    await closeClients(); // before the replica they talk to goes away
    admin?.disconnect();
    admin = undefined;
    const child = replica?.child;
    if (child && child.exitCode === null && child.signalCode === null) {
      await new Promise<void>((resolve) => {
        child.once("exit", () => resolve());
        child.kill("SIGTERM");
      });
    }
    if (replica) rmSync(replica.dir, { recursive: true, force: true });
    replica = undefined;
  });

  test("writes to a replica fail with READONLY after exactly one reconnect and retry", async () => {
    const { port, admin } = await startReplica();
    const client = newClient({ redis: `redis://127.0.0.1:${port}/0` });
    let connects = 0;
    client.redis.on("connect", () => connects++);
    await assert.rejects(client.push({ class: "HardJob", args: [] }), (error: unknown) => {
      assert.ok(error instanceof EnqueueError);
      assert.match(error.message, /was not enqueued: Redis refused the write: this Redis is a read-only replica/);
      assert.match((error.cause as Error).message, /^READONLY /);
      return true;
    });
    assert.equal(connects, 2, "the first connection plus one reconnect");
    // Each attempt is one push-jobs-2.lua call; the replica refuses its first write (the SADD).
    assert.deepEqual(await commandStats(admin, "sadd"), { calls: 0, rejected: 2 });
    assert.deepEqual(await commandStats(admin, "lpush"), { calls: 0, rejected: 0 });
    assert.equal(await redis.redis.dbsize(), 0);
  });

  test("scheduled pushes are retried the same way", async () => {
    const { port, admin } = await startReplica();
    const client = newClient({ redis: `redis://127.0.0.1:${port}/0` });
    await assert.rejects(
      client.push({ class: "HardJob", args: [], at: Date.now() / 1000 + 60 }),
      /^EnqueueError: job HardJob \(jid \w+\) was not enqueued: .*Redis said: READONLY/,
    );
    assert.deepEqual(await commandStats(admin, "zadd"), { calls: 0, rejected: 2 });
  });

  test("the retry succeeds when the replica was promoted meanwhile", async () => {
    const { port, admin } = await startReplica();
    const client = newClient({ redis: `redis://127.0.0.1:${port}/0` });
    let connects = 0;
    client.redis.on("connect", () => connects++);
    // The client drops its connection after the READONLY reply. Promote the replica right then,
    // synchronously, so it is a primary before ioredis reconnects (its first retry waits 50 ms).
    client.redis.once("close", () => {
      const result = spawnSync("redis-cli", ["-p", String(port), "REPLICAOF", "NO", "ONE"], { encoding: "utf8" });
      assert.equal(result.stdout.trim(), "OK");
    });
    const jid = await client.push({ class: "HardJob", args: ["after failover"] });
    assert.match(jid ?? "", JID);
    assert.equal(connects, 2);
    const [raw] = await admin.lrange("queue:default", 0, -1);
    assert.deepEqual((JSON.parse(raw!) as { args: string[] }).args, ["after failover"]);
    assert.deepEqual(await admin.smembers("queues"), ["default"]);
    assert.deepEqual(await commandStats(admin, "sadd"), { calls: 1, rejected: 1 });
    assert.deepEqual(await commandStats(admin, "lpush"), { calls: 1, rejected: 0 });
  });
});

describe("connections", () => {
  test("close() leaves a shared connection open", async () => {
    const shared = connect(redis.url, { name: "tsq-test-shared" });
    const client = new Client({ redis: shared });
    await client.push({ class: "X", args: [] });
    await client.close();
    assert.equal(await shared.ping(), "PONG");
    shared.disconnect();
  });
});
