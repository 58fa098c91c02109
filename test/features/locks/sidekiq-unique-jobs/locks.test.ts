/**
 * Each sidekiq-unique-jobs lock type with a real Redis and a real `tsq` worker process: until_executed
 * held until perform ends, until_executing until it starts (and again for a retry), until_expired until
 * its TTL, while_executing one run at a time (reschedule, reject, log); removal with tsqctl and recovery
 * after a SIGKILL release or keep locks as docs/sidekiq-unique-jobs.md says.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { eventually } from "../../../helpers/tsqProcess.js";
import { SUJ_JOBS } from "./kit.js";
import { useRedis } from "../../../helpers/redis.js";
import { lockKit } from "../../../helpers/lockKit.js";
import { sujKit } from "./kit.js";
import {
  SujDyingJob,
  SujExecutedJob,
  SujExecutingJob,
  SujExpiredJob,
  SujFailingJob,
  SujRecoverJob,
  SujRescheduleJob,
  SujWhileJob,
  SujWhileLogJob,
  SujWhileRecoverJob,
  SujWhileRejectJob,
} from "../../../jobs/sujJobs.js";

const handle = useRedis();
const { tsqctl, withClient, push, started, ran, reliableCluster } = lockKit(handle);
const { worker, lockOf, holders, startedOf } = sujKit(handle);

test("until_executed: held while queued and running, released after perform", async (t) => {
  await withClient(async (client) => {
    const jid = (await push(client, SujExecutedJob, [2, 2]))!;
    const digest = await lockOf(jid);
    worker(t);
    await started(jid);
    assert.equal(await push(client, SujExecutedJob, [2, 2]), null, "refused while it runs");
    await eventually(async () => (await ran(jid)) === 1, 30_000, "it finishes");
    await eventually(async () => (await holders(digest)).length === 0, 10_000, "released after perform");
    assert.ok(await push(client, SujExecutedJob, [2, 2]), "accepted after it ran");
  });
});

test("until_executing: released as the job starts; until_expired: held after the run until its TTL", async (t) => {
  await withClient(async (client) => {
    const jid = (await push(client, SujExecutingJob, [3, 3]))!;
    assert.equal(await push(client, SujExecutingJob, [3, 3]), null, "refused while queued");
    const expiring = (await push(client, SujExpiredJob, [3]))!;
    const expiringDigest = await lockOf(expiring);
    assert.equal(await push(client, SujExpiredJob, [3]), null, "until_expired: refused while queued");
    worker(t);
    await started(jid);
    const during = await push(client, SujExecutingJob, [3, 3]);
    assert.ok(during, "accepted while the first one runs");
    await eventually(async () => (await ran(expiring)) === 1, 30_000, "the until_expired job runs");
    const pttl = await handle.redis.pttl(`${expiringDigest}:LOCKED`);
    if (pttl > 200)
      assert.equal(await push(client, SujExpiredJob, [3]), null, `still held after the run (PTTL ${pttl} ms)`);
    await eventually(async () => (await holders(expiringDigest)).length === 0, 15_000, "gone at its TTL");
    assert.ok(await push(client, SujExpiredJob, [3]), "accepted after the TTL");
  });
});

test("while_executing: one run at a time; a duplicate found running is rescheduled, rejected or dropped", async (t) => {
  await withClient(async (client) => {
    const a = (await push(client, SujWhileJob, [4, 2]))!;
    const b = (await push(client, SujWhileJob, [4, 2]))!;
    assert.ok(a && b, "both pushes are accepted: the lock is taken only to run");
    const r1 = (await push(client, SujWhileRejectJob, [4, 2]))!;
    const r2 = (await push(client, SujWhileRejectJob, [4, 2]))!;
    const l1 = (await push(client, SujWhileLogJob, [4, 2]))!;
    const l2 = (await push(client, SujWhileLogJob, [4, 2]))!;
    assert.ok(r1 && r2 && l1 && l2);
    worker(t);
    await eventually(
      async () => (await startedOf("SujWhileJob")).length === 2,
      40_000,
      "the rescheduled copy runs too",
    );
    const jids = (await startedOf("SujWhileJob")).map((s) => s.jid);
    assert.equal(jids.filter((j) => j === a || j === b).length, 1, "one of the two ran as pushed…");
    assert.ok(
      jids.some((j) => j !== a && j !== b),
      "…the other as a rescheduled copy",
    );
    await eventually(async () => (await handle.redis.zcard("dead")) === 1, 30_000, "reject: one in the dead set");
    const deadJid = (JSON.parse((await handle.redis.zrange("dead", 0, 0))[0]!) as { jid: string }).jid;
    assert.ok(deadJid === r1 || deadJid === r2);
    await eventually(
      async () => (await startedOf("SujWhileLogJob")).length === 1 && (await handle.redis.llen("queue:default")) === 0,
      30_000,
      "log: one ran",
    );
    const classes = ["SujWhileJob", "SujWhileRejectJob", "SujWhileLogJob"];
    await eventually(
      async () => {
        const running = await Promise.all(classes.map((k) => handle.redis.get(`suj:running:${k}`)));
        return running.every((n) => n === "0");
      },
      30_000,
      "all runs end",
    );
    assert.equal((await startedOf("SujWhileLogJob")).length, 1, "log: the duplicate was dropped");
    assert.equal((await startedOf("SujWhileRejectJob")).length, 1);
    for (const klass of classes)
      assert.equal(await handle.redis.get(`suj:max:${klass}`), "1", `${klass}: never two runs of one lock at once`);
    const runLocks = await handle.redis.keys("uniquejobs:*:RUN:LOCKED");
    assert.deepEqual(runLocks, [], "no run lock is left");
  });
});

test("reschedule on the push side: the deferred duplicate takes the lock when it runs, after the holder", async (t) => {
  await withClient(async (client) => {
    const holder = (await push(client, SujRescheduleJob, [5, 2]))!;
    const later = (await push(client, SujRescheduleJob, [5, 0]))!;
    assert.ok(holder && later);
    worker(t);
    await eventually(async () => (await ran(holder)) === 1, 30_000, "the holder runs");
    await eventually(
      async () => (await startedOf("SujRescheduleJob")).length >= 2,
      40_000,
      "the deferred one runs after",
    );
    const order = (await startedOf("SujRescheduleJob")).map((s) => s.jid);
    assert.equal(order[0], holder);
  });
});

test("tsqctl delete, kill and clear release a job's lock at once (until_expired keeps its TTL)", async () => {
  await withClient(async (client) => {
    const queued = (await push(client, SujExecutedJob, [6]))!;
    const digest = await lockOf(queued);
    await tsqctl("delete", "default", queued);
    assert.deepEqual(await holders(digest), [], "released by the delete");
    assert.ok(await push(client, SujExecutedJob, [6]), "accepted after the delete");
    await tsqctl("clear", "default");
    assert.deepEqual(await holders(digest), [], "released by the clear");

    const scheduled = (await push(client, SujExecutingJob, [6], Date.now() / 1000 + 3600))!;
    const scheduledDigest = await lockOf(scheduled);
    const ttl = await handle.redis.pttl(`${scheduledDigest}:LOCKED`);
    assert.ok(ttl > 4_190_000 && ttl <= 4_200_000, `held for the delay plus lock_ttl (PTTL ${ttl} ms)`);
    await tsqctl("kill", scheduled, "--set", "scheduled");
    assert.deepEqual(await holders(scheduledDigest), [], "released by the kill");

    const expiring = (await push(client, SujExpiredJob, [6]))!;
    const expiringDigest = await lockOf(expiring);
    await tsqctl("delete", "default", expiring);
    assert.deepEqual(await holders(expiringDigest), [expiring], "until_expired is a TTL: kept");
  });
});

test("until_executing: a failed job keeps its lock while it waits to retry; killed or dead, it releases it", async (t) => {
  await withClient(async (client) => {
    const failing = (await push(client, SujFailingJob, [8]))!;
    const dying = (await push(client, SujDyingJob, [8]))!;
    const failingDigest = await lockOf(failing);
    const dyingDigest = await lockOf(dying);
    worker(t);
    await eventually(async () => (await handle.redis.zcard("retry")) === 1, 30_000, "the failed job waits to retry");
    assert.deepEqual(await holders(failingDigest), [failing], "taken again for the retry, as the gem re-locks");
    assert.equal(await push(client, SujFailingJob, [8]), null, "a duplicate is refused meanwhile");
    await eventually(async () => (await handle.redis.zcard("dead")) === 1, 30_000, "the other one dies");
    // The death hook releases the lock once the job is in the dead set: a round trip later.
    await eventually(async () => (await holders(dyingDigest)).length === 0, 10_000, "dead: released");
    await tsqctl("kill", failing, "--set", "retry");
    assert.deepEqual(await holders(failingDigest), [], "killed from the retry set: released");
    assert.ok(await push(client, SujFailingJob, [8]), "accepted after the kill");
  });
});

test(
  "jobs recovered after a SIGKILL (reliable fetch) keep their locks, run again and release them",
  { timeout: 120_000 },
  async (t) => {
    reliableCluster(t, SUJ_JOBS);
    await withClient(async (client) => {
      const executed = (await push(client, SujRecoverJob, [13, 60]))!;
      const running = (await push(client, SujWhileRecoverJob, [13, 60]))!;
      const digest = await lockOf(executed);
      const { pid } = await started(executed);
      await started(running);
      assert.equal((await handle.redis.keys("uniquejobs:*:RUN:LOCKED")).length, 1, "the run lock is held");
      process.kill(pid, "SIGKILL");
      assert.equal(await push(client, SujRecoverJob, [13, 60]), null, "the killed job still holds its lock");
      await eventually(
        async () => (await ran(executed)) === 1 && (await ran(running)) === 1,
        60_000,
        "both re-run to the end",
      );
      assert.equal(await handle.redis.get(`runs:${executed}`), "2", "re-ran after recovery with its own jid");
      assert.equal(await handle.redis.get(`runs:${running}`), "2", "the same jid took its run lock again");
      await eventually(
        async () => (await handle.redis.keys("uniquejobs:*:LOCKED")).length === 0,
        10_000,
        "every lock released",
      );
      assert.deepEqual(await holders(digest), []);
    });
  },
);
