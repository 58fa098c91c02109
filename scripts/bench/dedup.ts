// What the lock core's APIs cost: per push and per job, an idempotent class (deduplication) and a unique
// class (Enterprise's uniqueFor) beside a plain one, against a private redis-server, in one process (no
// network but loopback).
//
//   npm run bench:dedup [-- --jobs 20000] [-- --repeat 3]
//
// Push: `--jobs` pushes, 100 in flight, of (a) a plain class, (b) an idempotent class with distinct
// args (every push takes a new lock: one lock-acquire-2.lua call more), (c) the same idempotent job
// every time (all but the first dropped); the same two for a unique class. Job: the same number of no-op
// jobs run by an in-process worker (concurrency 10), plain vs until_executing vs until_executed vs unique
// until start vs unique until success (one HDEL each). Each cell is the median of the rounds, in µs of
// wall time per push or per job.
import { parseArgs } from "node:util";
import { Client } from "../../src/library/Client.js"; // every built-in feature, as an app's
import { configureLogger } from "../../src/platform/logger.js";
import { jobCost, pushCost } from "./lockCost.js";
import { cleanupAll, IN_FLIGHT, installCleanupHandlers, medianOf, messageOf, startRedis, table } from "./lib.js";

const { values } = parseArgs({
  options: { jobs: { type: "string", default: "20000" }, repeat: { type: "string", default: "3" } },
});
const JOBS = Number(values.jobs);
const REPEAT = Number(values.repeat);

export class PlainBenchJob {
  perform(): void {}
}
export class ExecutingBenchJob {
  static idempotent = true;
  perform(): void {}
}
export class ExecutedBenchJob {
  static idempotent = true;
  static deduplicate = { strategy: "until_executed" };
  perform(): void {}
}

export class UniqueBenchJob {
  static options = { uniqueFor: 600 };
  perform(): void {}
}
export class UniqueStartBenchJob {
  static options = { uniqueFor: 600, uniqueUntil: "start" };
  perform(): void {}
}

const median = medianOf;

installCleanupHandlers();
// Each dropped or refused push logs one line (job_status "deduplicated", "not_unique"); silenced so the bench measures Redis and
// the middleware, not the terminal.
configureLogger({ level: "silent" });
try {
  const { url } = await startRedis();
  const client = new Client({ redis: url });
  const rows: [string, number[]][] = [
    ["push: plain class", []],
    ["push: idempotent, distinct args (lock taken)", []],
    ["push: idempotent, same args (dropped)", []],
    ["job: plain class", []],
    ["job: until_executing (release at start)", []],
    ["job: until_executed (release at end)", []],
    ["push: unique, distinct args (lock taken)", []],
    ["push: unique, same args (refused)", []],
    ["job: unique until start", []],
    ["job: unique until success", []],
  ];
  for (let round = 0; round < REPEAT; round++) {
    rows[0]![1].push(await pushCost(client, PlainBenchJob, JOBS, false));
    rows[1]![1].push(await pushCost(client, ExecutingBenchJob, JOBS, false));
    rows[2]![1].push(await pushCost(client, ExecutingBenchJob, JOBS, true));
    rows[3]![1].push(await jobCost(url, client, PlainBenchJob, JOBS, "tsq:lock:*"));
    rows[4]![1].push(await jobCost(url, client, ExecutingBenchJob, JOBS, "tsq:lock:*"));
    rows[5]![1].push(await jobCost(url, client, ExecutedBenchJob, JOBS, "tsq:lock:*"));
    rows[6]![1].push(await pushCost(client, UniqueBenchJob, JOBS, false));
    rows[7]![1].push(await pushCost(client, UniqueBenchJob, JOBS, true));
    rows[8]![1].push(await jobCost(url, client, UniqueStartBenchJob, JOBS, "tsq:lock:*"));
    rows[9]![1].push(await jobCost(url, client, UniqueBenchJob, JOBS, "tsq:lock:*"));
  }
  await client.close();
  const base = { push: median(rows[0]![1]), job: median(rows[3]![1]) };
  console.log(
    `${JOBS.toLocaleString("en-US")} pushes / jobs per cell, ${IN_FLIGHT} pushes in flight, worker concurrency 10, median of ${REPEAT}`,
  );
  console.log(
    table(
      ["case", "µs each", "per second", "vs plain"],
      rows.map(([label, xs]) => {
        const us = median(xs);
        const plain = label.startsWith("push") ? base.push : base.job;
        const perSecond = Math.round(1e6 / us).toLocaleString("en-US");
        return [label, us.toFixed(1), perSecond, `${us >= plain ? "+" : ""}${(us - plain).toFixed(1)} µs`];
      }),
    ),
  );
} catch (error) {
  console.error(`bench:dedup failed: ${messageOf(error)}`);
  process.exitCode = 1;
} finally {
  await cleanupAll();
}
