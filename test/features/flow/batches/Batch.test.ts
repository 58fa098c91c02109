/**
 * The batch bookkeeping against a real Redis, without workers: members' events are applied as a worker
 * would (applyBatchEvent), including the races and repeats a worker fleet produces.
 */
process.env.TSQ_BATCH_FAIL_CAP = "5";
import { test, after } from "node:test";
import assert from "node:assert/strict";
import { Client } from "../../../../src/client/Client.js";
import { Batch, BatchError } from "../../../../src/features/flow/batches/index.js";
import { applyBatchEvent } from "../../../../src/features/flow/batches/events.js";
import { connect } from "../../../../src/platform/redis/connection.js";
import { useRedis } from "../../../helpers/redis.js";
import { eventually } from "../../../helpers/tsqProcess.js";

const handle = useRedis();
let client: Client;
const clients: Client[] = [];
function newClient(): Client {
  const c = new Client({ redis: handle.url });
  clients.push(c);
  return c;
}
after(async () => Promise.all(clients.map((c) => c.close())));

/** The callback jobs pushed so far: [event, bid, status, options]. */
async function callbacks(): Promise<
  { event: string; bid: string; status: Record<string, unknown>; options: unknown }[]
> {
  const jobs = await handle.redis.lrange("queue:default", 0, -1);
  return jobs
    .map((j) => JSON.parse(j) as { class: string; args: [Record<string, unknown>, unknown] })
    .filter((j) => j.class === "Done")
    .map((j) => ({ event: String(j.args[0].event), bid: String(j.args[0].bid), status: j.args[0], options: j.args[1] }))
    .reverse();
}

/** A batch of `n` members with complete/success/death callbacks; resolves to the bid and jids. */
async function makeBatch(n: number, options: ConstructorParameters<typeof Batch>[0] = {}) {
  client ??= newClient();
  const batch = new Batch({ client, ...options });
  for (const event of ["complete", "success", "death"] as const) batch.on(event, "Done", { n }, { queue: "default" });
  const jids: string[] = [];
  await batch.jobs(async () => {
    for (let i = 0; i < n; i++) jids.push((await client.push({ class: "Member", args: [i], queue: "members" }))!);
  });
  return { bid: batch.bid, jids, batch };
}

test("members carry the bid; status counts them; callbacks are pushed once, after the last success", async () => {
  const { bid, jids } = await makeBatch(3);
  const pushed = (await handle.redis.lrange("queue:members", 0, -1)).map((j) => JSON.parse(j) as { bid: string });
  assert.deepEqual(
    pushed.map((j) => j.bid),
    [bid, bid, bid],
  );
  let status = await Batch.status(bid, client);
  assert.equal(status?.total, 3);
  assert.equal(status?.pending, 3);
  for (const jid of jids.slice(0, 2)) await applyBatchEvent(client.redis, "success", bid, jid);
  assert.deepEqual(await callbacks(), []);
  await applyBatchEvent(client.redis, "success", bid, jids[2]!);
  await applyBatchEvent(client.redis, "success", bid, jids[2]!); // a re-run after a SIGKILL
  const fired = await callbacks();
  assert.deepEqual(
    fired.map((c) => c.event),
    ["complete", "success"],
  );
  assert.deepEqual(fired[1]!.options, { n: 3 });
  assert.equal(fired[1]!.status.total, 3);
  status = await Batch.status(bid, client);
  assert.equal(status?.pending, 0);
  assert.ok(status?.success && status.complete && status.successAt! >= status.createdAt!);
});

test("atomic block: members finishing before the block ends fire nothing until it returns", async () => {
  client ??= newClient();
  const batch = new Batch({ client });
  batch.on("success", "Done", {}, { queue: "default" });
  await batch.jobs(async () => {
    for (let i = 0; i < 3; i++) {
      const jid = (await client.push({ class: "Member", args: [i], queue: "members" }))!;
      await applyBatchEvent(client.redis, "success", batch.bid, jid); // done before the next push
    }
    assert.deepEqual(await callbacks(), [], "no callback while the block is open");
  });
  assert.deepEqual(
    (await callbacks()).map((c) => c.event),
    ["success"],
  );
});

test("two processes finishing the last two members together: each callback exactly once (200 races)", async () => {
  const other = connect(handle.url);
  try {
    const bids: string[] = [];
    for (let round = 0; round < 200; round++) {
      const { bid, jids } = await makeBatch(2);
      bids.push(bid);
      await Promise.all([
        applyBatchEvent(client.redis, "success", bid, jids[0]!),
        applyBatchEvent(other, "success", bid, jids[1]!),
        applyBatchEvent(other, "success", bid, jids[0]!),
        applyBatchEvent(client.redis, "success", bid, jids[1]!),
      ]);
    }
    const fired = await callbacks();
    for (const bid of bids) {
      const mine = fired.filter((c) => c.bid === bid).map((c) => c.event);
      assert.deepEqual(mine, ["complete", "success"], `batch ${bid}`);
    }
  } finally {
    other.disconnect();
  }
});

test("a failure completes the member; its retry's success succeeds the batch; stale failures are ignored", async () => {
  const { bid, jids } = await makeBatch(2);
  await applyBatchEvent(client.redis, "success", bid, jids[0]!);
  await applyBatchEvent(client.redis, "failure", bid, jids[1]!, { info: '{"error_class":"Boom"}' });
  assert.deepEqual(
    (await callbacks()).map((c) => c.event),
    ["complete"],
  );
  assert.equal((await Batch.status(bid, client))?.failures, 1);
  await applyBatchEvent(client.redis, "failure", bid, jids[0]!); // a re-run of a succeeded job failing
  assert.equal((await Batch.status(bid, client))?.failures, 1);
  await applyBatchEvent(client.redis, "success", bid, jids[1]!);
  const status = await Batch.status(bid, client);
  assert.equal(status?.failures, 0);
  assert.deepEqual(
    (await callbacks()).map((c) => c.event),
    ["complete", "success"],
  );
});

test("death fires once; a dead job retried by hand that succeeds fires success once", async () => {
  const { bid, jids } = await makeBatch(2);
  await applyBatchEvent(client.redis, "success", bid, jids[0]!);
  await applyBatchEvent(client.redis, "failure", bid, jids[1]!);
  await applyBatchEvent(client.redis, "death", bid, jids[1]!);
  await applyBatchEvent(client.redis, "death", bid, jids[1]!); // reported twice
  assert.deepEqual(
    (await callbacks()).map((c) => c.event),
    ["complete", "death"],
  );
  assert.deepEqual((await Batch.status(bid, client))?.deadJids, [jids[1]]);
  await applyBatchEvent(client.redis, "success", bid, jids[1]!); // retried from the dead set
  await applyBatchEvent(client.redis, "success", bid, jids[1]!);
  assert.deepEqual(
    (await callbacks()).map((c) => c.event),
    ["complete", "death", "success"],
  );
  assert.deepEqual((await Batch.status(bid, client))?.deadJids, []);
});

test("failure records are capped (TSQ_BATCH_FAIL_CAP=5); the counts stay exact", async () => {
  const { bid, jids } = await makeBatch(20);
  for (const jid of jids) await applyBatchEvent(client.redis, "failure", bid, jid, { info: '{"error_class":"X"}' });
  const status = await Batch.status(bid, client);
  assert.equal(status?.failures, 20);
  assert.equal(Object.keys(status?.failureInfo ?? {}).length, 5);
});

test("nested: the parent succeeds only after its child batch; a death reaches the parent once", async () => {
  client ??= newClient();
  const parent = new Batch({ client, description: "parent" });
  for (const event of ["success", "death"] as const)
    parent.on(event, "Done", { level: "parent" }, { queue: "default" });
  let child!: Batch;
  let parentJid = "";
  const childJids: string[] = [];
  await parent.jobs(async () => {
    parentJid = (await client.push({ class: "Member", args: [], queue: "members" }))!;
    child = new Batch({ client, description: "child" }); // inside the parent's block: its child
    for (const event of ["success", "death"] as const)
      child.on(event, "Done", { level: "child" }, { queue: "default" });
    await child.jobs(async () => {
      for (let i = 0; i < 2; i++)
        childJids.push((await client.push({ class: "Member", args: [i], queue: "members" }))!);
    });
  });
  assert.equal((await Batch.status(child.bid, client))?.parent, parent.bid);
  await applyBatchEvent(client.redis, "success", parent.bid, parentJid);
  assert.deepEqual(await callbacks(), [], "the parent waits for its child");
  await applyBatchEvent(client.redis, "death", child.bid, childJids[0]!);
  assert.deepEqual(
    (await callbacks()).map((c) => `${c.event}:${(c.options as { level: string }).level}`),
    ["death:child", "death:parent"],
  );
  await applyBatchEvent(client.redis, "success", child.bid, childJids[1]!);
  await applyBatchEvent(client.redis, "success", child.bid, childJids[0]!); // the dead job, retried by hand
  assert.deepEqual(
    (await callbacks()).map((c) => `${c.event}:${(c.options as { level: string }).level}`),
    ["death:child", "death:parent", "success:child", "success:parent"],
  );
});

test("a finished batch's keys expire after its linger; one whose jobs were deleted expires whole", async () => {
  const { bid, jids } = await makeBatch(3, { linger: 1 });
  const lost = await makeBatch(3, { expiresIn: 2 });
  await handle.redis.del("queue:members"); // every job of both batches deleted
  for (const jid of jids) await applyBatchEvent(client.redis, "failure", bid, jid, { info: "{}" });
  for (const jid of jids) await applyBatchEvent(client.redis, "success", bid, jid);
  await handle.redis.del("queue:default", "queues");
  await eventually(async () => (await handle.redis.dbsize()) === 0, 10_000, "every batch key expired", 200);
  assert.equal(await Batch.status(bid, client), undefined);
  assert.equal(await Batch.status(lost.bid, client), undefined);
  // A late event (a dead job of the gone batch retried by hand) creates nothing.
  await applyBatchEvent(client.redis, "success", lost.bid, lost.jids[0]!);
  assert.equal(await handle.redis.dbsize(), 0);
});

test("a Sidekiq Pro bid: events change nothing and Pro's keys stay as they were", async () => {
  client ??= newClient();
  await handle.redis.hset("b-VWYf44jVYsZARw", "pending", "1", "total", "1");
  await applyBatchEvent(client.redis, "success", "VWYf44jVYsZARw", "abc");
  assert.deepEqual(await handle.redis.keys("*"), ["b-VWYf44jVYsZARw"]);
  assert.deepEqual(await handle.redis.hgetall("b-VWYf44jVYsZARw"), { pending: "1", total: "1" });
});

test("a succeeded batch cannot be reopened; callbacks must be set before the first block", async () => {
  const { bid, jids, batch } = await makeBatch(1);
  assert.throws(() => batch.on("success", "Done"), /before its first jobs block/);
  await applyBatchEvent(client.redis, "success", bid, jids[0]!);
  await assert.rejects(
    Batch.reopen(bid, client).jobs(async () => client.push({ class: "Member", args: [] })),
    (error: unknown) => error instanceof BatchError && /already succeeded/.test(error.message),
  );
  await assert.rejects(
    Batch.reopen("no-such-bid", client).jobs(async () => undefined),
    (error: unknown) => error instanceof BatchError && /does not exist/.test(error.message),
  );
  assert.throws(() => new Batch({ client }).on("finished" as "success", "Done"), /unknown batch event/);
});

test("a push Redis refuses inside the block leaves the batch again: the batch never waits for it", async () => {
  client ??= newClient();
  await handle.redis.set("queue:broken", "not a list"); // LPUSH fails with WRONGTYPE
  const batch = new Batch({ client });
  batch.on("success", "Done", {}, { queue: "default" });
  let good = "";
  await assert.rejects(
    batch.jobs(async () => {
      good = (await client.push({ class: "Member", args: [1], queue: "members" }))!;
      await client.push({ class: "Member", args: [2], queue: "broken" });
    }),
    /was not enqueued/,
  );
  const status = await Batch.status(batch.bid, client);
  assert.equal(status?.total, 1, "only the pushed job is a member");
  assert.equal(status?.pending, 1);
  await applyBatchEvent(client.redis, "success", batch.bid, good);
  assert.deepEqual(
    (await callbacks()).map((c) => c.event),
    ["success"],
    "the block was sealed although it threw",
  );
});

test("two blocks of one batch at once: no callback until both have returned", async () => {
  client ??= newClient();
  const batch = new Batch({ client });
  batch.on("success", "Done", {}, { queue: "default" });
  let release!: () => void;
  const held = new Promise<void>((resolve) => (release = resolve));
  const slow = batch.jobs(async () => {
    const jid = (await client.push({ class: "Member", args: [1], queue: "members" }))!;
    await applyBatchEvent(client.redis, "success", batch.bid, jid);
    await held;
  });
  await new Promise((r) => setTimeout(r, 50)); // the slow block is open
  await batch.jobs(async () => {
    const jid = (await client.push({ class: "Member", args: [2], queue: "members" }))!;
    await applyBatchEvent(client.redis, "success", batch.bid, jid);
  });
  assert.deepEqual(await callbacks(), [], "the other block is still open");
  release();
  await slow;
  assert.deepEqual(
    (await callbacks()).map((c) => c.event),
    ["success"],
  );
});

test("callback options are data: a user's enqueued_at and placeholder texts stay; the job gets the fire time", async () => {
  client ??= newClient();
  const batch = new Batch({ client });
  const options = { enqueued_at: 5, note: '"$TSQ_STATUS$"', text: '"enqueued_at":1' };
  batch.on("success", "Done", options, { queue: "default" });
  const onCalledAt = Date.now() / 1000;
  let jid = "";
  await batch.jobs(async () => {
    jid = (await client.push({ class: "Member", args: [1], queue: "members" }))!;
  });
  // A fire time well after on() was called, so the two cannot be confused.
  await new Promise((r) => setTimeout(r, 1_100));
  const firedFrom = Date.now() / 1000;
  await applyBatchEvent(client.redis, "success", batch.bid, jid);
  const [job] = (await handle.redis.lrange("queue:default", 0, -1)).map(
    (j) => JSON.parse(j) as { class: string; args: [Record<string, unknown>, unknown]; enqueued_at: number },
  );
  assert.equal(job?.class, "Done");
  assert.deepEqual(job.args[1], options, "the user's options arrive as given");
  assert.equal(job.args[0].event, "success");
  assert.equal(job.args[0].bid, batch.bid);
  assert.ok(job.enqueued_at >= firedFrom - 0.001, `enqueued_at ${job.enqueued_at} is the fire time, not ${onCalledAt}`);
});

test("a bad callback class throws in on(), and a refusal never becomes an unhandled rejection", async () => {
  client ??= newClient();
  const unhandled: unknown[] = [];
  const onUnhandled = (reason: unknown) => unhandled.push(reason);
  process.on("unhandledRejection", onUnhandled);
  try {
    const batch = new Batch({ client });
    assert.throws(() => batch.on("success", "", {}), /class/i);
    assert.throws(() => batch.on("success", 42 as unknown as string, {}), /class/i);
    // Let any rejection left behind by on() surface.
    await new Promise((r) => setTimeout(r, 200));
    assert.deepEqual(unhandled, []);
  } finally {
    process.off("unhandledRejection", onUnhandled);
  }
});
