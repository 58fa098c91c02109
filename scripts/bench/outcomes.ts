// What job outcomes cost per job, in one run against a private redis-server: a plain class with the
// built-in plug-ins minus outcomes (as before the feature), the same class with every built-in (outcomes
// on, the class not opted in: no Redis command, a field read), and a class opted in with
// `static options = { result: { ttl } }` (one MULTI SET+XADD per job, pipelined with the ack/fetch).
// Basic and reliable fetch; the cells alternate within each round so drift hits all alike. Then progress
// (basic fetch): jobs calling `this.progress` 3 times, plain (work entry only) and opted in (reports on the
// stream too), the latter with and without a subscriber (`subscribe({ progress: true })`, in this process,
// so its reading shares the worker's CPU: an upper bound on what one in another process costs).
//
//   npm run bench:outcomes [-- --jobs 20000] [-- --repeat 5] [-- --concurrency 10]
//
// Each cell is the median of the rounds, in µs of wall time per job for an in-process worker draining
// `--jobs` queued no-op jobs (pushed before it starts).
import { parseArgs } from "node:util";
import { performance } from "node:perf_hooks";
import { pino } from "pino";
import { Client } from "../../src/client/Client.js";
import { Launcher } from "../../src/server/Launcher.js";
import { Registry } from "../../src/server/Registry.js";
import { configureLogger } from "../../src/platform/logger.js";
import { builtinPlugins } from "../../src/plugins.js";
import type { Plugin } from "../../src/server/plugin.js";
import { OUTCOMES } from "../../src/wire/keys.js";
import { Job } from "../../src/client/Job.js";
import { OutcomeWatcher } from "../../src/features/outcomes/OutcomeWatcher.js";
import {
  cleanupAll,
  inFlight,
  inProcessWorkerOptions,
  installCleanupHandlers,
  medianOf,
  messageOf,
  startRedis,
  table,
} from "./lib.js";

const { values } = parseArgs({
  options: {
    jobs: { type: "string", default: "20000" },
    repeat: { type: "string", default: "5" },
    concurrency: { type: "string", default: "10" },
  },
});
const JOBS = Number(values.jobs);
const REPEAT = Number(values.repeat);
const CONCURRENCY = Number(values.concurrency);

export class PlainOutcomeBenchJob {
  perform(i: number): number {
    return i;
  }
}
export class OptedInOutcomeBenchJob {
  static options = { result: { ttl: 600 } };
  perform(i: number): number {
    return i;
  }
}

/** Reports its progress 3 times in a burst: one write at once, the last as it ends. */
export class PlainProgressBenchJob extends Job {
  perform(i: number): number {
    for (let n = 1; n <= 3; n++) this.progress(n * 33);
    return i;
  }
}
export class OptedInProgressBenchJob extends PlainProgressBenchJob {
  static override options = { result: { ttl: 600 } };
}

type Klass = typeof PlainOutcomeBenchJob | typeof OptedInOutcomeBenchJob | typeof PlainProgressBenchJob;
/** Events a subscriber received in the last run with one. */
let received = 0;

/** µs per job for an in-process worker draining `JOBS` queued jobs of `klass` with `plugins`. */
async function cost(
  url: string,
  client: Client,
  klass: Klass,
  plugins: Plugin[],
  fetch: "basic" | "reliable",
  subscribe = false,
) {
  await client.redis.flushdb();
  const watcher = subscribe ? new OutcomeWatcher({ client }) : undefined;
  received = 0;
  watcher?.subscribe({ progress: true }, () => received++);
  await inFlight(JOBS, (i) => client.push({ class: klass, args: [i] }));
  const registry = new Registry();
  registry.register(klass);
  const launcher = new Launcher({ ...inProcessWorkerOptions(url, CONCURRENCY), fetch }, registry, {
    logger: pino({ level: "silent" }),
    plugins,
  });
  let ended = 0;
  const done = new Promise<void>((resolve) =>
    launcher.ctx.events.on("end", () => {
      if (++ended === JOBS) resolve();
    }),
  );
  const t0 = performance.now();
  await launcher.start();
  await done;
  const us = ((performance.now() - t0) * 1000) / JOBS;
  await launcher.stop(); // waits for the outcome writes in flight
  await watcher?.close();
  const entries = await client.redis.xlen(OUTCOMES);
  const expected = klass === OptedInOutcomeBenchJob || klass === OptedInProgressBenchJob ? Math.min(JOBS, 10_000) : 0;
  // MAXLEN ~ trims whole nodes: somewhat more than the cap may stay.
  if (expected === 0 ? entries !== 0 : entries < expected)
    throw new Error(`${klass.name}: ${entries} stream entries, expected ${expected === 0 ? 0 : `≥ ${expected}`}`);
  return us;
}

installCleanupHandlers();
configureLogger({ level: "silent" });
try {
  const { url } = await startRedis();
  const client = new Client({ redis: url, plugins: [] });
  const all = builtinPlugins();
  const without = all.filter((plugin) => plugin.name !== "outcomes");
  const cells: { label: string; klass: Klass; plugins: Plugin[]; fetch: "basic" | "reliable"; xs: number[] }[] = [];
  for (const fetch of ["basic", "reliable"] as const) {
    cells.push(
      { label: `${fetch}: plain, outcomes plug-in off`, klass: PlainOutcomeBenchJob, plugins: without, fetch, xs: [] },
      { label: `${fetch}: plain, outcomes plug-in on`, klass: PlainOutcomeBenchJob, plugins: all, fetch, xs: [] },
      { label: `${fetch}: opted in (result stored)`, klass: OptedInOutcomeBenchJob, plugins: all, fetch, xs: [] },
    );
  }
  const progress: { label: string; klass: Klass; subscribe: boolean; xs: number[]; received: number[] }[] = [
    { label: "opted in, no progress", klass: OptedInOutcomeBenchJob, subscribe: false, xs: [], received: [] },
    { label: "plain, progress ×3", klass: PlainProgressBenchJob, subscribe: false, xs: [], received: [] },
    { label: "opted in, progress ×3", klass: OptedInProgressBenchJob, subscribe: false, xs: [], received: [] },
    {
      label: "opted in, progress ×3, a subscriber",
      klass: OptedInProgressBenchJob,
      subscribe: true,
      xs: [],
      received: [],
    },
  ];
  for (let round = 0; round < REPEAT; round++) {
    for (const cell of cells) cell.xs.push(await cost(url, client, cell.klass, cell.plugins, cell.fetch));
    for (const cell of progress) {
      cell.xs.push(await cost(url, client, cell.klass, all, "basic", cell.subscribe));
      cell.received.push(received);
    }
  }
  await client.close();
  console.log(
    `${JOBS.toLocaleString("en-US")} no-op jobs per cell, worker concurrency ${CONCURRENCY}, median of ${REPEAT} (min–max)`,
  );
  console.log(
    table(
      ["case", "µs per job", "min–max", "jobs/s", "vs plugin off"],
      cells.map((cell) => {
        const us = medianOf(cell.xs);
        const base = medianOf(cells.find((c) => c.fetch === cell.fetch)!.xs);
        const range = `${Math.min(...cell.xs).toFixed(1)}–${Math.max(...cell.xs).toFixed(1)}`;
        const delta = `${us >= base ? "+" : ""}${(us - base).toFixed(1)} µs (${(((us - base) / base) * 100).toFixed(1)}%)`;
        return [cell.label, us.toFixed(1), range, Math.round(1e6 / us).toLocaleString("en-US"), delta];
      }),
    ),
  );
  console.log(`\nProgress (basic fetch): each job calls this.progress 3 times in a burst`);
  const base = medianOf(progress[0]!.xs);
  console.log(
    table(
      ["case", "µs per job", "min–max", "vs opted in, no progress", "events received"],
      progress.map((cell) => {
        const us = medianOf(cell.xs);
        const range = `${Math.min(...cell.xs).toFixed(1)}–${Math.max(...cell.xs).toFixed(1)}`;
        const delta = `${us >= base ? "+" : ""}${(us - base).toFixed(1)} µs`;
        return [cell.label, us.toFixed(1), range, delta, cell.subscribe ? String(medianOf(cell.received)) : "–"];
      }),
    ),
  );
} catch (error) {
  console.error(`bench:outcomes failed: ${messageOf(error)}`);
  process.exitCode = 1;
} finally {
  await cleanupAll();
}
