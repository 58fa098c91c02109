/**
 * Concurrency limits decided at push (src/features/locks/gitlab-concurrency-limits/clientMiddleware.ts), against real Redis servers: slots
 * are granted in exactly the order pushes reached Redis, whichever client pushed and whichever worker
 * finished; a paused class parks at push; a full parked list refuses the push (single and bulk) without
 * losing anything; re-pushes, scheduled jobs and built jobs keep the fetch-time path; a sharded client
 * admits on the queue's shard; reliable push holds limited jobs through an outage and admits them in order.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { pino } from "pino";
import { Client } from "../../../../src/client/Client.js";
import { Job } from "../../../../src/client/Job.js";
import { ConcurrencyLimitFullError } from "../../../../src/features/locks/gitlab-concurrency-limits/errors.js";
import { ConcurrencyLimiter } from "../../../../src/features/locks/gitlab-concurrency-limits/ConcurrencyLimiter.js";
import { readLimits } from "../../../../src/features/locks/gitlab-concurrency-limits/status.js";
import { parsePayload } from "../../../../src/wire/payload.js";
import { connect } from "../../../../src/platform/redis/connection.js";
import { ShardMap } from "../../../../src/platform/shards/ShardMap.js";
import { sleep } from "../../../../src/platform/util/sleep.js";
import { useRedis } from "../../../helpers/redis.js";
import { ROOT, eventually } from "../../../helpers/tsqProcess.js";
import { testLauncher } from "../../../helpers/context.js";

const handle = useRedis();
const other = useRedis();

class AdmitThreeJob extends Job {
  static concurrencyLimit = 3;
  perform(): void {}
}
class AdmitOneJob extends Job {
  static concurrencyLimit = 1;
  perform(): void {}
}
class AdmitPausedJob extends Job {
  static concurrencyLimit = -1;
  perform(): void {}
}
class AdmitDedupJob extends Job {
  static concurrencyLimit = 1;
  static idempotent = true;
  perform(): void {}
}
class PlainJob extends Job {
  perform(): void {}
}

interface Stored {
  jid: string;
  args: number[];
  concurrency_limit_resume?: boolean;
  concurrency_limit_buffered_at?: number;
}
const parse = (text: string) => JSON.parse(text) as Stored;
/** A queue's jobs, oldest (next to be fetched) first. */
const queued = async (queue = "default", redis = handle.redis) =>
  (await redis.lrange(`queue:${queue}`, 0, -1)).reverse().map(parse);
const parked = async (name: string, redis = handle.redis) =>
  (await redis.lrange(`tsq:limit-parked:${name}`, 0, -1)).map(parse);
const silent = pino({ level: "silent" });

test("4 clients pushing at once, 4 workers finishing at random: slots go out in the order pushes reached Redis", async (t) => {
  const producers = Array.from({ length: 4 }, () => new Client({ redis: handle.url }));
  t.after(() => Promise.all(producers.map((c) => c.close())));
  // Every command Redis runs, in order. A push reaches Redis with the first command carrying its payload
  // (an admit call, or an LPUSH script for a job that is not admitted); a grant is the HSET of a jid into
  // the slots, inside the script.
  const monitor = await handle.redis.monitor();
  t.after(() => monitor.disconnect());
  const reached: string[] = [];
  const granted: string[] = [];
  monitor.on("monitor", (_time: string, args: string[]) => {
    for (const arg of args.slice(1)) {
      if (!arg.startsWith('{"class":"AdmitThreeJob"')) continue;
      const { jid } = parse(arg);
      if (!reached.includes(jid)) reached.push(jid);
    }
    if (args[0]?.toLowerCase() === "hset" && args[1] === "tsq:lock:limit:AdmitThreeJob" && !granted.includes(args[2]!))
      granted.push(args[2]!);
  });
  const perProducer = 40;
  const total = perProducer * producers.length;
  let inFlight = 0;
  let maxInFlight = 0;
  let parkedAtFetch = 0;
  const ran = new Set<string>();
  // Worker side, as ServerMiddleware does it: pop, enter (the slot was handed over at push or by a
  // leave, so it runs), run 0-5 ms, leave.
  const work = async (): Promise<void> => {
    const redis = connect(handle.url, { name: "test-worker" });
    const limiter = new ConcurrencyLimiter(redis, { slotTtl: 60, refreshInterval: 60, maxParked: 10_000 }, silent);
    try {
      while (ran.size < total) {
        const text = await redis.rpop("queue:default");
        if (text === null) {
          await sleep(1);
          continue;
        }
        const job = parse(text);
        const resumed = job.concurrency_limit_resume === true;
        if ((await limiter.enter("AdmitThreeJob", job.jid, 3, text, resumed)) !== "run") {
          parkedAtFetch++;
          continue;
        }
        maxInFlight = Math.max(maxInFlight, ++inFlight);
        await sleep(Math.random() * 5);
        inFlight--;
        assert.ok(!ran.has(job.jid), "runs once");
        ran.add(job.jid);
        await limiter.leave("AdmitThreeJob", job.jid, 3);
      }
    } finally {
      await limiter.stop();
      redis.disconnect();
    }
  };
  const workers = Array.from({ length: 4 }, () => work());
  const pushes = producers.map(async (client, p) => {
    const jids: string[] = [];
    for (let i = 0; i < perProducer; i++) jids.push((await client.push({ class: AdmitThreeJob, args: [p, i] }))!);
    return jids;
  });
  const pushed = (await Promise.all(pushes)).flat();
  await Promise.all(workers);
  await eventually(async () => granted.length === total, 10_000, "the monitor saw every grant");
  assert.equal(new Set(pushed).size, total, "each push resolved to its own jid");
  assert.equal(reached.length, total);
  assert.deepEqual(granted, reached, "slots granted in exactly the order the pushes reached Redis");
  assert.notDeepEqual(
    reached,
    [...reached].sort((a, b) => pushed.indexOf(a) - pushed.indexOf(b)),
    "the producers' pushes interleaved",
  );
  assert.equal(parkedAtFetch, 0, "every fetched job held its slot already");
  assert.equal(maxInFlight, 3, "never more than the limit, and the limit was reached");
  assert.equal(ran.size, total);
  assert.equal(await handle.redis.llen("tsq:limit-parked:AdmitThreeJob"), 0);
});

test("a push of a limited class: the first `limit` get a slot and go to the queue, the rest park in order", async (t) => {
  const client = new Client({ redis: handle.url });
  t.after(() => client.close());
  const jids: string[] = [];
  for (let i = 0; i < 5; i++) jids.push((await client.push({ class: AdmitThreeJob, args: [i] }))!);
  assert.deepEqual(
    (await queued()).map((j) => j.args[0]),
    [0, 1, 2],
  );
  assert.deepEqual(
    (await parked("AdmitThreeJob")).map((j) => j.args[0]),
    [3, 4],
  );
  assert.deepEqual(
    Object.keys(await handle.redis.hgetall("tsq:lock:limit:AdmitThreeJob")).sort(),
    jids.slice(0, 3).sort(),
  );
  const all = [...(await queued()), ...(await parked("AdmitThreeJob"))];
  assert.ok(
    all.every((j) => j.concurrency_limit_resume === true && j.concurrency_limit_buffered_at! > 0),
    "GitLab's fields",
  );
  assert.deepEqual(await readLimits(handle.redis), [{ class: "AdmitThreeJob", limit: 3, running: 3, parked: 2 }]);
  // A class without a limit is written as before.
  await client.push({ class: PlainJob, args: [9] });
  assert.equal((await queued()).at(-1)?.args[0], 9);
  assert.equal(await handle.redis.llen("tsq:limit-parked:PlainJob"), 0);
});

test("a paused class (negative limit) parks at push; raising the limit hands slots out in order", async (t) => {
  const client = new Client({ redis: handle.url });
  t.after(() => client.close());
  for (let i = 0; i < 3; i++) assert.ok(await client.push({ class: AdmitPausedJob, args: [i] }));
  assert.equal(await handle.redis.llen("queue:default"), 0, "nothing queued");
  assert.equal(await handle.redis.exists("tsq:lock:limit:AdmitPausedJob"), 0, "no slot taken");
  assert.deepEqual(await readLimits(handle.redis), [{ class: "AdmitPausedJob", limit: -1, running: 0, parked: 3 }]);
  const limiter = new ConcurrencyLimiter(handle.redis, { slotTtl: 60, refreshInterval: 60, maxParked: 100 }, silent);
  await limiter.leave("AdmitPausedJob", "", 2); // a worker's sweep, after a deploy raised the limit to 2
  assert.deepEqual(
    (await queued()).map((j) => j.args[0]),
    [0, 1],
  );
});

test("a slot left by a dead process is not reclaimed by a push, but by the workers' sweep", async (t) => {
  const client = new Client({ redis: handle.url });
  t.after(() => client.close());
  // The one slot, held by a job whose process died: expired a second ago (the key itself lives on while
  // other holders are refreshed).
  await handle.redis.hset("tsq:lock:limit:AdmitOneJob", "dead", String(Date.now() - 1000));
  await client.push({ class: AdmitOneJob, args: [0] });
  await client.push({ class: AdmitOneJob, args: [1] });
  assert.deepEqual(
    (await parked("AdmitOneJob")).map((j) => j.args[0]),
    [0, 1],
    "a push counts the expired slot as taken",
  );
  const limiter = new ConcurrencyLimiter(handle.redis, { slotTtl: 60, refreshInterval: 60, maxParked: 100 }, silent);
  await limiter.leave("AdmitOneJob", "", 1); // a worker's periodic sweep
  assert.deepEqual(
    (await queued()).map((j) => j.args[0]),
    [0],
    "the oldest parked job got the slot",
  );
  assert.deepEqual(Object.keys(await handle.redis.hgetall("tsq:lock:limit:AdmitOneJob")), [(await queued())[0]!.jid]);
});

test("a full parked list refuses the push: ConcurrencyLimitFullError, nothing written, its lock released", async (t) => {
  const client = new Client({ redis: handle.url, concurrencyLimits: { maxParked: 2 } });
  t.after(() => client.close());
  for (let i = 0; i < 3; i++) assert.ok(await client.push({ class: AdmitDedupJob, args: [i] }));
  await assert.rejects(client.push({ class: AdmitDedupJob, args: [3] }), (error: unknown) => {
    assert.ok(error instanceof ConcurrencyLimitFullError);
    assert.match(
      error.message,
      /^AdmitDedupJob: 2 jobs are already parked waiting for one of its 1 slots; job \w+ was NOT enqueued\. .*raise the limit.*concurrency_limit_max_parked/,
    );
    assert.equal(error.jids.length, 1);
    return true;
  });
  assert.equal(await handle.redis.llen("queue:default"), 1);
  assert.equal(await handle.redis.llen("tsq:limit-parked:AdmitDedupJob"), 2);
  assert.equal((await handle.redis.keys("tsq:lock:dedup:*")).length, 3, "the refused job's dedup lock is gone");
  // Room again (the running job finished): the same job is accepted, not taken for a duplicate.
  const limiter = new ConcurrencyLimiter(handle.redis, { slotTtl: 60, refreshInterval: 60, maxParked: 2 }, silent);
  await limiter.leave("AdmitDedupJob", (await queued())[0]!.jid, 1);
  const again = await client.push({ class: AdmitDedupJob, args: [3] });
  assert.ok(again !== null);
  assert.deepEqual(
    (await parked("AdmitDedupJob")).map((j) => j.args[0]),
    [2, 3],
  );
});

class AdmitWorkerBoundJob extends Job {
  static concurrencyLimit = -1;
  perform(): void {}
}

test("a worker's own client parks under the worker's concurrency_limit_max_parked, not the default", async () => {
  // Jobs pushed from jobs go through the worker's client: the plug-in reads the bound from the worker's
  // options (ClientSetup.workerOptions), which the core hands over without naming the setting.
  const { client } = testLauncher(handle.url, [AdmitWorkerBoundJob], { concurrencyLimitMaxParked: 2 }).ctx;
  for (let i = 0; i < 2; i++) assert.ok(await client.push({ class: AdmitWorkerBoundJob, args: [i] }));
  await assert.rejects(
    client.push({ class: AdmitWorkerBoundJob, args: [2] }),
    (error: unknown) =>
      error instanceof ConcurrencyLimitFullError && /^AdmitWorkerBoundJob: 2 jobs/.test(error.message),
  );
  assert.equal(await handle.redis.llen("tsq:limit-parked:AdmitWorkerBoundJob"), 2);
});

test("pushBulk and pushMany admit in order; refused jobs are null, the others are written", async (t) => {
  const client = new Client({ redis: handle.url, concurrencyLimits: { maxParked: 3 } });
  t.after(() => client.close());
  const bulk = await client.pushBulk({ class: AdmitOneJob, args: [[0], [1], [2], [3], [4], [5]] });
  assert.equal(bulk.filter((jid) => jid === null).length, 2, "two past the bound");
  assert.deepEqual(
    bulk.map((jid) => jid === null),
    [false, false, false, false, true, true],
  );
  assert.deepEqual(
    (await queued()).map((j) => j.args[0]),
    [0],
  );
  assert.deepEqual(
    (await parked("AdmitOneJob")).map((j) => j.args[0]),
    [1, 2, 3],
  );

  const at = Date.now() / 1000 + 3600;
  const many = await client.pushMany([
    { class: PlainJob, args: [10] },
    { class: AdmitThreeJob, args: [11] },
    { class: AdmitOneJob, args: [12] }, // refused: the list is full
    { class: AdmitThreeJob, args: [13], at }, // scheduled: the fetch-time path when due
    { class: AdmitThreeJob, args: [14] },
  ]);
  assert.deepEqual(
    many.map((jid) => jid === null),
    [false, false, true, false, false],
  );
  // The plain job's LPUSH and the admissions are sent together: only the admissions' order is fixed.
  const inQueue = (await queued()).map((j) => j.args[0]);
  assert.deepEqual(
    inQueue.filter((id) => id !== 10),
    [0, 11, 14],
  );
  assert.ok(inQueue.includes(10));
  const [scheduled] = await handle.redis.zrange("schedule", 0, -1);
  assert.equal(parse(scheduled!).concurrency_limit_resume, undefined, "a scheduled job is not admitted");
});

test("left to the fetch-time path: re-pushes of stored jobs, pushes by an unknown name, built jobs", async (t) => {
  // As a worker's client looks in its registry: pushes by name find the class.
  const client = new Client({
    redis: handle.url,
    jobClasses: (name) => (name === "AdmitOneJob" ? AdmitOneJob : undefined),
  });
  t.after(() => client.close());
  await client.push({ class: AdmitOneJob, args: [0] }); // takes the one slot
  const stored = JSON.stringify({ class: "AdmitOneJob", args: [1], jid: "aaaaaaaaaaaaaaaaaaaaaaaa", queue: "default" });
  await client.push(parsePayload(stored)); // as the poller re-pushes a due job
  await client.push({ class: "NotLoadedJob", args: [2] });
  const built = await client.build({ class: AdmitOneJob, args: [3] });
  assert.equal(parse(built!.json).concurrency_limit_resume, undefined, "a built job is not marked");
  await client.push({ class: "AdmitOneJob", args: [4] }); // by name, loaded: admitted
  assert.deepEqual(
    (await queued()).map((j) => j.args[0]),
    [0, 1, 2],
  );
  assert.deepEqual(
    (await parked("AdmitOneJob")).map((j) => j.args[0]),
    [4],
  );
});

test("a sharded client admits on the Redis of the job's queue", async (t) => {
  const client = new Client({
    redis: handle.url,
    shards: { map: new ShardMap(handle.url, [{ name: "two", url: other.url, queues: ["b"] }]) },
  });
  t.after(() => client.close());
  const jids = await client.pushBulk({ class: AdmitOneJob, queue: "b", args: [[0], [1]] });
  assert.equal(await handle.redis.exists("tsq:limit-parked:AdmitOneJob", "tsq:lock:limit:AdmitOneJob"), 0);
  assert.deepEqual(
    (await queued("b", other.redis)).map((j) => j.jid),
    [jids[0]],
  );
  assert.deepEqual(
    (await parked("AdmitOneJob", other.redis)).map((j) => j.jid),
    [jids[1]],
  );
  // The worker serving shard two finds the slot its own.
  const limiter = new ConcurrencyLimiter(other.redis, { slotTtl: 60, refreshInterval: 60, maxParked: 100 }, silent);
  const [first] = await other.redis.lrange("queue:b", 0, -1);
  assert.equal(await limiter.enter("AdmitOneJob", jids[0]!, 1, first!, true), "run");
});

test("reliable push: limited jobs pushed while Redis is down are admitted when it is back, in order", async (t) => {
  const client = new Client({ redis: handle.url, reliablePush: { maxBuffered: 1000 } });
  t.after(() => client.close());
  for (let i = 0; i < 5; i++) await client.push({ class: AdmitOneJob, args: [i] });
  const outage = handle.restart(1500);
  await eventually(async () => handle.redis.status !== "ready", 5_000, "Redis went down");
  for (let i = 5; i < 10; i++) assert.ok(await client.push({ class: AdmitOneJob, args: [i] }));
  assert.ok(client.bufferedJobs > 0, "held in memory");
  await outage;
  await eventually(async () => client.bufferedJobs === 0, 20_000, "the buffer flushed");
  assert.deepEqual(
    [...(await queued()), ...(await parked("AdmitOneJob"))].map((j) => j.args[0]),
    [0, 1, 2, 3, 4, 5, 6, 7, 8, 9],
    "each admitted once, in push order",
  );
});

test("tsqctl push of a limited class from its job module is admitted too", () => {
  const push = (id: number) =>
    spawnSync(
      process.execPath,
      [join(ROOT, "bin/tsqctl.js"), "push", "OneAtOnceJob", `[${id}]`, "-r", join(ROOT, "dist/test/jobs/limitJobs.js")],
      { encoding: "utf8", env: { ...process.env, REDIS_URL: handle.url }, timeout: 30_000 },
    );
  for (const id of [0, 1]) {
    const run = push(id);
    assert.equal(run.status, 0, run.stderr);
    assert.match(run.stdout, /^[0-9a-f]{24}\n$/, "prints the jid");
  }
  return Promise.all([queued(), parked("OneAtOnceJob")]).then(([inQueue, waiting]) => {
    assert.deepEqual(
      inQueue.map((j) => j.args[0]),
      [0],
    );
    assert.deepEqual(
      waiting.map((j) => j.args[0]),
      [1],
    );
  });
});
