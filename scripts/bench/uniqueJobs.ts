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
import { performance } from "node:perf_hooks";
import { parseArgs } from "node:util";
import { pino } from "pino";
import { Client } from "../../src/client/Client.js";
import { Launcher } from "../../src/server/Launcher.js";
import { Registry } from "../../src/server/Registry.js";
import { configureLogger } from "../../src/logger.js";
import {
  cleanupAll,
  IN_FLIGHT,
  inFlight,
  inProcessWorkerOptions,
  installCleanupHandlers,
  medianOf,
  messageOf,
  startRedis,
  table,
} from "./lib.js";

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

type Klass = { name: string };

/** µs per push. */
async function pushCost(client: Client, klass: Klass, sameArgs: boolean): Promise<number> {
  await client.redis.flushdb();
  const t0 = performance.now();
  await inFlight(JOBS, (i) => client.push({ class: klass, args: sameArgs ? [1] : [i] }));
  const us = ((performance.now() - t0) * 1000) / JOBS;
  const queued = await client.redis.llen("queue:default");
  const expected = sameArgs ? 1 : JOBS;
  if (queued !== expected) throw new Error(`${klass.name}: ${queued} jobs queued, expected ${expected}`);
  return us;
}

/** µs per job: JOBS queued first, then drained by an in-process worker. */
async function jobCost(url: string, client: Client, klass: Klass): Promise<number> {
  await client.redis.flushdb();
  await inFlight(JOBS, (i) => client.push({ class: klass, args: [i] }));
  const registry = new Registry();
  registry.register(klass as never);
  const launcher = new Launcher(inProcessWorkerOptions(url, 10), registry, { logger: pino({ level: "silent" }) });
  let done = 0;
  const finished = new Promise<void>((resolve) =>
    launcher.ctx.events.on("end", () => {
      if (++done === JOBS) resolve();
    }),
  );
  const t0 = performance.now();
  await launcher.start();
  await finished;
  const us = ((performance.now() - t0) * 1000) / JOBS;
  await launcher.stop();
  const locks = (await client.redis.keys("uniquejobs:*:LOCKED")).length;
  if (locks !== 0) throw new Error(`${klass.name}: ${locks} locks left after every job ran`);
  return us;
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
    rows[0]![1].push(await pushCost(client, PlainBenchJob, false));
    rows[1]![1].push(await pushCost(client, SujExecutedBenchJob, false));
    rows[2]![1].push(await pushCost(client, SujExecutedBenchJob, true));
    rows[3]![1].push(await jobCost(url, client, PlainBenchJob));
    rows[4]![1].push(await jobCost(url, client, SujExecutedBenchJob));
    rows[5]![1].push(await jobCost(url, client, SujWhileBenchJob));
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
