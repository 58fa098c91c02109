/**
 * Batches run by a real tsq worker: a job reopening its batch and opening a child batch, the parent's
 * `success` waiting for the child's, a death reaching the batch and its parent once, and a dead member
 * retried by hand from the dead set finishing the batch.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { Client } from "../../../../src/client/Client.js";
import { Batch } from "../../../../src/features/flow/batches/index.js";
import { DeadSet } from "../../../../src/admin/api/index.js";
import { useRedis } from "../../../helpers/redis.js";
import { ROOT, eventually, startTsq } from "../../../helpers/tsqProcess.js";
import { childPids, config } from "../../../reliable/chaosRun.js";

const handle = useRedis();
const JOBS_MODULE = join(ROOT, "dist/test/jobs/batchJobs.js");

interface Fired {
  bid: string;
  event: string;
  options: { level?: string };
  ran: number;
  succeeded: number;
}

async function fired(): Promise<Fired[]> {
  return (await handle.redis.lrange("callbacks", 0, -1)).map((c) => JSON.parse(c) as Fired);
}

function worker(t: { after(fn: () => unknown): void }) {
  const proc = startTsq(
    ["-r", JOBS_MODULE, "-c", "5", "--fetch", "reliable", "-C", config("average_scheduled_poll_interval: 1\n")],
    { REDIS_URL: handle.url, TSQ_LOG_LEVEL: "error" },
  );
  t.after(() => proc.stop(10_000));
  const client = new Client({ redis: handle.url });
  t.after(() => client.close());
  return client;
}

/** A top-level batch with complete/success/death callbacks tagged `level: parent`. */
function parentBatch(client: Client): Batch {
  const batch = new Batch({ client, description: "parent" });
  for (const event of ["complete", "success", "death"] as const) batch.on(event, "CallbackJob", { level: "parent" });
  return batch;
}

test("a job adds to its own batch and opens a child: the parent succeeds once, after the child", async (t) => {
  const client = worker(t);
  const parent = parentBatch(client);
  await parent.jobs(async () => {
    await client.push({ class: "FanJob", args: [3, 4] });
    await client.push({ class: "MemberJob", args: [0] });
  });
  await eventually(
    async () => (await fired()).some((f) => f.event === "success" && f.bid === parent.bid),
    60_000,
    "parent success",
  );
  await new Promise((r) => setTimeout(r, 1500)); // room for a duplicate to show up
  const childBid = (await handle.redis.lrange("children", 0, -1))[0]!;
  const events = (await fired()).map((f) => `${f.event}:${f.options.level}`);
  assert.deepEqual(
    events.filter((e) => e.startsWith("success")),
    ["success:child", "success:parent"],
    "the child's success comes first; each once",
  );
  assert.equal(events.filter((e) => e === "complete:parent").length, 1);
  const status = await Batch.status(parent.bid, client);
  assert.equal(status?.total, 5, "FanJob, MemberJob and the 3 jobs FanJob added");
  assert.equal(status?.children, 1);
  assert.equal((await Batch.status(childBid, client))?.parent, parent.bid);
  const parentSuccess = (await fired()).find((f) => f.event === "success" && f.bid === parent.bid)!;
  assert.equal(parentSuccess.ran, 4, "every MemberJob of the parent (1 + 3 added) had run");
});

test("a child's job dies: death fires once on the child and once on the parent; no success", async (t) => {
  const client = worker(t);
  const parent = parentBatch(client);
  await parent.jobs(async () => {
    await client.push({ class: "FanJob", args: [0, 3, "die"] });
  });
  await eventually(async () => (await fired()).filter((f) => f.event === "death").length === 2, 60_000, "two deaths");
  const childBid = (await handle.redis.lrange("children", 0, -1))[0]!;
  await eventually(async () => (await Batch.status(childBid, client))?.unrun === 0, 30_000, "child's jobs ran");
  await new Promise((r) => setTimeout(r, 1500));
  const events = (await fired()).map((f) => `${f.event}:${f.options.level}`).sort();
  assert.deepEqual(events, ["complete:parent", "death:child", "death:parent"]);
  const child = await Batch.status(childBid, client);
  assert.equal(child?.deadJids.length, 1);
  assert.equal(child?.success, false);
  assert.equal((await Batch.status(parent.bid, client))?.success, false);
});

test("a dead member retried from the dead set: the batch succeeds, once", async (t) => {
  const client = worker(t);
  const batch = parentBatch(client);
  let jid = "";
  await batch.jobs(async () => {
    jid = (await client.push({ class: "MemberJob", args: [1, "dieUntilHealed"], retry: 0 }))!;
    await client.push({ class: "MemberJob", args: [2] });
  });
  await eventually(async () => (await fired()).some((f) => f.event === "death"), 60_000, "death");
  assert.deepEqual((await Batch.status(batch.bid, client))?.deadJids, [jid]);
  await handle.redis.set(`healed:${jid}`, "1");
  const entry = await new DeadSet(handle.redis).findJob(jid);
  assert.ok(entry, "the member is in the dead set");
  await entry.retry();
  await eventually(async () => (await fired()).some((f) => f.event === "success"), 60_000, "success");
  await new Promise((r) => setTimeout(r, 1500));
  assert.deepEqual(
    (await fired()).map((f) => f.event),
    ["complete", "death", "success"],
  );
  assert.deepEqual((await Batch.status(batch.bid, client))?.deadJids, []);
});

test("Redis goes away for 3 s in the middle of a batch: complete and success still fire once each", async (t) => {
  const client = worker(t);
  const batch = parentBatch(client);
  const count = 300;
  await batch.jobs(async () => {
    await client.pushBulk({ class: "MemberJob", args: Array.from({ length: count }, (_, i) => [i, "ok", 20]) });
  });
  await eventually(async () => (await handle.redis.scard(`succeeded:${batch.bid}`)) >= 50, 60_000, "50 members done");
  await handle.restart(3000);
  await eventually(async () => (await fired()).some((f) => f.event === "success"), 120_000, "success after the outage");
  await new Promise((r) => setTimeout(r, 1500));
  const events = (await fired()).map((f) => f.event);
  assert.deepEqual(events, ["complete", "success"]);
  const success = (await fired()).find((f) => f.event === "success")!;
  assert.equal(success.succeeded, count, "every member had succeeded when success fired");
  assert.equal((await Batch.status(batch.bid, client))?.pending, 0);
});

test("members parked by a concurrency limit count only once they have run", async (t) => {
  const client = worker(t);
  const batch = parentBatch(client);
  await batch.jobs(async () => {
    await client.pushBulk({ class: "LimitedMemberJob", args: [[], [], [], []] });
  });
  await eventually(async () => (await fired()).some((f) => f.event === "success"), 60_000, "success");
  await new Promise((r) => setTimeout(r, 1000));
  const success = (await fired()).find((f) => f.event === "success")!;
  assert.equal(success.succeeded, 4, "every member had run when success fired, parked ones included");
  assert.deepEqual(
    (await fired()).map((f) => f.event),
    ["complete", "success"],
  );
});

test("a job of a Sidekiq Pro batch runs; Pro's keys are left as they were and no tsq batch key appears", async (t) => {
  const client = worker(t);
  const pro = { total: "1", pending: "1", description: "made by Pro" };
  await handle.redis.hset("b-VWYf44jVYsZARw", pro);
  await handle.redis.sadd("b-VWYf44jVYsZARw-jids", "abc");
  await client.push({ class: "MemberJob", args: [1], bid: "VWYf44jVYsZARw" });
  await eventually(async () => (await handle.redis.scard("succeeded:VWYf44jVYsZARw")) === 1, 30_000, "the job ran");
  assert.deepEqual(await handle.redis.hgetall("b-VWYf44jVYsZARw"), pro);
  assert.deepEqual(await handle.redis.smembers("b-VWYf44jVYsZARw-jids"), ["abc"]);
  assert.deepEqual(await handle.redis.keys("tsq:batch*"), []);
});

test("a job SIGKILLed inside its child batch's block: the re-run reseals the same child; parent succeeds once", async (t) => {
  const cluster = startTsq(
    ["-r", JOBS_MODULE, "--processes", "1", "-c", "5", "--fetch", "reliable"],
    { REDIS_URL: handle.url, TSQ_LOG_LEVEL: "error" },
    "bin/tsq-cluster.js",
  );
  t.after(() => cluster.stop(10_000));
  const client = new Client({ redis: handle.url });
  t.after(() => client.close());
  const parent = parentBatch(client);
  await parent.jobs(async () => {
    await client.push({ class: "HangInBlockJob", args: [] });
  });
  await eventually(async () => (await handle.redis.llen("children")) === 1, 30_000, "inside the child's block");
  await eventually(
    async () => (await handle.redis.scard(`succeeded:${(await handle.redis.lindex("children", 0))!}`)) === 2,
    30_000,
    "first kids done",
  );
  const victim = childPids(cluster.child.pid!)[0]!;
  process.kill(victim, "SIGKILL");
  await eventually(
    async () => (await fired()).some((f) => f.event === "success" && f.bid === parent.bid),
    90_000,
    "parent success",
  );
  await new Promise((r) => setTimeout(r, 1500));
  const children = await handle.redis.lrange("children", 0, -1);
  assert.equal(children.length, 2, "the job ran twice");
  assert.equal(children[0], children[1], "the re-run reopened the same child batch");
  const events = (await fired()).map((f) => `${f.event}:${f.options.level}`);
  assert.deepEqual(
    events.filter((e) => e.startsWith("success")),
    ["success:child", "success:parent"],
  );
  assert.equal((await Batch.status(children[0]!, client))?.total, 4, "2 kids from each run");
});
