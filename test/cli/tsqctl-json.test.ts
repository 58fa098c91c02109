/**
 * Every `tsqctl ... --json` listing parses and has exactly the keys the README documents (Admin:
 * tsqctl), with the values of the data behind it: jobs pushed by tsq's client, retry/dead entries as
 * Sidekiq writes them, and a real tsq worker running a job.
 */
import { beforeEach, describe, test } from "node:test";
import assert from "node:assert/strict";
import { tsqctl as runTsqctl } from "../helpers/tsqctl.js";
import { Client } from "../../src/client/Client.js";
import { DEAD, RETRY } from "../../src/wire/keys.js";
import { useRedis } from "../helpers/redis.js";
import { TEST_JOBS, eventually, startTsq, type TsqProcess } from "../helpers/tsqProcess.js";

const redis = useRedis();

async function json<T>(args: string[]): Promise<T> {
  if (!redis.url) throw new Error("the private Redis is not running");
  const run = await runTsqctl([...args, "--json"], { REDIS_URL: redis.url });
  assert.equal(run.exitCode, 0, `tsqctl ${args.join(" ")}: ${run.stderr}`);
  assert.equal(run.stderr, "");
  return JSON.parse(String(run.stdout)) as T;
}

// The documented shapes (docs/admin.md, "JSON output").
const JOB_KEYS = [
  "jid",
  "class",
  "display_class",
  "queue",
  "args",
  "created_at",
  "enqueued_at",
  "retry_count",
  "error_class",
  "error_message",
  "failed_at",
  "retried_at",
  "valid",
  "payload",
];
const ENTRY_KEYS = [...JOB_KEYS, "score", "at"];
const STATS_KEYS = [
  "processed",
  "failed",
  "enqueued",
  "scheduled_size",
  "retry_size",
  "dead_size",
  "processes_size",
  "workers_size",
  "default_queue_latency",
  "queues",
  "history",
];
const QUEUE_KEYS = ["name", "size", "latency", "paused"];
const PROCESSES_KEYS = ["size", "total_concurrency", "total_rss_kb", "busy", "leader", "processes", "work"];
const PROCESS_KEYS = [
  "identity",
  "hostname",
  "pid",
  "tag",
  "labels",
  "queues",
  "version",
  "embedded",
  "started_at",
  "concurrency",
  "busy",
  "beat",
  "quiet",
  "rss_kb",
  "rtt_us",
  "leader",
  "info",
];
const WORK_KEYS = ["process", "tid", "queue", "run_at", "jid", "class", "args", "payload"];

type Obj = Record<string, unknown>;
const keys = (value: unknown) => Object.keys(value as Obj);

const RETRY_JSON =
  '{"retry":true,"queue":"default","class":"HardJob","args":[1.0],"jid":"retry000000000000000001","created_at":1795264707.355663,' +
  '"enqueued_at":1795264707.355889,"error_message":"boom","error_class":"RuntimeError","failed_at":1795264710.5,"retry_count":2,"retried_at":1795264790.25}';

describe("tsqctl --json", () => {
  let jids: { a: string; b: string; later: string };
  // After useRedis's flush, before every test.
  beforeEach(async () => {
    const client = new Client({ redis: redis.redis });
    jids = {
      a: (await client.push({ class: "HardJob", args: ["a", 1] }))!,
      b: (await client.push({ class: "HardJob", args: ["b", 2], queue: "low" }))!,
      later: (await client.push({ class: "LaterJob", args: [], at: 1_900_000_000.5 }))!,
    };
    await redis.redis.zadd(RETRY, "1800000000.5", RETRY_JSON);
    await redis.redis.zadd(DEAD, "1795264800.75", "{poison");
  });

  test("stats", async () => {
    const stats = await json<Obj>(["stats", "--days", "2"]);
    assert.deepEqual(keys(stats), STATS_KEYS);
    assert.deepEqual(
      [stats.enqueued, stats.scheduled_size, stats.retry_size, stats.dead_size, stats.processed],
      [2, 1, 1, 1, 0],
    );
    assert.deepEqual(stats.queues, { default: 1, low: 1 });
    const history = stats.history as { processed: Obj; failed: Obj };
    assert.deepEqual(keys(history), ["processed", "failed"]);
    assert.equal(keys(history.processed).length, 2);
    assert.match(keys(history.processed)[0]!, /^\d{4}-\d{2}-\d{2}$/);
    assert.equal(typeof stats.default_queue_latency, "number");
  });

  test("queues and queue <name>", async () => {
    const queues = await json<Obj[]>(["queues"]);
    assert.deepEqual(
      queues.map((q) => keys(q)),
      [QUEUE_KEYS, QUEUE_KEYS],
    );
    assert.deepEqual(
      queues.map((q) => [q.name, q.size, q.paused]),
      [
        ["default", 1, false],
        ["low", 1, false],
      ],
    );
    const queue = await json<Obj>(["queue", "default"]);
    assert.deepEqual(keys(queue), ["name", "size", "latency", "jobs"]);
    const [job] = queue.jobs as Obj[];
    assert.deepEqual(keys(job), JOB_KEYS);
    assert.deepEqual(
      [job!.jid, job!.class, job!.queue, job!.args, job!.valid, job!.retry_count],
      [jids.a, "HardJob", "default", ["a", 1], true, null],
    );
    assert.equal((job!.payload as Obj).jid, jids.a);
    assert.equal(typeof job!.enqueued_at, "number");
  });

  test("retries, dead and scheduled", async () => {
    const retries = await json<Obj>(["retries"]);
    assert.deepEqual(keys(retries), ["set", "size", "entries"]);
    assert.deepEqual([retries.set, retries.size], ["retry", 1]);
    const [entry] = retries.entries as Obj[];
    assert.deepEqual(keys(entry), ENTRY_KEYS);
    assert.deepEqual(
      [
        entry!.jid,
        entry!.error_class,
        entry!.error_message,
        entry!.retry_count,
        entry!.failed_at,
        entry!.retried_at,
        entry!.score,
        entry!.at,
      ],
      [
        "retry000000000000000001",
        "RuntimeError",
        "boom",
        2,
        1795264710.5,
        1795264790.25,
        1800000000.5,
        "2027-01-15T08:00:00.500Z",
      ],
    );
    const dead = await json<Obj>(["dead"]);
    const [pill] = dead.entries as Obj[];
    assert.deepEqual(keys(pill), ENTRY_KEYS);
    assert.deepEqual(
      [pill!.valid, pill!.payload, pill!.args, pill!.jid, pill!.score],
      [false, null, ["{poison"], null, 1795264800.75],
    );
    const scheduled = await json<Obj>(["scheduled", "--grep", "LaterJob"]);
    assert.deepEqual(
      [scheduled.set, scheduled.size, (scheduled.entries as Obj[]).map((e) => e.jid)],
      ["schedule", 1, [jids.later]],
    );
    assert.deepEqual((await json<Obj>(["scheduled", "--grep", "nothing-like-this"])).entries, []);
  });

  test("processes, with a real tsq worker running a job", async (t) => {
    const tsq: TsqProcess = startTsq(["-r", TEST_JOBS, "-q", "sleepy", "-c", "3", "-g", "jsontag"], {
      REDIS_URL: redis.url,
    });
    t.after(() => tsq.stop(5000));
    const identity = String((await tsq.waitForLine((line) => line.msg === "tsq worker started")).identity);
    const client = new Client({ redis: redis.redis });
    const jid = await client.push({ class: "SleepJob", args: [11], queue: "sleepy" });
    await eventually(
      async () => (await redis.redis.hget(identity, "busy")) === "1",
      15_000,
      "busy never reached 1",
      200,
    );

    const out = await json<Obj>(["processes"]);
    assert.deepEqual(keys(out), PROCESSES_KEYS);
    assert.deepEqual([out.size, out.total_concurrency, out.busy, out.leader], [1, 3, 1, null]);
    const [proc] = out.processes as Obj[];
    assert.deepEqual(keys(proc), PROCESS_KEYS);
    assert.deepEqual(
      [proc!.identity, proc!.pid, proc!.tag, proc!.queues, proc!.concurrency, proc!.busy, proc!.quiet],
      [identity, tsq.child.pid, "jsontag", ["sleepy"], 3, 1, false],
    );
    assert.equal(out.total_rss_kb, proc!.rss_kb);
    const [work] = out.work as Obj[];
    assert.deepEqual(keys(work), WORK_KEYS);
    assert.deepEqual(
      [work!.process, work!.queue, work!.jid, work!.class, work!.args],
      [identity, "sleepy", jid, "SleepJob", [11]],
    );
    assert.equal(await tsq.stop(20_000), 0);
  });

  test("actions print {action, target, count, ids}", async () => {
    const retried = await json<Obj>(["retry", "retry000000000000000001"]);
    assert.deepEqual(retried, { action: "retry", target: "retry", count: 1, ids: ["retry000000000000000001"] });
    const cleared = await json<Obj>(["clear", "dead", "--yes"]);
    assert.deepEqual(cleared, { action: "clear", target: "dead", count: 1, ids: [] });
    const quiet = await json<Obj>(["quiet", "--all"]);
    assert.deepEqual(quiet, { action: "quiet", target: "processes", count: 0, ids: [] });
  });
});
