/**
 * Each sidekiq-unique-jobs lock type and conflict strategy with a real Redis and, where the run side
 * matters, a real `tsq` worker process: until_executed held until perform ends, until_executing until
 * it starts, until_expired until its TTL, while_executing one run at a time (reschedule, reject, log);
 * on the push side log, raise, reject, replace and reschedule.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { writeFileSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SujConflictError } from "../../src/uniqueJobs/index.js";
import { ConfigError } from "../../src/errors.js";
import { Job } from "../../src/index.js";
import { useRedis } from "../helpers/redis.js";
import { lockKit } from "../helpers/lockKit.js";
import { ROOT, eventually, startTsq } from "../helpers/tsqProcess.js";
import {
  SujDyingJob,
  SujExecutedJob,
  SujFailingJob,
  SujExecutingJob,
  SujExpiredJob,
  SujRaiseJob,
  SujRecoverJob,
  SujRejectJob,
  SujReplaceJob,
  SujRescheduleJob,
  SujWhileJob,
  SujWhileLogJob,
  SujWhileRecoverJob,
  SujWhileRejectJob,
} from "../jobs/sujJobs.js";

const handle = useRedis();
const JOBS = join(ROOT, "dist/test/jobs/sujJobs.js");
const { tsqctl, withClient, push, started, ran, reliableCluster } = lockKit(handle);

/** A worker polling `schedule` about every second, so rescheduled jobs come back quickly. */
function worker(t: { after: (fn: () => Promise<unknown>) => void }): void {
  const dir = mkdtempSync(join(tmpdir(), "tsq-suj-"));
  const config = join(dir, "tsq.yml");
  writeFileSync(config, "poll_interval_average: 1\n");
  const process = startTsq(["-r", JOBS, "-C", config, "-c", "4", "-q", "default", "-t", "1"], {
    REDIS_URL: handle.url,
  });
  t.after(() => process.stop(5000));
}

const lockOf = async (jid: string) => {
  const queued = [
    ...(await handle.redis.lrange("queue:default", 0, -1)),
    ...(await handle.redis.zrange("schedule", 0, -1)),
  ];
  const job = queued.map((j) => JSON.parse(j) as Record<string, unknown>).find((j) => j.jid === jid);
  assert.ok(job, `job ${jid} is stored`);
  return String(job.lock_digest);
};
const holders = (digest: string) => handle.redis.hkeys(`${digest}:LOCKED`);
const startedOf = async (klass: string) =>
  (await handle.redis.lrange("started", 0, -1))
    .map((s) => JSON.parse(s) as { jid: string; class: string })
    .filter((s) => s.class === klass);

test("push-side strategies: log drops, raise throws, reject kills, replace swaps, reschedule defers", async () => {
  await withClient(async (client) => {
    const first = (await push(client, SujExecutedJob, [1]))!;
    assert.ok(first);
    assert.equal(await push(client, SujExecutedJob, [1]), null, "log (default): dropped, null");

    const raiser = (await push(client, SujRaiseJob, [1]))!;
    await assert.rejects(push(client, SujRaiseJob, [1]), SujConflictError, "raise: the push rejects");
    assert.deepEqual(await holders(await lockOf(raiser)), [raiser]);

    await push(client, SujRejectJob, [1]);
    const rejected = await push(client, SujRejectJob, [1]);
    assert.equal(rejected, null);
    const dead = (await handle.redis.zrange("dead", 0, -1)).map((j) => JSON.parse(j) as { class: string });
    assert.deepEqual(
      dead.map((j) => j.class),
      ["SujRejectJob"],
      "reject: the duplicate is in the dead set",
    );

    const old = (await push(client, SujReplaceJob, [1]))!;
    const digest = await lockOf(old);
    const replacement = (await push(client, SujReplaceJob, [1]))!;
    assert.ok(replacement && replacement !== old, "replace: the new push is accepted");
    const queued = (await handle.redis.lrange("queue:default", 0, -1)).map(
      (j) => (JSON.parse(j) as { jid: string }).jid,
    );
    assert.ok(!queued.includes(old), "the old job is gone from the queue");
    assert.ok(queued.includes(replacement));
    assert.deepEqual(await holders(digest), [replacement], "and the new one holds the lock");

    const holder = (await push(client, SujRescheduleJob, [1]))!;
    const later = (await push(client, SujRescheduleJob, [1]))!;
    assert.ok(later, "reschedule: the push is accepted…");
    const score = Number(
      await handle.redis.zscore(
        "schedule",
        (await handle.redis.zrange("schedule", 0, -1)).find((j) => j.includes(later))!,
      ),
    );
    assert.ok(Math.abs(score - (Date.now() / 1000 + 5)) < 3, `…for about 5 s later (score ${score})`);
    assert.deepEqual(await holders(await lockOf(holder)), [holder], "without taking the lock");
  });
});

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
    tsqctl("delete", "default", queued);
    assert.deepEqual(await holders(digest), [], "released by the delete");
    assert.ok(await push(client, SujExecutedJob, [6]), "accepted after the delete");
    tsqctl("clear", "default");
    assert.deepEqual(await holders(digest), [], "released by the clear");

    const scheduled = (await push(client, SujExecutingJob, [6], Date.now() / 1000 + 3600))!;
    const scheduledDigest = await lockOf(scheduled);
    const ttl = await handle.redis.pttl(`${scheduledDigest}:LOCKED`);
    assert.ok(ttl > 4_190_000 && ttl <= 4_200_000, `held for the delay plus lock_ttl (PTTL ${ttl} ms)`);
    tsqctl("kill", scheduled, "--set", "scheduled");
    assert.deepEqual(await holders(scheduledDigest), [], "released by the kill");

    const expiring = (await push(client, SujExpiredJob, [6]))!;
    const expiringDigest = await lockOf(expiring);
    tsqctl("delete", "default", expiring);
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
    assert.deepEqual(await holders(dyingDigest), [], "dead: released");
    tsqctl("kill", failing, "--set", "retry");
    assert.deepEqual(await holders(failingDigest), [], "killed from the retry set: released");
    assert.ok(await push(client, SujFailingJob, [8]), "accepted after the kill");
  });
});

test("a bad declaration is refused at the first push with a ConfigError naming the class and the fix", async () => {
  class UnsupportedLockJob extends Job {
    static override options = { lock: "until_and_while_executing" };
    perform(): void {}
  }
  class NegativeTtlJob extends Job {
    static override options = { lock: "until_executed", lockTtl: -5 };
    perform(): void {}
  }
  class UnknownStrategyJob extends Job {
    static override options = { lock: "while_executing", onConflict: { server: "explode" } };
    perform(): void {}
  }
  await withClient(async (client) => {
    for (const [klass, what] of [
      [UnsupportedLockJob, /UnsupportedLockJob: lock must be until_executing/],
      [NegativeTtlJob, /NegativeTtlJob: lockTtl must be seconds/],
      [UnknownStrategyJob, /UnknownStrategyJob: onConflict must be one of log, raise/],
    ] as const) {
      await assert.rejects(
        push(client, klass, [1]),
        (error: Error) => error instanceof ConfigError && what.test(error.message),
      );
    }
    assert.equal(await handle.redis.dbsize(), 0, "nothing was written");
  });
});

test(
  "jobs recovered after a SIGKILL (reliable fetch) keep their locks, run again and release them",
  { timeout: 120_000 },
  async (t) => {
    reliableCluster(t, JOBS);
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
