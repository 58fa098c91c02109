/**
 * Every way a deduplicated job can leave, with real processes: deleted, cleared or killed with tsqctl,
 * done, dead, lost in a SIGKILLed basic-fetch worker, recovered after a SIGKILL with reliable fetch.
 * After each, the next push of the same job is accepted as soon as the strategy and its ttl allow.
 */
import { test } from "node:test";
import assert from "node:assert/strict";

import { join } from "node:path";
import { pino } from "pino";

import { DEFAULTS } from "../../../../src/platform/config/defaults.js";
import { recoverIdentity } from "../../../../src/server/fetch/recovery.js";
import { releaseLocksWith } from "../../../../src/server/plugin.js";
import { builtinPlugins } from "../../../../src/plugins.js";
import { useRedis } from "../../../helpers/redis.js";
import { lockKit } from "../../../helpers/lockKit.js";
import { ROOT, eventually, startTsq } from "../../../helpers/tsqProcess.js";
import {
  DyingJob,
  RecoverableJob,
  RescheduleOnceJob,
  ScheduledDedupJob,
  ShortLockJob,
  UntilExecutedJob,
  UntilExecutingJob,
} from "../../../jobs/dedupJobs.js";

const handle = useRedis();
const JOBS = join(ROOT, "dist/test/jobs/dedupJobs.js");

const { tsqctl, withClient, push, started, ran, reliableCluster } = lockKit(handle);

test("tsqctl delete, clear and kill release the locks of the jobs they remove", async () => {
  await withClient(async (client) => {
    const first = await push(client, UntilExecutedJob, [1]);
    assert.equal(await push(client, UntilExecutedJob, [1]), first, "a duplicate resolves to the queued jid");
    assert.equal(await handle.redis.llen("queue:default"), 1);
    await tsqctl("delete", "default", first!);
    const second = await push(client, UntilExecutedJob, [1]);
    assert.notEqual(second, first, "accepted after the delete");
    assert.equal(await handle.redis.llen("queue:default"), 1);

    await tsqctl("clear", "default");
    const third = await push(client, UntilExecutedJob, [1]);
    assert.ok(third !== second && third !== null, "accepted after the clear");

    const at = Date.now() / 1000 + 3600;
    const scheduled = await push(client, ScheduledDedupJob, [1], at);
    assert.equal(await push(client, ScheduledDedupJob, [1], at), scheduled, "locked while scheduled");
    const ttl = await handle.redis.pttl((await handle.redis.keys("tsq:lock:dedup:default:*")).sort()[0]!);
    assert.ok(ttl > 3600_000, `a scheduled job's lock lasts its delay plus ttl (PTTL ${ttl} ms)`);
    await tsqctl("delete", "scheduled", scheduled!);
    const rescheduled = await push(client, ScheduledDedupJob, [1], at);
    assert.notEqual(rescheduled, scheduled, "accepted after deleting the scheduled job");
    await tsqctl("kill", rescheduled!, "--set", "scheduled");
    assert.notEqual(await push(client, ScheduledDedupJob, [1], at), rescheduled, "accepted after a kill");
    await tsqctl("clear", "scheduled");
    assert.equal(await handle.redis.exists(...(await handle.redis.keys("tsq:lock:dedup:*"))), 1, "only the queue's");
  });
});

test("done, dead and reschedule_once with a real worker", { timeout: 120_000 }, async (t) => {
  const worker = startTsq(["-r", JOBS, "-c", "3", "-q", "default", "-t", "1"], { REDIS_URL: handle.url });
  t.after(() => worker.stop(5000));
  await worker.waitForLine((l) => l.msg === "tsq worker started");
  await withClient(async (client) => {
    // until_executed: held while it runs, released when done.
    const slow = (await push(client, UntilExecutedJob, [1, 2]))!;
    await started(slow);
    assert.equal(await push(client, UntilExecutedJob, [1, 2]), slow, "deduplicated while running");
    await eventually(async () => (await ran(slow)) === 1, 30_000, "the job finishes");
    await eventually(async () => (await handle.redis.keys("tsq:lock:*")).length === 0, 10_000, "lock released");
    const next = await push(client, UntilExecutedJob, [1, 0]);
    assert.notEqual(next, slow, "accepted once done");

    // until_executing: released at start, so a push while it runs is enqueued.
    const executing = (await push(client, UntilExecutingJob, [2, 2]))!;
    await started(executing);
    assert.notEqual(await push(client, UntilExecutingJob, [2, 0]), executing, "accepted while the first runs");

    // A job that dies releases its lock.
    const dying = (await push(client, DyingJob, [3]))!;
    await eventually(async () => (await handle.redis.zcard("dead")) === 1, 30_000, "the job dies");
    const again = await push(client, DyingJob, [3]);
    assert.ok(again !== dying && again !== null, "accepted after the job died");

    // reschedule_once: duplicates dropped while it runs make it run once more, once.
    const original = (await push(client, RescheduleOnceJob, [4, 2]))!;
    await started(original);
    assert.equal(await push(client, RescheduleOnceJob, [4, 2]), original);
    assert.equal(await push(client, RescheduleOnceJob, [4, 2]), original);
    const later = async () =>
      (await handle.redis.lrange("started", 0, -1))
        .map((t) => JSON.parse(t) as { jid: string; class: string })
        .filter((s) => s.class === "RescheduleOnceJob")
        .map((s) => s.jid);
    const extra = await eventually(
      async () => (await later()).find((jid) => jid !== original),
      30_000,
      "the job is pushed once more after it finishes",
    );
    await eventually(async () => (await ran(extra)) === 1, 30_000, "the extra run finishes");
    await new Promise((resolve) => setTimeout(resolve, 1500));
    assert.deepEqual(await later(), [original, extra], "two duplicates dropped: exactly one extra run");
  });
  await worker.waitForLine((l) => l.msg === "rescheduled once: a duplicate was dropped while the job ran");
});

test(
  "a job lost in a SIGKILLed basic-fetch worker blocks pushes only until its ttl",
  { timeout: 120_000 },
  async (t) => {
    const worker = startTsq(["-r", JOBS, "-c", "2", "-q", "default", "-t", "1"], { REDIS_URL: handle.url });
    t.after(() => worker.stop(5000));
    await worker.waitForLine((l) => l.msg === "tsq worker started");
    await withClient(async (client) => {
      const lost = (await push(client, ShortLockJob, [1, 60]))!;
      const executing = (await push(client, UntilExecutingJob, [1, 60]))!;
      await started(lost);
      await started(executing);
      worker.signal("SIGKILL");
      await worker.exited;
      const pushedAt = Date.now();
      // until_executing released its lock when the job started: the next push is accepted at once.
      assert.notEqual(await push(client, UntilExecutingJob, [1, 60]), executing);
      // until_executed holds it for its ttl (3 s): refused now, accepted once it expires.
      assert.equal(await push(client, ShortLockJob, [1, 0]), lost, "the lock outlives the lost job up to its ttl");
      const accepted = await eventually(
        async () => {
          const jid = await push(client, ShortLockJob, [1, 0]);
          return jid !== lost ? jid : undefined;
        },
        20_000,
        "the lock expires after its ttl",
        250,
      );
      assert.ok(accepted);
      const waited = Date.now() - pushedAt;
      console.log(`lost job's lock expired ${waited} ms after the kill (ttl 3 s from its push)`);
      assert.ok(waited < 15_000, `accepted within the ttl plus slack, took ${waited} ms`);
    });
  },
);

test(
  "a job recovered after a SIGKILL (reliable fetch) keeps its lock until it has run",
  { timeout: 120_000 },
  async (t) => {
    reliableCluster(t, JOBS);
    await withClient(async (client) => {
      const jid = (await push(client, RecoverableJob, [1, 60]))!;
      const { pid } = await started(jid);
      process.kill(pid, "SIGKILL");
      // Until the recovered copy has run, a push of the same job is its duplicate.
      assert.equal(await push(client, RecoverableJob, [1, 0]), jid, "the recovered job still holds the lock");
      await eventually(async () => (await ran(jid)) === 1, 60_000, "the recovered job runs to the end");
      assert.equal((await started(jid)).runs, 1);
      assert.equal(await handle.redis.get(`runs:${jid}`), "2", "it ran a second time after recovery");
      await eventually(async () => (await handle.redis.keys("tsq:lock:*")).length === 0, 10_000, "lock released");
      const next = await push(client, RecoverableJob, [1, 0]);
      assert.ok(next !== jid && next !== null, "accepted once the recovered job finished");
      const all = (await handle.redis.lrange("started", 0, -1)).map((t) => (JSON.parse(t) as { jid: string }).jid);
      // The next push is accepted and may already have started; nothing else may have.
      const others = [...new Set(all)].filter((j) => j !== next);
      assert.deepEqual(others, [jid], "no duplicate ran while it was recovered");
    });
  },
);

test("a poison pill set aside by recovery releases its lock; recovered jobs keep theirs", async () => {
  const { redis } = handle;
  await withClient(async (client) => {
    const pill = (await push(client, UntilExecutedJob, [9]))!;
    const kept = (await push(client, UntilExecutedJob, [10]))!;
    // Both were fetched by a process that died: they sit in its private list.
    const identity = "deadhost:1:abcdef";
    const list = `queue:sq|${identity}|default`;
    for (const text of await redis.lrange("queue:default", 0, -1)) await redis.lpush(list, text);
    await redis.del("queue:default");
    await redis.set(`tsq:recovered:${pill}`, "5"); // it already killed its process 5 times
    // As the supervisor and a worker pass them: every plug-in's declared `locks.release` (recovery
    // itself knows no lock).
    const release = releaseLocksWith(builtinPlugins());
    assert.ok(release, "the built-in lock plug-ins declare a release");
    const locks = { release: (stored: Iterable<string>) => release(redis, stored) };
    const { poisoned } = await recoverIdentity(redis, identity, { ...DEFAULTS }, pino({ level: "silent" }), locks);
    assert.equal(poisoned.length, 1);
    assert.notEqual(await push(client, UntilExecutedJob, [9]), pill, "the poison pill's lock was released");
    assert.equal(await push(client, UntilExecutedJob, [10]), kept, "the recovered job still holds its lock");
  });
});

test("a job requeued by a hard shutdown keeps its lock", { timeout: 120_000 }, async (t) => {
  const worker = startTsq(["-r", JOBS, "-c", "2", "-q", "default", "-t", "1"], { REDIS_URL: handle.url });
  t.after(() => worker.stop(5000));
  await worker.waitForLine((l) => l.msg === "tsq worker started");
  await withClient(async (client) => {
    const jid = (await push(client, UntilExecutedJob, [5, 60]))!;
    await started(jid);
    worker.signal("SIGTERM"); // the job outlives the 1 s timeout: requeued with its jid, then abandoned
    await worker.exited;
    const queued = (await handle.redis.lrange("queue:default", 0, -1)).map(
      (j) => (JSON.parse(j) as { jid: string }).jid,
    );
    assert.deepEqual(queued, [jid], "requeued");
    assert.equal(await push(client, UntilExecutedJob, [5, 60]), jid, "the requeued job still holds the lock");
  });
});
