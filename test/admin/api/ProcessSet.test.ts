/**
 * ProcessSet and WorkSet against process records as Sidekiq 6.4.1 (info.concurrency, `:workers`)
 * and tsq / Sidekiq 8.1.2+ (top-level concurrency, `:work`) write them, plus a real tsq worker.
 * A real Ruby process is listed and signalled in ruby-processes.test.ts.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { hostname } from "node:os";
import { ProcessSet, WorkSet } from "../../../src/admin/api/index.js";
import { LEADER, PROCESSES, PROCESS_CLEANUP, legacyWorkKey, signalsKey, workKey } from "../../../src/wire/keys.js";
import { useRedis } from "../../helpers/redis.js";
import { TEST_JOBS, eventually, startTsq } from "../../helpers/tsqProcess.js";
import { Client } from "../../../src/client/Client.js";
import { VERSION } from "../../../src/wire/version.js";

const redis = useRedis();

const RUBY_ID = "vm:11400:1cbe2bedbcd7";
const TSQ_ID = "app:22:0123456789ab";

/** The 6.4.1 capture from the reference (§1.10), and a tsq-style record with a top-level concurrency. */
async function seed(): Promise<void> {
  const r = redis.redis;
  await r.sadd(PROCESSES, RUBY_ID, TSQ_ID, "gone:1:ffffffffffff");
  await r.hset(RUBY_ID, {
    rss: "30292",
    info: `{"hostname":"vm","started_at":1795264710.2193005,"pid":11400,"tag":"mytag","concurrency":3,"queues":["default","low","bulk"],"labels":[],"identity":"${RUBY_ID}"}`,
    rtt_us: "98",
    quiet: "false",
    busy: "2",
    beat: "1795264715.2239783",
  });
  await r.hset(TSQ_ID, {
    info: `{"hostname":"app","started_at":1795264000.5,"pid":22,"tag":"api","concurrency":99,"queues":["critical"],"labels":["blue"],"identity":"${TSQ_ID}","version":"tsq 0.1.0","embedded":false}`,
    concurrency: "10",
    busy: "1",
    beat: "1795264716.5",
    rtt_us: "120",
    quiet: "true",
    rss: "51200",
  });
}

test("list merges info with the heartbeat fields; the top-level concurrency wins over info's", async () => {
  await seed();
  const set = new ProcessSet(redis.redis);
  const list = await set.list({ cleanup: false });
  assert.deepEqual(
    list.map((p) => p.identity),
    [TSQ_ID, RUBY_ID],
    "sorted by identity; an expired hash is not listed",
  );
  const [tsq, ruby] = list as [NonNullable<(typeof list)[0]>, NonNullable<(typeof list)[0]>];
  assert.deepEqual(
    { ...ruby, info: undefined },
    {
      identity: RUBY_ID,
      hostname: "vm",
      pid: 11400,
      tag: "mytag",
      labels: [],
      queues: ["default", "low", "bulk"],
      version: null,
      embedded: false,
      startedAt: 1795264710.2193005,
      concurrency: 3,
      busy: 2,
      beat: 1795264715.2239783,
      quiet: false,
      rssKb: 30292,
      rttUs: 98,
      leader: false,
      info: undefined,
    },
  );
  assert.equal(ruby.info.tag, "mytag");
  assert.deepEqual(
    [tsq.concurrency, tsq.quiet, tsq.labels, tsq.version, tsq.rssKb],
    [10, true, ["blue"], "tsq 0.1.0", 51200],
  );
  assert.equal(await set.totalConcurrency(), 13);
  assert.equal(await set.totalRssKb(), 81492);
  assert.equal(await set.size(), 3, "SCARD still counts the expired identity");
  assert.equal((await set.get(RUBY_ID))?.busy, 2);
  assert.equal(await set.get("gone:1:ffffffffffff"), null);
});

test("cleanup removes expired identities under the process_cleanup lock (once a minute)", async () => {
  await seed();
  const set = new ProcessSet(redis.redis);
  assert.equal(await set.cleanup(), 1);
  assert.deepEqual((await redis.redis.smembers(PROCESSES)).sort(), [TSQ_ID, RUBY_ID].sort());
  const ttl = await redis.redis.ttl(PROCESS_CLEANUP);
  assert.ok(ttl > 55 && ttl <= 60, `lock TTL ${ttl}`);
  await redis.redis.sadd(PROCESSES, "gone:2:eeeeeeeeeeee");
  assert.equal(await set.cleanup(), 0, "the lock is held");
  assert.equal((await set.list()).length, 2, "list still hides it");
  assert.equal(await redis.redis.sismember(PROCESSES, "gone:2:eeeeeeeeeeee"), 1);
  await redis.redis.del(PROCESS_CLEANUP);
  await set.list();
  assert.equal(
    await redis.redis.sismember(PROCESSES, "gone:2:eeeeeeeeeeee"),
    0,
    "list cleans up first, as ProcessSet.new",
  );
});

test("leader reads dear-leader and marks that process", async () => {
  await seed();
  const set = new ProcessSet(redis.redis);
  assert.equal(await set.leader(), null);
  await redis.redis.set(LEADER, RUBY_ID);
  assert.equal(await set.leader(), RUBY_ID);
  assert.deepEqual(
    (await set.list({ cleanup: false })).map((p) => [p.identity, p.leader]),
    [
      [TSQ_ID, false],
      [RUBY_ID, true],
    ],
  );
});

test("quiet, stop and dumpThreads push TSTP, TERM, TTIN onto <identity>-signals with a 60 s TTL", async () => {
  const set = new ProcessSet(redis.redis);
  await set.quiet(TSQ_ID);
  await set.stop(TSQ_ID);
  await set.dumpThreads(TSQ_ID);
  // LPUSH: the newest is on the left; the heartbeat RPOPs the oldest first.
  assert.deepEqual(await redis.redis.lrange(signalsKey(TSQ_ID), 0, -1), ["TTIN", "TERM", "TSTP"]);
  const ttl = await redis.redis.ttl(signalsKey(TSQ_ID));
  assert.ok(ttl > 55 && ttl <= 60, `TTL ${ttl}`);
});

test("WorkSet reads <id>:work, falls back to 6.4.1's <id>:workers, sorts by run_at, and sums busy", async () => {
  await seed();
  const job = (jid: string) => JSON.stringify({ retry: true, queue: "default", args: [15], class: "SlowJob", jid });
  await redis.redis.hset(
    workKey(TSQ_ID),
    "t1",
    JSON.stringify({ queue: "critical", payload: job("b"), run_at: 1795264712 }),
  );
  // 6.4.1 names the hash `:workers`; its reader also accepts a payload that is an object.
  await redis.redis.hset(
    legacyWorkKey(RUBY_ID),
    "8a4",
    JSON.stringify({ queue: "default", payload: job("a"), run_at: 1795264710 }),
  );
  await redis.redis.hset(
    legacyWorkKey(RUBY_ID),
    "89k",
    JSON.stringify({ queue: "low", payload: JSON.parse(job("c")) as object, run_at: 1795264713 }),
  );
  // A stale `:workers` copy next to `:work` is ignored, and a dead process's work is not listed.
  await redis.redis.hset(
    legacyWorkKey(TSQ_ID),
    "old",
    JSON.stringify({ queue: "x", payload: job("stale"), run_at: 1 }),
  );
  await redis.redis.hset(
    workKey("gone:1:ffffffffffff"),
    "t9",
    JSON.stringify({ queue: "x", payload: job("ghost"), run_at: 2 }),
  );

  const work = await new WorkSet(redis.redis).list();
  assert.deepEqual(
    work.map((w) => [w.process, w.tid, w.queue, w.runAt, w.job.jid, w.job.klass]),
    [
      [RUBY_ID, "8a4", "default", 1795264710, "a", "SlowJob"],
      [TSQ_ID, "t1", "critical", 1795264712, "b", "SlowJob"],
      [RUBY_ID, "89k", "low", 1795264713, "c", "SlowJob"],
    ],
  );
  assert.deepEqual(work[0]?.job.args, [15]);
  assert.equal((await new WorkSet(redis.redis).findWork("b"))?.tid, "t1");
  assert.equal(await new WorkSet(redis.redis).size(), 3, "2 + 1 busy");
});

test("a real tsq worker is listed with its real fields and its running job", async (t) => {
  const tsq = startTsq(["-r", TEST_JOBS, "-q", "default", "-q", "low", "-c", "4", "-g", "apitag"], {
    REDIS_URL: redis.url,
  });
  t.after(() => tsq.stop(5000));
  const started = await tsq.waitForLine((line) => line.msg === "tsq worker started");
  const identity = String(started.identity);
  const client = new Client({ redis: redis.redis });
  const jid = await client.push({ class: "SleepJob", args: [12] });
  await eventually(async () => (await redis.redis.hget(identity, "busy")) === "1", 15_000, "busy never reached 1", 200);

  const [proc] = await new ProcessSet(redis.redis).list();
  assert.ok(proc);
  assert.deepEqual(
    [
      proc.identity,
      proc.hostname,
      proc.pid,
      proc.tag,
      proc.queues,
      proc.concurrency,
      proc.busy,
      proc.quiet,
      proc.version,
      proc.embedded,
    ],
    [identity, hostname(), tsq.child.pid, "apitag", ["default", "low"], 4, 1, false, `tsq ${VERSION}`, false],
  );
  assert.ok(proc.rssKb > 10_000, `rss ${proc.rssKb} KB`);
  assert.ok(Math.abs(proc.beat - Date.now() / 1000) < 15);
  const work = await new WorkSet(redis.redis).list();
  assert.deepEqual(
    work.map((w) => [w.process, w.queue, w.job.jid, w.job.klass]),
    [[identity, "default", jid, "SleepJob"]],
  );
  assert.equal(Number.isInteger(work[0]?.runAt), true);
  assert.equal(await tsq.stop(30_000), 0);
});
