// Per-push and per-job cost of a class in one process, for the lock benches (bench:dedup, bench:suj):
// pushes `jobs` with 100 in flight, or queues them and times an in-process worker (concurrency 10)
// draining them, then checks that nothing was left behind.
import { performance } from "node:perf_hooks";
import { pino } from "pino";
import type { Client } from "../../src/client/Client.js";
import { Launcher } from "../../src/server/Launcher.js";
import { Registry } from "../../src/server/Registry.js";
import { builtinPlugins } from "../../src/plugins.js";
import { inFlight, inProcessWorkerOptions } from "./lib.js";

export type Klass = { name: string };

/** µs per push; with `sameArgs` every push is the same job, so all but the first are refused or dropped. */
export async function pushCost(client: Client, klass: Klass, jobs: number, sameArgs: boolean): Promise<number> {
  await client.redis.flushdb();
  const t0 = performance.now();
  await inFlight(jobs, (i) => client.push({ class: klass, args: sameArgs ? [1] : [i] }));
  const us = ((performance.now() - t0) * 1000) / jobs;
  const queued = await client.redis.llen("queue:default");
  const expected = sameArgs ? 1 : jobs;
  if (queued !== expected) throw new Error(`${klass.name}: ${queued} jobs queued, expected ${expected}`);
  return us;
}

/** µs per job: `jobs` queued first, then drained; keys matching `leftover` must all be gone after. */
export async function jobCost(
  url: string,
  client: Client,
  klass: Klass,
  jobs: number,
  leftover: string,
): Promise<number> {
  await client.redis.flushdb();
  await inFlight(jobs, (i) => client.push({ class: klass, args: [i] }));
  const us = await drainCost(url, klass, jobs, 10);
  const locks = (await client.redis.keys(leftover)).length;
  if (locks !== 0) throw new Error(`${klass.name}: ${locks} locks left after every job ran`);
  return us;
}

/**
 * µs per job for an in-process worker (`concurrency` slots) draining the `jobs` already queued. Done
 * when `finished` resolves (armed before the worker starts), by default after `jobs` "end" events.
 */
export async function drainCost(
  url: string,
  klass: Klass,
  jobs: number,
  concurrency: number,
  finished?: () => Promise<void>,
): Promise<number> {
  const registry = new Registry();
  registry.register(klass as never);
  const launcher = new Launcher(inProcessWorkerOptions(url, concurrency), registry, {
    logger: pino({ level: "silent" }),
    plugins: builtinPlugins(), // the features whose cost is measured, as the tsq CLI runs them
  });
  let ended = 0;
  const done =
    finished?.() ??
    new Promise<void>((resolve) =>
      launcher.ctx.events.on("end", () => {
        if (++ended === jobs) resolve();
      }),
    );
  const t0 = performance.now();
  await launcher.start();
  await done;
  const us = ((performance.now() - t0) * 1000) / jobs;
  await launcher.stop();
  return us;
}
