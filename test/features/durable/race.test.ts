/**
 * A signal that lands at a wait's deadline, 200 times: the deadline and the signals are arranged so the
 * poller's move of each due job (its timeout) and the signal's push race within the same few
 * milliseconds. Each job must see the signal or the timeout, never both and never neither: one
 * outcome recorded, two executions (the park, then the wake), nothing left parked.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { setTimeout as sleep } from "node:timers/promises";
import { useRedis } from "../../helpers/redis.js";
import { testLauncher } from "../../helpers/context.js";
import { eventually } from "../../helpers/tsqProcess.js";
import { signal } from "../../../src/features/durable/signal.js";
import { RaceJob } from "../../jobs/durableEdgeJobs.js";

const handle = useRedis();
const JOBS = 200;
/**
 * Milliseconds over which the signals are spread, from LEAD_MS before the deadline: the poller moves the
 * due jobs at the deadline, and each moved job's run records its timeout a few ms later, so the signals
 * land before the move, between the move and the run, and after the run.
 */
const SPREAD_MS = 2000;
const LEAD_MS = 50;

test("a signal at the wait's deadline is delivered or times out, never both, never neither (200 races)", async (t) => {
  const launcher = testLauncher(handle.url, [RaceJob], { concurrency: 10, pollIntervalAverage: 0.2 });
  await launcher.start();
  t.after(() => launcher.stop());
  const starts = new Map<string, number>();
  launcher.ctx.events.on("start", (job) => starts.set(job.jid, (starts.get(job.jid) ?? 0) + 1));
  // The deadline is a whole second far enough ahead for all 200 to park first. How long parking takes
  // depends on the machine's load, so a round whose jobs are not all parked 50 ms before the deadline
  // is let run out (each job times out) and the race starts again with a longer lead.
  let key = "";
  let deadlineMs = 0;
  let jids: string[] = [];
  for (const leadSeconds of [4, 10, 30]) {
    key = `race${leadSeconds}`;
    deadlineMs = (Math.ceil(Date.now() / 1000) + leadSeconds) * 1000;
    jids = [];
    for (let i = 0; i < JOBS; i++)
      jids.push((await launcher.ctx.client.push({ class: RaceJob, args: [key, `${key}:${i}`, deadlineMs] }))!);
    const parked = await eventually(
      async () => {
        if ((await handle.redis.zcard("schedule")) === JOBS) return "parked";
        return Date.now() >= deadlineMs - LEAD_MS ? "late" : undefined;
      },
      leadSeconds * 1000 + 5_000,
      "all parked, or the deadline reached",
      50,
    );
    if (parked === "parked" && Date.now() < deadlineMs - LEAD_MS) break;
    t.diagnostic(`200 jobs did not park within ${leadSeconds} s; the race again with a longer lead`);
    await eventually(async () => (await handle.redis.scard(`${key}:done`)) === JOBS, 60_000, "the round ran out", 50);
    await eventually(async () => (await handle.redis.zcard("schedule")) === 0, 30_000, "nothing parked", 50);
  }
  assert.ok(Date.now() < deadlineMs - LEAD_MS, "parked before the race starts");

  // Signal i goes out at deadline - 50 ms + i * 10 ms: across the moment the poller moves them, and
  // over the next two seconds as the moved jobs run (and time out) on a busy machine.
  await sleep(deadlineMs - LEAD_MS - Date.now());
  const sent: Promise<number>[] = [];
  const t0 = Date.now();
  for (let i = 0; i < JOBS; i++) {
    const due = t0 + (i * SPREAD_MS) / JOBS;
    if (due > Date.now()) await sleep(due - Date.now());
    sent.push(signal(`${key}:${i}`, i, { redis: handle.redis }));
  }
  await Promise.all(sent);

  await eventually(async () => (await handle.redis.scard(`${key}:done`)) === JOBS, 30_000, "every job ended", 50);
  let delivered = 0;
  for (const [i, jid] of jids.entries()) {
    const seen = await handle.redis.lrange(`${key}:seen:${jid}`, 0, -1);
    assert.equal(seen.length, 1, `job ${i} recorded exactly one outcome: ${JSON.stringify(seen)}`);
    assert.ok(seen[0] === `got:${i}` || seen[0] === "timeout", `job ${i}: its own signal or the timeout (${seen[0]})`);
    if (seen[0] !== "timeout") delivered++;
    assert.equal(starts.get(jid), 2, `job ${i} ran twice (park, wake), not once more`);
  }
  // Settle: no copy left to run again, nothing parked or indexed.
  await sleep(1000);
  assert.equal(await handle.redis.zcard("schedule"), 0, "nothing left in schedule");
  assert.equal(await handle.redis.llen("queue:default"), 0, "nothing left queued");
  for (const jid of jids) assert.equal(starts.get(jid), 2, "no late copy ran");
  t.diagnostic(`${delivered} of ${JOBS} signals delivered, ${JOBS - delivered} timed out`);
});
