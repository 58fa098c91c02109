/**
 * Steps under SIGKILL in real worker processes with reliable fetch: 50 five-step jobs while the worker
 * child is killed at random points; each step's side effect (committed with its journal entry) happens
 * exactly once per job, and every job completes. scripts/bench/durable.ts runs the same with 1,000 jobs.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { Client } from "../../../src/client/Client.js";
import { useRedis } from "../../helpers/redis.js";
import { ROOT, eventually, startTsq } from "../../helpers/tsqProcess.js";
import { childPids, sleep } from "../../reliable/chaosRun.js";

const handle = useRedis();
const JOBS = join(ROOT, "dist/test/jobs/durableJobs.js");
const TOTAL = 50;
const STEPS = 5;

test(
  "five steps under random SIGKILLs: every side effect exactly once, every job done",
  { timeout: 240_000 },
  async (t) => {
    const client = new Client({ redis: handle.url });
    t.after(() => client.close());
    const cluster = startTsq(
      ["-r", JOBS, "--processes", "1", "-c", "5", "-t", "5", "--fetch", "reliable"],
      { REDIS_URL: handle.url, TSQ_LOG_LEVEL: "warn" },
      "bin/tsq-cluster.js",
    );
    t.after(() => cluster.stop(10_000));
    const jids: string[] = [];
    for (let i = 0; i < TOTAL; i++) jids.push((await client.push({ class: "FiveStepJob", args: ["k", 60] }))!);
    let kills = 0;
    while (kills < 6 && (await handle.redis.scard("k:done")) < TOTAL) {
      await sleep(300 + Math.random() * 700);
      const [child] = childPids(cluster.child.pid!);
      if (child === undefined) continue; // between a death and the restart
      process.kill(child, "SIGKILL");
      kills++;
    }
    await eventually(async () => (await handle.redis.scard("k:done")) === TOTAL, 180_000, "every job done", 200);
    const effects = await handle.redis.hgetall("k:effects");
    assert.equal(Object.keys(effects).length, TOTAL * STEPS, "every step of every job committed");
    const twice = Object.entries(effects).filter(([, n]) => n !== "1");
    assert.deepEqual(twice, [], "no side effect twice");
    const calls = Object.values(await handle.redis.hgetall("k:calls")).map(Number);
    const recalled = calls.filter((n) => n > 1).length;
    assert.equal(await handle.redis.zcard("dead"), 0);
    assert.deepEqual(new Set(await handle.redis.smembers("k:done")), new Set(jids));
    console.log(
      `# ${TOTAL} jobs, ${kills} SIGKILLs: ${recalled} step functions called again after a kill, 0 effects twice`,
    );
  },
);
