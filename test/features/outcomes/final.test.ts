/**
 * `waitUntilFinished(jid, { final: true })` in a real in-process worker on a private Redis: it skips the
 * `failed` of each retried attempt and resolves at the job's last end (`done`, or `dead` when its
 * retries run out), while a wait without it resolves at the first failure; an end that happened
 * before the wait began resolves it at once; its timeout still applies.
 *
 * Retries are made due at once with the Retries page's "Add to queue" (RetrySet), not waited out: a
 * retry's delay has Sidekiq's jitter, up to 10 × (retry_count + 1) s. Not "Retry now": it lowers
 * retry_count by one, as Sidekiq's, so the attempts would never run out.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { performance } from "node:perf_hooks";
import { useRedis } from "../../helpers/redis.js";
import { testLauncher } from "../../helpers/context.js";
import { eventually } from "../../helpers/tsqProcess.js";
import { Client } from "../../../src/client/Client.js";
import { RetrySet } from "../../../src/admin/api/sets.js";
import {
  OutcomeWatcher,
  WaitTimeoutError,
  waitUntilFinished,
  type JobResult,
  type OutcomeStatus,
} from "../../../src/features/outcomes/index.js";
import { DoomedJob, ExhaustedJob, FlakyJob, RetriedJob } from "../../jobs/outcomeJobs.js";

const handle = useRedis();

type TestContext = { after(fn: () => unknown): void };

/** A worker, a client and a watcher that records every end's status, all closed when the test ends. */
async function setUp(t: TestContext): Promise<{ client: Client; watcher: OutcomeWatcher; ends: OutcomeStatus[] }> {
  const launcher = testLauncher(handle.url, [FlakyJob, ExhaustedJob, DoomedJob, RetriedJob], {
    pollIntervalAverage: 0.2, // seconds
  });
  t.after(() => launcher.stop());
  await launcher.start();
  const client = new Client({ redis: handle.url });
  t.after(() => client.close());
  const watcher = new OutcomeWatcher({ client });
  t.after(() => watcher.close());
  const ends: OutcomeStatus[] = [];
  watcher.subscribe({}, (event) => ends.push(event.status));
  return { client, watcher, ends };
}

/** Resolves with `wait`'s outcome and the ends seen when it resolved, pressing "Add to queue" meanwhile. */
async function retryingUntil(
  client: Client,
  jid: string,
  wait: Promise<JobResult>,
  ends: OutcomeStatus[],
): Promise<{ outcome: JobResult; endsThen: OutcomeStatus[] }> {
  let resolved: { outcome: JobResult; endsThen: OutcomeStatus[] } | undefined;
  void wait.then((outcome) => (resolved = { outcome, endsThen: [...ends] }));
  const retries = new RetrySet(handle.redis, { client });
  return eventually(
    async () => {
      if (!resolved) await (await retries.findJob(jid))?.addToQueue();
      return resolved;
    },
    30_000,
    `the final end of ${jid}`,
    50,
  );
}

test("final: true skips two retried failures and resolves done; without it the first failure resolves", async (t) => {
  const { client, watcher, ends } = await setUp(t);
  const jid = (await client.push({ class: FlakyJob, args: [] }))!;
  const final = watcher.wait(jid, { timeout: 30, final: true });
  const first = await watcher.wait(jid, { timeout: 30 });
  assert.deepEqual(first, { status: "failed", error: { class: "Error", message: "attempt 1 fails" } });

  const { outcome, endsThen } = await retryingUntil(client, jid, final, ends);
  assert.deepEqual(outcome, { status: "done", result: "attempt 3 worked" });
  assert.deepEqual(endsThen, ["failed", "failed", "done"], "it resolved after the third end, not before");

  // Its end is kept: a later wait, final or not, resolves at once.
  const started = performance.now();
  assert.equal((await waitUntilFinished(jid, { timeout: 5, final: true, client })).status, "done");
  assert.ok(performance.now() - started < 2000, "an end from before the wait resolves it at once");
});

test("final: true resolves dead when the retries run out, and dead at once for retry: false", async (t) => {
  const { client, watcher, ends } = await setUp(t);
  const [exhausted, doomed] = await client.pushMany([
    { class: ExhaustedJob, args: [] },
    { class: DoomedJob, args: [3] },
  ]);
  assert.deepEqual(await watcher.wait(doomed!, { timeout: 30, final: true }), {
    status: "dead",
    error: { class: "RangeError", message: "no 3" },
  });
  const { outcome } = await retryingUntil(
    client,
    exhausted!,
    watcher.wait(exhausted!, { timeout: 30, final: true }),
    ends,
  );
  assert.deepEqual(outcome, { status: "dead", error: { class: "RangeError", message: "never works" } });
  assert.equal(ends.filter((status) => status === "failed").length, 1, "one retried failure was skipped");
});

test("final: true still times out, saying a retry is pending; a bad value is refused", async (t) => {
  const { client, watcher } = await setUp(t);
  const jid = (await client.push({ class: RetriedJob, args: [] }))!; // retried in 15 s or more
  assert.equal((await watcher.wait(jid, { timeout: 30 })).status, "failed");
  const started = performance.now();
  await assert.rejects(watcher.wait(jid, { timeout: 0.5, final: true }), (error: unknown) => {
    assert.ok(error instanceof WaitTimeoutError);
    assert.equal(error.retryPending, true);
    assert.match(error.message, /did not end for good within 0\.5 s .*a retry is pending/);
    return true;
  });
  assert.ok(performance.now() - started >= 450, "it waited its timeout");
  await assert.rejects(
    watcher.wait(jid, { timeout: 1, final: "yes" as unknown as boolean }),
    /final must be true or false/,
  );
});
