/**
 * Batches over a real 4-child tsq-cluster with reliable fetch, a child SIGKILLed every 2 s and 5% of the
 * jobs failing once: `complete` and `success` fire exactly once per batch, after every job; when the
 * batches have lingered, none of their keys is left.
 *
 * Scale (defaults fit a loaded 2-core machine in about a minute):
 *   TSQ_BATCH_SOAK_RUNS   batches (default 3; the soak: 20)
 *   TSQ_BATCH_SOAK_JOBS   jobs per batch (default 1,000; the soak: 10,000)
 *   TSQ_BATCH_SOAK_SMALL  extra 5-job batches for the memory check (default 200; the issue's: 1,000)
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { Client } from "../../../../src/client/Client.js";
import { Batch } from "../../../../src/features/flow/batches/index.js";
import { useRedis } from "../../../helpers/redis.js";
import { ROOT, eventually, startTsq } from "../../../helpers/tsqProcess.js";
import { childPids, sleep } from "../../../reliable/chaosRun.js";
import { join } from "node:path";

const handle = useRedis();
const JOBS_MODULE = join(ROOT, "dist/test/jobs/batchJobs.js");
const RUNS = Number(process.env.TSQ_BATCH_SOAK_RUNS ?? 3);
const JOBS = Number(process.env.TSQ_BATCH_SOAK_JOBS ?? 1000);
const SMALL = Number(process.env.TSQ_BATCH_SOAK_SMALL ?? 200);
const LINGER = 3; // seconds: short, so the test sees the keys go

interface Fired {
  bid: string;
  event: string;
  ran: number;
  succeeded: number;
  total: number;
  failures: number;
  jid: string;
  pushedAt: number;
}

/** Pushes one batch of `jobs` members, every 20th failing once; resolves to its bid. */
async function pushBatch(client: Client, jobs: number, description: string): Promise<string> {
  const batch = new Batch({ client, description, linger: LINGER });
  batch.on("complete", "CallbackJob", {}).on("success", "CallbackJob", {}).on("death", "CallbackJob", {});
  await batch.jobs(async () => {
    const args = Array.from({ length: jobs }, (_, i) => [i, i % 20 === 0 ? "failOnce" : "ok", 2]);
    await client.pushBulk({ class: "MemberJob", args, batchSize: 500 });
  });
  return batch.bid;
}

test(
  `${RUNS} batches of ${JOBS} jobs on a 4-child cluster, a child SIGKILLed every 2 s: callbacks exactly once`,
  { timeout: 900_000 },
  async (t) => {
    const cluster = startTsq(
      ["-r", JOBS_MODULE, "--processes", "4", "-c", "5", "-t", "2", "--fetch", "reliable"],
      { REDIS_URL: handle.url, TSQ_LOG_LEVEL: "error" },
      "bin/tsq-cluster.js",
    );
    t.after(() => cluster.stop(10_000));
    await eventually(async () => (await handle.redis.scard("processes")) === 4, 60_000, "4 children up");
    const baseline = new Set(await handle.redis.keys("*"));
    const client = new Client({ redis: handle.url });
    t.after(() => client.close());

    const bids: string[] = [];
    for (let run = 0; run < RUNS; run++) bids.push(await pushBatch(client, JOBS, `soak ${run}`));
    const small: string[] = [];
    for (let i = 0; i < SMALL; i++) small.push(await pushBatch(client, 5, `small ${i}`));
    const all = [...bids, ...small];

    let kills = 0;
    const started = Date.now();
    const successes = async () =>
      (await handle.redis.lrange("callbacks", 0, -1)).filter((c) => (JSON.parse(c) as Fired).event === "success")
        .length;
    while ((await successes()) < all.length && Date.now() - started < 600_000) {
      await sleep(2000);
      const victim = childPids(cluster.child.pid!)[kills % 4];
      if (victim !== undefined && (await successes()) < all.length) {
        process.kill(victim, "SIGKILL");
        kills++;
      }
    }
    // Late duplicates would show up here: wait for the queues and private lists to drain and settle.
    await eventually(
      async () =>
        (await handle.redis.llen("queue:default")) === 0 && (await handle.redis.keys("queue:sq|*")).length === 0,
      120_000,
      "queues drained",
      500,
    );
    await sleep(2000);
    const fired = (await handle.redis.lrange("callbacks", 0, -1)).map((c) => JSON.parse(c) as Fired);
    const seconds = Math.round((Date.now() - started) / 100) / 10;
    // A callback is pushed once; like any job under reliable fetch it may *run* twice when its child is
    // killed between its work and its acknowledgement. A push is told by its enqueued_at, written by the
    // Lua call that fired it: a second firing would carry another; a re-run carries the same.
    let duplicates = 0;
    let missing = 0;
    let reruns = 0;
    for (const bid of all) {
      const jobs = bids.includes(bid) ? JOBS : 5;
      for (const event of ["complete", "success"]) {
        const mine = fired.filter((f) => f.bid === bid && f.event === event);
        const pushed = new Set(mine.map((f) => `${f.jid}@${f.pushedAt}`)).size;
        duplicates += Math.max(pushed - 1, 0);
        reruns += mine.length - pushed;
        missing += pushed === 0 ? 1 : 0;
        for (const f of mine) {
          assert.equal(f.total, jobs, `${event} of ${bid}: total`);
          assert.equal(f.ran, jobs, `${event} of ${bid} fired after every job ran`);
          if (event === "success") assert.equal(f.succeeded, jobs, `success of ${bid} after every job succeeded`);
        }
      }
    }
    const deaths = fired.filter((f) => f.event === "death").length;
    console.log(
      `batches: ${RUNS}x${JOBS} + ${SMALL}x5 jobs in ${seconds} s, ${kills} SIGKILLs; ` +
        `callbacks ${fired.length}: ${duplicates} duplicate, ${missing} missing, ${deaths} death; ` +
        `${reruns} callback job(s) run again after a SIGKILL (same push)`,
    );
    assert.ok(kills >= 3, `only ${kills} kills: too short a run to prove anything`);
    assert.equal(duplicates, 0);
    assert.equal(missing, 0);
    assert.equal(deaths, 0, "no job died (each fails once, retries 3 times)");

    // Memory: after the linger, nothing of any batch is left.
    const sizeBefore = await handle.redis.dbsize();
    await handle.redis.del(...all.flatMap((bid) => [`ran:${bid}`, `succeeded:${bid}`]), "callbacks");
    await eventually(
      async () => (await handle.redis.keys("tsq:batch*")).length === 0,
      LINGER * 1000 + 30_000,
      "every batch key expired",
      500,
    );
    // Keys a worker fleet writes for itself (new children after kills, stats, Sidekiq 8's per-minute
    // execution metrics, which expire in hours, recovery counters) aside, the keyspace is what it was
    // before the first batch.
    const worker =
      /^(stat:|j\||h\||tsq:recovered:|processes$|process_cleanup$|queues$|super_processes$|retry$|.+:\d+:[0-9a-f]{12}(:work|:workers|-signals)?$)/;
    const extra = (await handle.redis.keys("*")).filter((key) => !baseline.has(key) && !worker.test(key));
    console.log(
      `DBSIZE: ${baseline.size} before the batches, ${sizeBefore} after them, ${await handle.redis.dbsize()} after the linger`,
    );
    assert.deepEqual(extra, []);
  },
);
