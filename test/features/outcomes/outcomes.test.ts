/**
 * Job outcomes in a real in-process worker on a private Redis: an opted-in job's result stored with
 * its TTL and announced on the stream; failed and dead statuses; a result over its cap stored as a
 * marker; a class that does not opt in sends no extra command; a wait that times out; subscribers by
 * class; progress in the work entry, written at most once a second.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { performance } from "node:perf_hooks";
import { useRedis } from "../../helpers/redis.js";
import { testLauncher } from "../../helpers/context.js";
import { eventually } from "../../helpers/tsqProcess.js";
import { Client } from "../../../src/client/Client.js";
import { WorkSet } from "../../../src/admin/api/WorkSet.js";
import {
  OutcomeWatcher,
  WaitTimeoutError,
  waitUntilFinished,
  type OutcomeEvent,
} from "../../../src/features/outcomes/index.js";
import { OUTCOMES, resultKey } from "../../../src/wire/keys.js";
import { DoomedJob, DoublingJob, HugeResultJob, PlainJob, ProgressJob, RetriedJob } from "../../jobs/outcomeJobs.js";

const handle = useRedis();
const CLASSES = [DoublingJob, DoomedJob, RetriedJob, HugeResultJob, PlainJob, ProgressJob];

type TestContext = { after(fn: () => unknown): void };

/** A started worker with every outcome class, stopped when the test ends (a leftover one would take the next test's jobs). */
async function worker(
  t: TestContext,
  overrides: Parameters<typeof testLauncher>[2] = {},
): Promise<ReturnType<typeof testLauncher>> {
  const launcher = testLauncher(handle.url, CLASSES, overrides);
  t.after(() => launcher.stop());
  await launcher.start();
  return launcher;
}

function client(t: TestContext): Client {
  const c = new Client({ redis: handle.url });
  t.after(() => c.close());
  return c;
}

test("a done job's result is stored as JSON with the class's TTL and announced on the stream", async (t) => {
  const c = client(t);
  await worker(t);
  const jid = (await c.push({ class: DoublingJob, args: [21] }))!;
  assert.deepEqual(await waitUntilFinished(jid, { timeout: 30, client: c }), {
    status: "done",
    result: { n: 21, doubled: 42 },
  });
  const ttl = await handle.redis.ttl(resultKey(jid));
  assert.ok(ttl > 590 && ttl <= 600, `TTL ${ttl} s is the class's 600 s`);
  const stored = JSON.parse((await handle.redis.get(resultKey(jid)))!) as Record<string, unknown>;
  assert.equal(stored.class, "DoublingJob");
  assert.equal(stored.queue, "default");
  const entries = await handle.redis.xrange(OUTCOMES, "-", "+");
  const mine = entries.find(([, fields]) => fields.includes(jid));
  assert.ok(mine, "the stream has the job's end");
  assert.deepEqual(mine[1], ["jid", jid, "class", "DoublingJob", "queue", "default", "status", "done"]);
});

test("failed (will retry) and dead (no retry) carry the error's class and message", async (t) => {
  const c = client(t);
  await worker(t);
  const [dead, failed] = await Promise.all([
    c.push({ class: DoomedJob, args: [7] }),
    c.push({ class: RetriedJob, args: [] }),
  ]);
  const watcher = new OutcomeWatcher({ client: c });
  t.after(() => watcher.close());
  const [d, f] = await Promise.all([dead!, failed!].map((jid) => watcher.wait(jid, { timeout: 30 })));
  assert.deepEqual(d, { status: "dead", error: { class: "RangeError", message: "no 7" } });
  assert.deepEqual(f, { status: "failed", error: { class: "TypeError", message: "try again" } });
  assert.equal(await handle.redis.zcard("retry"), 1, "the failed job waits for its retry");
});

test("a result over its cap is stored as a marker saying so", async (t) => {
  const c = client(t);
  await worker(t);
  const jid = (await c.push({ class: HugeResultJob, args: [] }))!;
  const outcome = await waitUntilFinished(jid, { timeout: 30, client: c });
  assert.equal(outcome.status, "done");
  assert.equal(outcome.result, undefined);
  assert.equal(outcome.error?.class, "ResultTooLarge");
  assert.match(outcome.error?.message ?? "", /1002 bytes of JSON, over the 100-byte cap/);
});

/** Calls of each Redis command since the last CONFIG RESETSTAT. */
async function commandCalls(): Promise<Map<string, number>> {
  const info = await handle.redis.info("commandstats");
  return new Map([...info.matchAll(/^cmdstat_([\w|]+):calls=(\d+)/gm)].map((m) => [m[1]!, Number(m[2])]));
}

async function runAll(c: Client, klass: typeof PlainJob | typeof DoublingJob, n: number): Promise<void> {
  await handle.redis.config("RESETSTAT");
  await c.pushMany(Array.from({ length: n }, (_, i) => ({ class: klass, args: [i] })));
}

test("a class that does not opt in sends no extra Redis command; an opted-in one one script call per job", async (t) => {
  const c = client(t);
  const N = 300;
  const ended = { n: 0 };
  const launcher = await worker(t, { concurrency: 5 });
  launcher.ctx.events.on("end", () => {
    ended.n++;
  });
  await runAll(c, PlainJob, N);
  await eventually(async () => ended.n === N, 30_000, "plain jobs ended");
  const afterPlain = await commandCalls();
  assert.equal(afterPlain.get("xadd") ?? 0, 0, "no stream entry for a plain job");
  assert.equal(afterPlain.get("set") ?? 0, 0, "no result key for a plain job");
  // The poller's scripts run a few times a second: far fewer than one per job.
  const scripts = (calls: Map<string, number>) => (calls.get("evalsha") ?? 0) + (calls.get("eval") ?? 0);
  assert.ok(scripts(afterPlain) < N / 5, `${scripts(afterPlain)} script calls for ${N} plain jobs`);

  ended.n = 0;
  await runAll(c, DoublingJob, N);
  await eventually(async () => ended.n === N, 30_000, "opted-in jobs ended");
  await eventually(async () => ((await commandCalls()).get("xadd") ?? 0) === N, 30_000, "one XADD per job");
  const opted = await commandCalls();
  assert.equal(opted.get("set"), N, "one SET per opted-in job");
  assert.ok(scripts(opted) >= N, "one script call per opted-in job");
});

test("a wait with no end in sight rejects with WaitTimeoutError after its timeout", async (t) => {
  const c = client(t);
  const started = performance.now();
  await assert.rejects(waitUntilFinished("no-such-jid", { timeout: 0.5, client: c }), (error: unknown) => {
    assert.ok(error instanceof WaitTimeoutError);
    assert.equal(error.jid, "no-such-jid");
    assert.match(error.message, /did not finish within 0\.5 s/);
    return true;
  });
  assert.ok(performance.now() - started >= 450, "it waited its timeout");
  await assert.rejects(waitUntilFinished("x", { timeout: -1, client: c }), /timeout \}\) must be seconds > 0, got -1/);
  await assert.rejects(waitUntilFinished("", { timeout: 1, client: c }), /jid must be a non-empty string/);
  // performAsync's null (a dropped push) is accepted by the types and refused by name.
  await assert.rejects(waitUntilFinished(null, { timeout: 1, client: c }), /jid is null, so no job was pushed/);
});

test("subscribers get the ends of the classes they name", async (t) => {
  const c = client(t);
  const watcher = new OutcomeWatcher({ client: c });
  t.after(() => watcher.close());
  const seen: OutcomeEvent[] = [];
  const unsubscribe = watcher.subscribe({ class: "DoomedJob" }, (event) => seen.push(event));
  const all: OutcomeEvent[] = [];
  watcher.subscribe({ queue: "default" }, (event) => all.push(event));
  await worker(t);
  const jids = await c.pushMany([
    { class: DoublingJob, args: [1] },
    { class: DoomedJob, args: [2] },
    { class: DoublingJob, args: [3] },
  ]);
  await eventually(async () => all.length === 3, 30_000, "three ends");
  assert.deepEqual(
    seen.map((e) => [e.jid, e.status, e.error?.class]),
    [[jids[1], "dead", "RangeError"]],
  );
  unsubscribe();
});

test("progress shows in the work entry while the job runs, written at most once a second", async (t) => {
  const c = client(t);
  // Heartbeats far apart, so what the Busy data shows comes from the progress writes.
  await worker(t, { heartbeatInterval: 3600 });
  await handle.redis.config("RESETSTAT");
  const jid = (await c.push({ class: ProgressJob, args: ["p", 500] }))!;
  const work = new WorkSet(handle.redis);
  const running = await eventually(
    async () => (await work.list()).find((w) => w.job.jid === jid && w.progress?.n === 500),
    30_000,
    "the last progress report in the work entry",
    50,
  );
  assert.deepEqual(running.progress?.data, { step: 500, of: 500 });
  const hsets = (await commandCalls()).get("hset") ?? 0;
  // 500 reports in one burst: the first written at once, the last when its second is up (×2 work keys).
  assert.ok(hsets <= 4, `${hsets} HSETs for 500 reports`);
  await handle.redis.set("p:go", "1");
  assert.equal((await waitUntilFinished(jid, { timeout: 30, client: c })).result, "finished");
});
