/**
 * Progress events in a real worker on a private Redis: `worker.on("job:progress")` for every report in
 * the job's process; an opted-in job's reports on the outcomes stream, seen by a subscriber on its own
 * connections in order and before the end; a burst of 10,000 reports writing two entries; a class that
 * does not opt in writing none; hostile stream entries ignored.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { useRedis } from "../../helpers/redis.js";
import { eventually } from "../../helpers/tsqProcess.js";
import { Client } from "../../../src/client/Client.js";
import { Worker, type JobProgressInfo } from "../../../src/library/Worker.js";
import { OutcomeWatcher, type OutcomeEvent, type ProgressEvent } from "../../../src/features/outcomes/index.js";
import { OUTCOMES } from "../../../src/wire/keys.js";
import { DoublingJob, PlainProgressJob, SpamJob, StepsJob } from "../../jobs/outcomeJobs.js";

const handle = useRedis();

type TestContext = { after(fn: () => unknown): void };

async function worker(t: TestContext): Promise<Worker> {
  const w = new Worker({
    redis: handle.url,
    jobs: [DoublingJob, PlainProgressJob, SpamJob, StepsJob],
    queues: ["default"],
    concurrency: 2,
  });
  t.after(() => w.stop({ timeout: 5 }));
  await w.start();
  return w;
}

/** A watcher on a Client of its own (its own connections, as in another process), closed after the test. */
function watcher(t: TestContext): OutcomeWatcher {
  const client = new Client({ redis: handle.url });
  const w = new OutcomeWatcher({ client });
  t.after(async () => {
    await w.close();
    await client.close();
  });
  return w;
}

function pusher(t: TestContext): Client {
  const client = new Client({ redis: handle.url });
  t.after(() => client.close());
  return client;
}

/** The events of `jid` as [status, progress?, data?] rows, for comparing whole sequences. */
function rows(events: (OutcomeEvent | ProgressEvent)[], jid: string): unknown[][] {
  return events
    .filter((e) => e.jid === jid)
    .map((e) => (e.status === "progress" ? ["progress", e.progress, e.data] : [e.status]));
}

async function commandCalls(): Promise<Map<string, number>> {
  const info = await handle.redis.info("commandstats");
  return new Map([...info.matchAll(/^cmdstat_([\w|]+):calls=(\d+)/gm)].map((m) => [m[1]!, Number(m[2])]));
}

test("a subscriber on its own connections sees an opted-in job's progress in order, then its end", async (t) => {
  const events: (OutcomeEvent | ProgressEvent)[] = [];
  const ends: OutcomeEvent[] = [];
  const w = watcher(t);
  w.subscribe({ class: "StepsJob", progress: true }, (event) => events.push(event));
  w.subscribe({ class: "StepsJob" }, (event) => ends.push(event)); // ends only, as before
  await worker(t);
  // Hostile entries first: no jid, a progress that is no number, data that is no JSON.
  await handle.redis.xadd(OUTCOMES, "*", "class", "StepsJob", "queue", "default", "progress", "1");
  await handle.redis.xadd(OUTCOMES, "*", "jid", "h1", "class", "StepsJob", "queue", "default", "progress", "many");
  await handle.redis.xadd(
    OUTCOMES,
    "*",
    "jid",
    "h2",
    "class",
    "StepsJob",
    "queue",
    "default",
    "progress",
    "7",
    "data",
    "{no",
  );
  const jid = (await pusher(t).push({ class: StepsJob, args: [] }))!;
  await eventually(async () => ends.length === 1, 30_000, "the job's end");
  assert.deepEqual(rows(events, "h2"), [["progress", 7, undefined]], "bad data is left out, the report kept");
  assert.equal(events.filter((e) => e.jid === "h1").length, 0, "a progress that is no number is ignored");
  assert.deepEqual(rows(events, jid), [
    ["progress", 1, { step: "read" }],
    ["progress", 2, { step: "sum" }],
    ["progress", 3, undefined],
    ["done"],
  ]);
  assert.deepEqual(rows(ends, jid), [["done"]], "a subscriber without `progress` gets the end only");
  const event = events.find((e) => e.jid === jid)!;
  assert.equal(event.class, "StepsJob");
  assert.equal(event.queue, "default");
});

/** A progress subscriber on its own connections, a worker's local progress events, Redis' stats reset. */
async function listening(t: TestContext) {
  const events: (OutcomeEvent | ProgressEvent)[] = [];
  watcher(t).subscribe({ progress: true }, (event) => events.push(event));
  const w = await worker(t);
  const local: JobProgressInfo[] = [];
  w.on("job:progress", (info) => local.push(info));
  await handle.redis.config("RESETSTAT");
  return { events, local };
}

test("10,000 reports in a burst: every one a local job:progress event, two stream entries", async (t) => {
  const { events, local } = await listening(t);
  const jid = (await pusher(t).push({ class: SpamJob, args: [10_000] }))!;
  await eventually(async () => events.some((e) => e.status === "done"), 30_000, "the job's end");
  assert.equal(local.length, 10_000, "one local event per report");
  assert.deepEqual(local[0], { jid, class: "SpamJob", queue: "default", progress: 1 });
  assert.equal(local.at(-1)?.progress, 10_000);
  // The first report at once, the last as the job ends (within its second), then the end.
  assert.deepEqual(rows(events, jid), [["progress", 1, undefined], ["progress", 10_000, undefined], ["done"]]);
  assert.equal(await handle.redis.xlen(OUTCOMES), 3);
  // Redis counts the XADD inside the end's script too.
  assert.equal((await commandCalls()).get("xadd"), 3, "two XADDs for 10,000 reports, one for the end");
});

test("a class that does not opt in: local events only, nothing on the stream", async (t) => {
  const { events, local } = await listening(t);
  const c = pusher(t);
  const plain = (await c.push({ class: PlainProgressJob, args: [100] }))!;
  await eventually(async () => local.length === 100, 30_000, "the plain job's reports");
  assert.deepEqual(local[99], {
    jid: plain,
    class: "PlainProgressJob",
    queue: "default",
    progress: 100,
    data: { i: 100 },
  });
  // An opted-in job after it: once its end is seen, the plain job's entries would have been too.
  const opted = (await c.push({ class: DoublingJob, args: [1] }))!;
  await eventually(async () => events.some((e) => e.jid === opted), 30_000, "the opted-in job's end");
  assert.deepEqual(rows(events, plain), [], "no event of the plain job");
  assert.equal((await commandCalls()).get("xadd"), 1, "the one XADD is the opted-in job's end (in its script)");
  assert.equal(await handle.redis.xlen(OUTCOMES), 1, "the stream holds the opted-in job's end only");
});
