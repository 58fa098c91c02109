/**
 * Outcomes across real worker processes: 1,000 jobs run by two `tsq` processes, every outcome received
 * by waits begun while about half of them had already ended (one shared OutcomeWatcher, and standalone
 * waitUntilFinished calls); a running job's progress shown by `tsqctl processes` (text and JSON) and on
 * the dashboard's Busy page, and its reports and end seen by a subscriber in the test's process.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { useRedis } from "../../helpers/redis.js";
import { ROOT, eventually, startTsq, type TsqProcess } from "../../helpers/tsqProcess.js";
import { WebSession, startWeb } from "../../admin/web/webHelpers.js";
import { Client } from "../../../src/client/Client.js";
import {
  OutcomeWatcher,
  waitUntilFinished,
  type JobResult,
  type OutcomeEvent,
  type ProgressEvent,
} from "../../../src/features/outcomes/index.js";
import { OUTCOMES, resultKey } from "../../../src/wire/keys.js";
import { DoomedJob, DoublingJob, ProgressJob } from "../../jobs/outcomeJobs.js";
import { tsqctl as runTsqctl } from "../../helpers/tsqctl.js";

const handle = useRedis();
const JOBS = join(ROOT, "dist/test/jobs/outcomeJobs.js");

function worker(): TsqProcess {
  return startTsq(["-r", JOBS, "-c", "5", "-q", "default"], { REDIS_URL: handle.url, TSQ_LOG_LEVEL: "warn" });
}

async function tsqctl(...args: string[]): Promise<string> {
  const run = await runTsqctl([...args, "--redis-url", handle.url], process.env, { stripFinalNewline: false });
  assert.equal(run.exitCode, 0, run.stderr);
  return run.stdout;
}

test(
  "1,000 jobs on two processes: every outcome received, including ends before the wait",
  { timeout: 240_000 },
  async (t) => {
    const client = new Client({ redis: handle.url });
    t.after(() => client.close());
    const TOTAL = 1000;
    // Every tenth job dies (no retry); the rest return their number doubled.
    const items = Array.from({ length: TOTAL }, (_, i) =>
      i % 10 === 3 ? { class: DoomedJob, args: [i] } : { class: DoublingJob, args: [i] },
    );
    const jids = (await client.pushMany(items)) as string[];
    assert.equal(new Set(jids).size, TOTAL);
    const workers = [worker(), worker()];
    t.after(() => Promise.all(workers.map((w) => w.stop(10_000))));

    await eventually(async () => (await handle.redis.xlen(OUTCOMES)) >= TOTAL / 2, 120_000, "half the jobs ended", 20);
    const endedBefore = (await handle.redis.mget(jids.map(resultKey))).filter((text) => text !== null).length;

    const watcher = new OutcomeWatcher({ client });
    t.after(() => watcher.close());
    // The first 20 wait alone (a connection each), the rest share the watcher's one.
    const outcomes = await Promise.all(
      jids.map((jid, i) =>
        i < 20 ? waitUntilFinished(jid, { timeout: 120, client }) : watcher.wait(jid, { timeout: 120 }),
      ),
    );
    assert.ok(endedBefore >= TOTAL / 2 && endedBefore < TOTAL, `${endedBefore} jobs had ended before the waits began`);
    const wrong = outcomes.flatMap((outcome: JobResult, i) => {
      const expected: JobResult =
        i % 10 === 3
          ? { status: "dead", error: { class: "RangeError", message: `no ${i}` } }
          : { status: "done", result: { n: i, doubled: i * 2 } };
      try {
        assert.deepEqual(outcome, expected);
        return [];
      } catch {
        return [`job ${i}: ${JSON.stringify(outcome)}`];
      }
    });
    assert.deepEqual(wrong, [], "every outcome is the job's own");
    assert.equal(await handle.redis.xlen(OUTCOMES), TOTAL, "one stream entry per job");
    for (const w of workers)
      assert.equal(w.child.exitCode, null, `a worker is still running:\n${w.output().slice(-2000)}`);
  },
);

test(
  "a running job's progress shows in tsqctl processes, on the Busy page and to a subscriber in this process",
  { timeout: 120_000 },
  async (t) => {
    const client = new Client({ redis: handle.url });
    t.after(() => client.close());
    const watcher = new OutcomeWatcher({ client });
    t.after(() => watcher.close());
    const events: (OutcomeEvent | ProgressEvent)[] = [];
    watcher.subscribe({ class: "ProgressJob", progress: true }, (event) => events.push(event));
    const w = worker();
    t.after(() => w.stop(10_000));
    const jid = (await client.push({ class: ProgressJob, args: ["fleet", 40] }))!;

    const text = await eventually(
      async () => {
        const out = await tsqctl("processes");
        return out.includes(jid) && /PROGRESS/.test(out) && / 40 \{"step":40,"of":40\}/.test(out) ? out : undefined;
      },
      60_000,
      "tsqctl processes shows the job's last progress",
      200,
    );
    assert.match(text, /1 process/);
    const json = JSON.parse(await tsqctl("processes", "--json")) as { work: { jid: string; progress?: unknown }[] };
    const progress = json.work.find((work) => work.jid === jid)?.progress as Record<string, unknown> | undefined;
    assert.deepEqual({ ...progress, at: typeof progress?.at }, { n: 40, data: { step: 40, of: 40 }, at: "number" });

    const web = await startWeb({ redis: handle.redis });
    t.after(() => web.stop());
    const body = (await new WebSession(web.url).get("/busy")).body;
    assert.match(body, /<th>Progress<\/th>/);
    assert.match(body, />40<\/span> <code>\{&quot;step&quot;:40,&quot;of&quot;:40\}<\/code>/);

    await handle.redis.set("fleet:go", "1");
    assert.deepEqual(await waitUntilFinished(jid, { timeout: 60, client }), { status: "done", result: "finished" });
    // The worker process's first report at once, its last when its second was up, then the end.
    await eventually(async () => events.some((e) => e.status === "done"), 30_000, "the subscriber sees the end");
    assert.deepEqual(
      events.map((e) => (e.status === "progress" ? [e.jid, e.progress, e.data] : [e.jid, e.status])),
      [
        [jid, 1, { step: 1, of: 40 }],
        [jid, 40, { step: 40, of: 40 }],
        [jid, "done"],
      ],
    );
  },
);
