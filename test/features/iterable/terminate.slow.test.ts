/**
 * Iterable jobs in real worker processes: a million items through three TERMs (the process restarted
 * each time), `tsqctl cancel`, and a SIGKILL with reliable fetch (the job recovered, resuming at the
 * last saved cursor).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { Client } from "../../../src/client/Client.js";
import { useRedis } from "../../helpers/redis.js";
import { ROOT, eventually, startTsq, type TsqProcess } from "../../helpers/tsqProcess.js";
import { childPids, sleep } from "../../reliable/chaosRun.js";

const handle = useRedis();
const JOBS = join(ROOT, "dist/test/jobs/iterableJobs.js");
const TOTAL = 1_000_000;

function worker(): TsqProcess {
  return startTsq(["-r", JOBS, "-c", "2", "-q", "default", "-t", "10", "--fetch", "reliable"], {
    REDIS_URL: handle.url,
    TSQ_LOG_LEVEL: "warn",
  });
}

function tsqctl(...args: string[]): string {
  const run = spawnSync(process.execPath, [join(ROOT, "bin/tsqctl.js"), ...args, "--redis-url", handle.url], {
    encoding: "utf8",
  });
  assert.equal(run.status, 0, run.stderr);
  return run.stdout;
}

const seen = (key: string) => handle.redis.bitcount(`${key}:seen`);
const hooks = (key: string) => handle.redis.lrange(`${key}:hooks`, 0, -1);
const repeats = async (key: string) => Number((await handle.redis.get(`${key}:repeats`)) ?? 0);

test(
  "a million items through three TERMs: every item once, the cursor saved at each stop",
  { timeout: 180_000 },
  async (t) => {
    const client = new Client({ redis: handle.url });
    t.after(() => client.close());
    const jid = await client.push({ class: "CountingIterableJob", args: ["big", TOTAL] });
    const began = Date.now();
    for (let stop = 1; stop <= 3; stop++) {
      const proc = worker();
      // Stop a quarter, a half and three quarters of the way through.
      await eventually(
        async () => (await seen("big")) >= (stop * TOTAL) / 4,
        60_000,
        `progress before TERM ${stop}`,
        20,
      );
      proc.signal("SIGTERM");
      assert.equal(await proc.exited, 0, `a clean exit after TERM ${stop}:\n${proc.output().slice(-2000)}`);
      const done = await seen("big");
      assert.ok(done < TOTAL, `TERM ${stop} came before the end (${done} items done)`);
      const state = await handle.redis.hgetall(`it-${jid}`);
      assert.equal(Number(state.c), done, `the saved cursor is the first item not done (stop ${stop})`);
      assert.equal(await handle.redis.bitpos("big:seen", 0), done, "items done are exactly 0 .. cursor-1");
      assert.equal(Number(state.ex), stop, "ex counts the runs");
      assert.ok(Number(state.rt) > 0, "rt is seconds iterated");
      assert.equal((await hooks("big")).at(-1), "stop");
      const queued = await handle.redis.lrange("queue:default", 0, -1);
      assert.equal(queued.length, 1, "the job is back in its queue");
      assert.equal((JSON.parse(queued[0]!) as { jid: string }).jid, jid, "with the same jid");
    }
    const last = worker();
    t.after(() => last.stop(10_000));
    await eventually(async () => (await hooks("big")).includes("complete"), 90_000, "the job completed");
    const seconds = (Date.now() - began) / 1000;
    assert.equal(await seen("big"), TOTAL, "every item processed");
    const repeated = await repeats("big");
    assert.ok(repeated <= 3, `at most one item repeated per interruption, got ${repeated}`);
    assert.deepEqual(await hooks("big"), [
      "start:1",
      "stop",
      "resume:2",
      "stop",
      "resume:3",
      "stop",
      "resume:4",
      "stop",
      "complete",
    ]);
    assert.equal(await handle.redis.exists(`it-${jid}`), 0, "the state goes with the finished job");
    assert.equal(await handle.redis.zcard("retry"), 0);
    assert.equal(await handle.redis.zcard("dead"), 0);
    assert.equal(Number((await handle.redis.get("stat:failed")) ?? 0), 0, "an interruption is not a failure");
    console.log(`# ${TOTAL} items, 3 TERMs, ${repeated} repeated, ${seconds.toFixed(1)} s including 4 process starts`);
  },
);

test("tsqctl cancel stops a running iterable job at once; its cancel hooks run", { timeout: 60_000 }, async (t) => {
  const client = new Client({ redis: handle.url });
  t.after(() => client.close());
  const proc = worker();
  t.after(() => proc.stop(10_000));
  // 1 ms per item: a run of minutes, unless cancelled.
  const jid = await client.push({ class: "CountingIterableJob", args: ["cx", 500_000, 1] });
  await eventually(async () => (await seen("cx")) >= 100, 30_000, "running");
  const out = tsqctl("cancel", jid!);
  assert.match(out, new RegExp(`^${jid}: cancelled at \\d{4}-\\d\\d-\\d\\dT`));
  // Told through its owner's channel, or every tsq process's when no heartbeat has shown it running yet.
  assert.match(out, /: running on .*; told to stop\n|: not in a work hash; told every tsq process \(1\)/);
  // The owner is told at once (durable cancel): the walk sees its signal abort, saves, finds the mark and
  // runs the cancel hooks; it-<jid> is deleted when it completes, so the mark is read from the output.
  await eventually(async () => (await hooks("cx")).includes("complete"), 20_000, "stopped");
  assert.deepEqual(await hooks("cx"), ["start:1", "cancel", "stop", "complete"]);
  assert.ok((await seen("cx")) < 500_000);
  assert.equal(await handle.redis.exists(`it-${jid}`), 0);
  assert.equal(await handle.redis.llen("queue:default"), 0, "not requeued");

  const bad = spawnSync(
    process.execPath,
    [join(ROOT, "bin/tsqctl.js"), "cancel", "no such jid", "--redis-url", handle.url],
    {
      encoding: "utf8",
    },
  );
  assert.equal(bad.status, 2, "a malformed jid is a usage error");
  // A second cancel keeps the first mark (HSETNX), for a jid not running.
  const first = JSON.parse(tsqctl("cancel", "0123456789abcdef01234567", "--json")) as { cancelled_at: number };
  assert.ok(Math.abs(first.cancelled_at - Date.now() / 1000) < 10, "cancelled_at = epoch seconds");
  await sleep(1100);
  const again = JSON.parse(tsqctl("cancel", "0123456789abcdef01234567", "--json")) as { cancelled_at: number };
  assert.equal(again.cancelled_at, first.cancelled_at, "HSETNX: kept");
  assert.match(bad.stderr, /expected a job id/);
});

test(
  "SIGKILL mid-walk with reliable fetch: recovered, resumed at the last saved cursor",
  { timeout: 120_000 },
  async (t) => {
    const client = new Client({ redis: handle.url });
    t.after(() => client.close());
    // QuickFlushIterableJob saves its cursor every 0.2 s, so a few thousand items outlast the first save
    // on any machine; one round trip per item. The walk after the kill stays short under load: the test
    // is about where the recovered job resumes, not about how fast a loaded machine walks.
    const total = 20_000;
    const cluster = startTsq(
      ["-r", JOBS, "--processes", "1", "-c", "2", "-t", "5", "--fetch", "reliable"],
      { REDIS_URL: handle.url, TSQ_LOG_LEVEL: "warn" },
      "bin/tsq-cluster.js",
    );
    t.after(() => cluster.stop(10_000));
    // The kill comes after the first state save, mid-walk.
    const jid = await client.push({ class: "QuickFlushIterableJob", args: ["k", total, 0, 1] });
    await eventually(async () => (await handle.redis.hexists(`it-${jid}`, "c")) === 1, 60_000, "a state save", 20);
    const firstSave = Number(await handle.redis.hget(`it-${jid}`, "c"));
    await eventually(async () => (await seen("k")) >= firstSave + 2000, 60_000, "items past the save", 20);
    const [child] = childPids(cluster.child.pid!);
    assert.ok(child !== undefined, "the worker child");
    process.kill(child, "SIGKILL");
    await sleep(300); // what the dead child had sent reaches Redis
    const processed = await seen("k");
    const saved = Number(await handle.redis.hget(`it-${jid}`, "c"));
    assert.ok(saved <= processed);
    const killedAt = performance.now();
    await eventually(async () => (await hooks("k")).includes("resume:2"), 90_000, "the job recovered and resumed");
    const resumedAfter = performance.now() - killedAt;
    await eventually(async () => (await hooks("k")).includes("complete"), 90_000, "the recovered job completed");
    assert.equal(await seen("k"), total, "every item processed");
    assert.equal(await repeats("k"), processed - saved, "exactly the items since the last save ran twice");
    assert.deepEqual(await hooks("k"), ["start:1", "resume:2", "stop", "complete"], "no onStop in the killed run");
    console.log(
      `# SIGKILL: ${processed - saved} items repeated (done ${processed}, saved cursor ${saved}), ` +
        `resumed ${(resumedAfter / 1000).toFixed(1)} s after the kill`,
    );
  },
);
