/**
 * waitUntilFinished with a timeout past setTimeout's 24.8 days stays pending (Node would have fired its
 * timer after 1 ms: the wait rejected at once) until the job ends; a timeout of 0, negative, NaN or past
 * 10 years is refused with the option named.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { setTimeout as sleep } from "node:timers/promises";
import { useRedis } from "../../helpers/redis.js";
import { testLauncher } from "../../helpers/context.js";
import { Client } from "../../../src/client/Client.js";
import { waitUntilFinished } from "../../../src/features/outcomes/index.js";
import { DoublingJob } from "../../jobs/outcomeJobs.js";

const handle = useRedis();

test("a wait of 30 days (and one of a year) stays pending until the job ends, then resolves", async (t) => {
  const client = new Client({ redis: handle.url });
  t.after(() => client.close());
  const jid = "long0000000000000000wait";
  let settled: string | undefined;
  const month = waitUntilFinished(jid, { timeout: 2_592_000, client });
  const year = waitUntilFinished(jid, { timeout: 365 * 86_400, client });
  for (const wait of [month, year])
    wait.then(
      () => (settled ??= "resolved"),
      (e: Error) => (settled ??= e.message),
    );
  await sleep(1_000);
  assert.equal(settled, undefined, "the wait settled before the job ran");
  const launcher = testLauncher(handle.url, [DoublingJob]);
  t.after(() => launcher.stop());
  await launcher.start();
  await client.push({ class: DoublingJob, args: [4], jid });
  const expected = { status: "done", result: { n: 4, doubled: 8 } };
  assert.deepEqual(await month, expected);
  assert.deepEqual(await year, expected);
});

test("a timeout of 0, negative, NaN or past 10 years is refused, naming the option", async (t) => {
  const client = new Client({ redis: handle.url });
  t.after(() => client.close());
  const wait = (timeout: number) => waitUntilFinished("x", { timeout, client });
  await assert.rejects(wait(0), /waitUntilFinished\(jid, \{ timeout \}\) must be seconds > 0, got 0/);
  await assert.rejects(wait(-1), /must be seconds > 0, got -1/);
  await assert.rejects(wait(Number.NaN), /must be a number of seconds > 0, got NaN/);
  await assert.rejects(wait(2_592_000_000), /over the longest allowed, 315360000 s \(10 years\)/);
});
