// What a concurrency limit costs per push and per job: a plain class beside limited ones, against a
// private redis-server, pushed with 100 in flight, then run by an in-process worker (concurrency 10; no
// network but loopback).
//
//   npm run bench:limits [-- --jobs 10000] [-- --repeat 3]
//
// A push of a limited class is one limit-slot-4.lua call ("admit") instead of push-jobs-2.lua: the job
// gets a free slot and goes to its queue, or parks. Cases: (a) plain; (b) limit 1000: the first 1,000
// pushes get a slot, the rest park; each job then enters on its slot and gives it back to the next parked
// job (two more slot calls); (c) limit 10 = the worker's concurrency; (d) limit 3, below the concurrency.
// No-op jobs, so the numbers are the overhead alone. Each cell is the median of the rounds, in µs of wall
// time per push or per job.
import { parseArgs } from "node:util";
import { Client } from "../../src/library/Client.js"; // every built-in feature, as an app's
import { configureLogger } from "../../src/platform/logger.js";
import { performance } from "node:perf_hooks";
import { cleanupAll, inFlight, installCleanupHandlers, medianOf, messageOf, startRedis, table } from "./lib.js";
import { drainCost } from "./lockCost.js";

const { values } = parseArgs({
  options: { jobs: { type: "string", default: "10000" }, repeat: { type: "string", default: "3" } },
});
const JOBS = Number(values.jobs);
const REPEAT = Number(values.repeat);
const CONCURRENCY = 10;

/** Runs performed in this round: parked jobs end without performing, so the worker's events over-count. */
let performed = 0;
let onPerformed: () => void = () => {};
function count(): void {
  if (++performed === JOBS) onPerformed();
}

export class PlainLimitBenchJob {
  perform(): void {
    count();
  }
}
export class WideLimitBenchJob {
  static concurrencyLimit = 1000;
  perform(): void {
    count();
  }
}
export class EqualLimitBenchJob {
  static concurrencyLimit = CONCURRENCY;
  perform(): void {
    count();
  }
}
export class NarrowLimitBenchJob {
  static concurrencyLimit = 3;
  perform(): void {
    count();
  }
}

type Klass = { name: string };

/** µs per push, JOBS pushed one by one with 100 in flight; each is queued or parked. */
async function pushCost(client: Client, klass: Klass): Promise<number> {
  await client.redis.flushdb();
  const t0 = performance.now();
  await inFlight(JOBS, (i) => client.push({ class: klass, args: [i] }));
  const us = ((performance.now() - t0) * 1000) / JOBS;
  const [queued, parked] = await Promise.all([
    client.redis.llen("queue:default"),
    client.redis.llen(`tsq:limit-parked:${klass.name}`),
  ]);
  if (queued + parked !== JOBS) throw new Error(`${klass.name}: ${queued} queued + ${parked} parked of ${JOBS}`);
  return us;
}

/** µs per job: JOBS queued (or parked at push) first, then drained by an in-process worker. */
async function jobCost(url: string, client: Client, klass: Klass): Promise<number> {
  await client.redis.flushdb();
  await client.pushBulk({ class: klass, args: Array.from({ length: JOBS }, (_, i) => [i]) });
  // Counted by perform, not by "end" events: a parked or rescheduled job ends without performing.
  const us = await drainCost(url, klass, JOBS, CONCURRENCY, () => {
    performed = 0;
    return new Promise<void>((resolve) => (onPerformed = resolve));
  });
  const left = (await client.redis.keys("tsq:limit-parked:*")).length;
  if (left !== 0) throw new Error(`${klass.name}: jobs left parked after every job ran`);
  return us;
}

const median = medianOf;

installCleanupHandlers();
configureLogger({ level: "silent" }); // each parked job logs a line; the bench measures Redis, not the terminal
try {
  const { url } = await startRedis();
  // Room for every job parked at push, whatever --jobs says.
  const client = new Client({ redis: url, concurrencyLimits: { maxParked: Math.max(JOBS, 10_000) } });
  const cases: [string, Klass][] = [
    ["plain class", PlainLimitBenchJob],
    ["limit 1000 (> worker concurrency)", WideLimitBenchJob],
    [`limit ${CONCURRENCY} (= worker concurrency)`, EqualLimitBenchJob],
    ["limit 3 (< worker concurrency)", NarrowLimitBenchJob],
  ];
  const rows = cases.map(([label]) => ({ label, push: [] as number[], job: [] as number[] }));
  for (let round = 0; round < REPEAT; round++) {
    for (const [i, [, klass]] of cases.entries()) {
      rows[i]!.push.push(await pushCost(client, klass));
      rows[i]!.job.push(await jobCost(url, client, klass));
    }
  }
  await client.close();
  const plainPush = median(rows[0]!.push);
  const plainJob = median(rows[0]!.job);
  const versus = (us: number, plain: number) => `${us >= plain ? "+" : ""}${(us - plain).toFixed(1)} µs`;
  console.log(
    `${JOBS.toLocaleString("en-US")} no-op jobs per cell, worker concurrency ${CONCURRENCY}, median of ${REPEAT}`,
  );
  console.log(
    table(
      ["case", "µs per push", "vs plain", "µs per job", "vs plain"],
      rows.map(({ label, push, job }) => {
        const [pushUs, jobUs] = [median(push), median(job)];
        return [label, pushUs.toFixed(1), versus(pushUs, plainPush), jobUs.toFixed(1), versus(jobUs, plainJob)];
      }),
    ),
  );
} catch (error) {
  console.error(`bench:limits failed: ${messageOf(error)}`);
  process.exitCode = 1;
} finally {
  await cleanupAll();
}
