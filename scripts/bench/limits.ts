// What a concurrency limit costs per job: a plain class beside limited ones, against a private
// redis-server, run by an in-process worker (concurrency 10; no network but loopback).
//
//   npm run bench:limits [-- --jobs 10000] [-- --repeat 3]
//
// Cases: (a) plain; (b) limit 1000, never reached: each job takes and gives back a slot (two
// limit-slot-4.lua calls); (c) limit 10 = the worker's concurrency, rarely reached; (d) limit 3, below
// the concurrency: most jobs park once and are resumed through their queue (a second fetch and slot
// call). No-op jobs, so the numbers are the overhead alone. Each cell is the median of the rounds, in
// µs of wall time per job.
import { parseArgs } from "node:util";
import { Client } from "../../src/client/Client.js";
import { configureLogger } from "../../src/logger.js";
import { cleanupAll, installCleanupHandlers, medianOf, messageOf, startRedis, table } from "./lib.js";
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

/** µs per job: JOBS queued first, then drained by an in-process worker. */
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
  const client = new Client({ redis: url });
  const cases: [string, Klass][] = [
    ["plain class", PlainLimitBenchJob],
    ["limit 1000 (never reached)", WideLimitBenchJob],
    [`limit ${CONCURRENCY} (= worker concurrency)`, EqualLimitBenchJob],
    ["limit 3 (most jobs park and resume)", NarrowLimitBenchJob],
  ];
  const rows = cases.map(([label]) => [label, [] as number[]] as const);
  for (let round = 0; round < REPEAT; round++) {
    for (const [i, [, klass]] of cases.entries()) rows[i]![1].push(await jobCost(url, client, klass));
  }
  await client.close();
  const plain = median(rows[0]![1]);
  console.log(
    `${JOBS.toLocaleString("en-US")} no-op jobs per cell, worker concurrency ${CONCURRENCY}, median of ${REPEAT}`,
  );
  console.log(
    table(
      ["case", "µs per job", "vs plain"],
      rows.map(([label, xs]) => {
        const us = median(xs);
        return [label, us.toFixed(1), `${us >= plain ? "+" : ""}${(us - plain).toFixed(1)} µs`];
      }),
    ),
  );
} catch (error) {
  console.error(`bench:limits failed: ${messageOf(error)}`);
  process.exitCode = 1;
} finally {
  await cleanupAll();
}
