// What an iterable job costs, against a private redis-server, run by an in-process worker.
//
//   npm run bench:iterable [-- --items 2000000] [-- --jobs 5000] [-- --repeat 3]
//
// (1) Iterations per second of one job walking a counter with a no-op eachIteration: the loop's own
//     overhead (cursor bookkeeping, a clock read per item, a state save every 5 s), beside the same
//     counter walked by a bare `for...of` calling the same no-op.
// (2) µs per job: `--jobs` one-item iterable jobs vs as many no-op plain jobs. An iterable run adds
//     HGETALL it-<jid> (resume?), HGET cancelled and UNLINK it-<jid>: three round trips.
// Each figure is the median of the rounds.
import { performance } from "node:perf_hooks";
import { parseArgs } from "node:util";
import { pino } from "pino";
import { Client } from "../../src/library/Client.js"; // every built-in feature, as an app's
import { IterableJob } from "../../src/features/iterable/IterableJob.js";
import { rangeEnumerator } from "../../src/features/iterable/enumerators.js";
import { Launcher } from "../../src/server/Launcher.js";
import { Registry } from "../../src/server/Registry.js";
import { builtinPlugins } from "../../src/plugins.js";
import { configureLogger } from "../../src/platform/logger.js";
import {
  cleanupAll,
  inProcessWorkerOptions,
  installCleanupHandlers,
  medianOf,
  messageOf,
  startRedis,
  table,
} from "./lib.js";

const { values } = parseArgs({
  options: {
    items: { type: "string", default: "2000000" },
    jobs: { type: "string", default: "5000" },
    repeat: { type: "string", default: "3" },
  },
});
const ITEMS = Number(values.items);
const JOBS = Number(values.jobs);
const REPEAT = Number(values.repeat);
const CONCURRENCY = 10;

let finished = 0;
let target = 0;
let onFinished: () => void = () => {};
function count(): void {
  if (++finished === target) onFinished();
}

export class WalkBenchJob extends IterableJob<number, number, [number]> {
  buildEnumerator([n]: [number], cursor: number | null): Iterable<readonly [number, number]> {
    return rangeEnumerator(0, n, cursor);
  }
  eachIteration(): void {}
  override onComplete(): void {
    count();
  }
}

export class OneItemBenchJob extends WalkBenchJob {}

export class PlainBenchJob {
  perform(): void {
    count();
  }
}

async function drain(url: string, client: Client, klass: { name: string }, argsList: unknown[][]): Promise<number> {
  await client.redis.flushdb();
  await client.pushBulk({ class: klass, args: argsList });
  const registry = new Registry();
  registry.register(klass as never);
  const launcher = new Launcher(inProcessWorkerOptions(url, CONCURRENCY), registry, {
    logger: pino({ level: "silent" }),
    plugins: builtinPlugins(), // as the tsq CLI runs them
  });
  finished = 0;
  target = argsList.length;
  const done = new Promise<void>((resolve) => (onFinished = resolve));
  const t0 = performance.now();
  await launcher.start();
  await done;
  const ms = performance.now() - t0;
  await launcher.stop();
  return ms;
}

/** The same walk with no job around it: what the counter and the no-op cost alone. */
function bareWalk(): number {
  const noop = (_item: number): void => {};
  const t0 = performance.now();
  for (const [item] of rangeEnumerator(0, ITEMS, null)) noop(item);
  return performance.now() - t0;
}

const median = medianOf;

installCleanupHandlers();
configureLogger({ level: "silent" });
try {
  const { url } = await startRedis();
  const client = new Client({ redis: url });
  const walk: number[] = [];
  const bare: number[] = [];
  const iterable: number[] = [];
  const plain: number[] = [];
  for (let round = 0; round < REPEAT; round++) {
    walk.push(await drain(url, client, WalkBenchJob, [[ITEMS]]));
    bare.push(bareWalk());
    iterable.push(
      await drain(
        url,
        client,
        OneItemBenchJob,
        Array.from({ length: JOBS }, () => [1]),
      ),
    );
    plain.push(
      await drain(
        url,
        client,
        PlainBenchJob,
        Array.from({ length: JOBS }, () => []),
      ),
    );
  }
  await client.close();
  const perSecond = (ms: number) => Math.round((ITEMS / ms) * 1000).toLocaleString("en-US");
  console.log(`(1) one job over ${ITEMS.toLocaleString("en-US")} items, no-op eachIteration, median of ${REPEAT}`);
  console.log(
    table(
      ["walk", "iterations/s", "ns per item"],
      [
        ["IterableJob", perSecond(median(walk)), ((median(walk) * 1e6) / ITEMS).toFixed(0)],
        ["bare for...of, same no-op", perSecond(median(bare)), ((median(bare) * 1e6) / ITEMS).toFixed(0)],
      ],
    ),
  );
  const us = (ms: number) => (ms * 1000) / JOBS;
  console.log(
    `\n(2) ${JOBS.toLocaleString("en-US")} jobs per cell, worker concurrency ${CONCURRENCY}, median of ${REPEAT}`,
  );
  console.log(
    table(
      ["job", "µs per job", "jobs/s", "vs plain"],
      [
        ["plain no-op job", us(median(plain)).toFixed(1), Math.round(JOBS / (median(plain) / 1000)), ""],
        [
          "one-item iterable job",
          us(median(iterable)).toFixed(1),
          Math.round(JOBS / (median(iterable) / 1000)),
          `+${(us(median(iterable)) - us(median(plain))).toFixed(1)} µs`,
        ],
      ],
    ),
  );
} catch (error) {
  console.error(`bench:iterable failed: ${messageOf(error)}`);
  process.exitCode = 1;
} finally {
  await cleanupAll();
}
