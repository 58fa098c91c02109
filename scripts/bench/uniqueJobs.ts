// What sidekiq-unique-jobs interop costs, per push and per job, beside a plain class, against a private
// redis-server, in one process (loopback only).
//
//   npm run bench:suj [-- --jobs 10000] [-- --repeat 3]
//
// Push: `--jobs` pushes, 100 in flight, of a plain class, of an until_executed class with distinct args
// (digest + suj-lock-7.lua per push), and of the same until_executed job every time (all but the first
// refused). Job: the same number of no-op jobs drained by an in-process worker (concurrency 10): plain,
// until_executed (HEXISTS at start + suj-unlock-6.lua at the end), while_executing (run lock taken and
// released around each run). Each cell is the median of the rounds.
import { parseArgs } from "node:util";
import { Client } from "../../src/library/Client.js"; // every built-in feature, as an app's
import { configureLogger } from "../../src/platform/logger.js";
import { jobCost, pushCost } from "./lockCost.js";
import { cleanupAll, IN_FLIGHT, installCleanupHandlers, medianOf, messageOf, startRedis, table } from "./lib.js";

const { values } = parseArgs({
  options: { jobs: { type: "string", default: "10000" }, repeat: { type: "string", default: "3" } },
});
const JOBS = Number(values.jobs);
const REPEAT = Number(values.repeat);

export class PlainBenchJob {
  perform(): void {}
}
export class SujExecutedBenchJob {
  static options = { lock: "until_executed", lockTtl: 600 };
  perform(): void {}
}
export class SujWhileBenchJob {
  static options = { lock: "while_executing", lockTtl: 600 };
  perform(): void {}
}

const median = medianOf;

installCleanupHandlers();
configureLogger({ level: "silent" }); // each refused push logs a line; the bench measures Redis and the middleware
try {
  const { url } = await startRedis();
  const client = new Client({ redis: url });
  const rows: [string, number[]][] = [
    ["push: plain class", []],
    ["push: until_executed, distinct args (lock taken)", []],
    ["push: until_executed, same args (refused)", []],
    ["job: plain class", []],
    ["job: until_executed (released after perform)", []],
    ["job: while_executing (run lock around perform)", []],
  ];
  for (let round = 0; round < REPEAT; round++) {
    rows[0]![1].push(await pushCost(client, PlainBenchJob, JOBS, false));
    rows[1]![1].push(await pushCost(client, SujExecutedBenchJob, JOBS, false));
    rows[2]![1].push(await pushCost(client, SujExecutedBenchJob, JOBS, true));
    rows[3]![1].push(await jobCost(url, client, PlainBenchJob, JOBS, "uniquejobs:*:LOCKED"));
    rows[4]![1].push(await jobCost(url, client, SujExecutedBenchJob, JOBS, "uniquejobs:*:LOCKED"));
    rows[5]![1].push(await jobCost(url, client, SujWhileBenchJob, JOBS, "uniquejobs:*:LOCKED"));
  }
  await client.close();
  const base = { push: median(rows[0]![1]), job: median(rows[3]![1]) };
  console.log(
    `${JOBS.toLocaleString("en-US")} pushes / jobs per cell, ${IN_FLIGHT} in flight, concurrency 10, median of ${REPEAT}`,
  );
  console.log(
    table(
      ["case", "µs each", "per second", "vs plain"],
      rows.map(([label, xs]) => {
        const us = median(xs);
        const plain = label.startsWith("push") ? base.push : base.job;
        return [
          label,
          us.toFixed(1),
          Math.round(1e6 / us).toLocaleString("en-US"),
          `${us >= plain ? "+" : ""}${(us - plain).toFixed(1)} µs`,
        ];
      }),
    ),
  );
} catch (error) {
  console.error(`bench:suj failed: ${messageOf(error)}`);
  process.exitCode = 1;
} finally {
  await cleanupAll();
}
