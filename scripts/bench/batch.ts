// What batch membership costs: pushes and jobs of a plain no-op class, alone and as members of one
// batch (each push joins first: one batch-join-1.lua call; each job ends with one batch-event-1.lua
// call), against a private redis-server, in one process (loopback only).
//
//   npm run bench:batch [-- --jobs 20000] [-- --repeat 3]
//
// Push: `--jobs` pushes, 100 in flight. Job: the same number of jobs drained by an in-process worker
// (concurrency 10). Each cell is the median of the rounds.
import { performance } from "node:perf_hooks";
import { parseArgs } from "node:util";
import { pino } from "pino";
import { Client } from "../../src/library/Client.js"; // every built-in feature, as an app's
import { Batch } from "../../src/features/flow/batches/index.js";
import { Launcher } from "../../src/server/Launcher.js";
import { Registry } from "../../src/server/Registry.js";
import { builtinPlugins } from "../../src/plugins.js";
import { configureLogger } from "../../src/platform/logger.js";
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
  options: { jobs: { type: "string", default: "20000" }, repeat: { type: "string", default: "3" } },
});
const JOBS = Number(values.jobs);
const REPEAT = Number(values.repeat);

export class NoopBenchJob {
  perform(): void {}
}

/** Pushes JOBS jobs, in a batch or not; µs per push and the batch (if any). */
async function push(client: Client, member: boolean): Promise<{ us: number; bid?: string }> {
  await client.redis.flushdb();
  const pushAll = () => inFlight(JOBS, (i) => client.push({ class: NoopBenchJob, args: [i] }));
  const t0 = performance.now();
  let bid: string | undefined;
  if (member) {
    const batch = new Batch({ client, description: "bench" });
    batch.on("success", "NoopBenchJob", {});
    await batch.jobs(pushAll);
    bid = batch.bid;
  } else await pushAll();
  return { us: ((performance.now() - t0) * 1000) / JOBS, ...(bid === undefined ? {} : { bid }) };
}

/** µs per job: the queued jobs drained by an in-process worker. */
async function drain(url: string, client: Client, bid: string | undefined): Promise<number> {
  const registry = new Registry();
  registry.register(NoopBenchJob);
  const launcher = new Launcher(inProcessWorkerOptions(url, 10), registry, {
    logger: pino({ level: "silent" }),
    plugins: builtinPlugins(), // batches among them, as the tsq CLI runs them
  });
  const expected = JOBS + (bid === undefined ? 0 : 1); // the success callback is a job too
  let done = 0;
  const finished = new Promise<void>((resolve) =>
    launcher.ctx.events.on("end", () => {
      if (++done === expected) resolve();
    }),
  );
  const t0 = performance.now();
  await launcher.start();
  await finished;
  const us = ((performance.now() - t0) * 1000) / JOBS;
  await launcher.stop();
  if (bid !== undefined) {
    const status = await Batch.status(bid, client);
    if (!status?.success || status.total !== JOBS) throw new Error(`batch did not succeed: ${JSON.stringify(status)}`);
  }
  return us;
}

const median = medianOf;

installCleanupHandlers();
configureLogger({ level: "silent" });
try {
  const { url } = await startRedis();
  const client = new Client({ redis: url });
  const rows: [string, number[]][] = [
    ["push: plain", []],
    ["push: batch member", []],
    ["job: plain", []],
    ["job: batch member", []],
  ];
  for (let round = 0; round < REPEAT; round++) {
    const plain = await push(client, false);
    rows[0]![1].push(plain.us);
    rows[2]![1].push(await drain(url, client, undefined));
    const member = await push(client, true);
    rows[1]![1].push(member.us);
    rows[3]![1].push(await drain(url, client, member.bid));
  }
  await client.close();
  console.log(
    `${JOBS.toLocaleString("en-US")} pushes / jobs per cell, ${IN_FLIGHT} pushes in flight, worker concurrency 10, median of ${REPEAT}`,
  );
  console.log(
    table(
      ["case", "µs each", "per second", "vs plain"],
      rows.map(([label, xs]) => {
        const us = median(xs);
        const plain = median(rows[label.startsWith("push") ? 0 : 2]![1]);
        return [label, us.toFixed(1), Math.round(1e6 / us).toLocaleString("en-US"), `${(us / plain).toFixed(2)}x`];
      }),
    ),
  );
} catch (error) {
  console.error(`bench failed: ${messageOf(error)}`);
  process.exitCode = 1;
} finally {
  await cleanupAll();
}
