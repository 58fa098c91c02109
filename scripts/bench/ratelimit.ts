// What rate limits cost per job: a plain class beside limited ones whose limits are never reached,
// against a private redis-server, run by an in-process worker (concurrency 10; loopback only).
//
//   npm run bench:ratelimit [-- --jobs 10000] [-- --repeat 3]
//
// Cases: (a) plain; (b) a class `static limit` with a per-key concurrency and rate (100 keys): one
// keyed-limit-6.lua call before perform and one after; (c) the same with a rate only: one call before;
// (d) perform calls `Limiter.window(...).withinLimit` (one rate-window-1.lua call); (e) perform calls
// `Limiter.concurrent(...).withinLimit` (lock-acquire-2.lua, then HDEL). No-op jobs, so the numbers are
// the overhead alone: µs of wall time per job and jobs/s, the median of the rounds.
import { parseArgs } from "node:util";
import { Client } from "../../src/library/Client.js"; // every built-in feature, as an app's
import { configureLogger } from "../../src/platform/logger.js";
import { Limiter } from "../../src/features/locks/enterprise-rate-limits/index.js";
import { cleanupAll, installCleanupHandlers, medianOf, messageOf, startRedis, table } from "./lib.js";
import { drainCost } from "./lockCost.js";

const { values } = parseArgs({
  options: { jobs: { type: "string", default: "10000" }, repeat: { type: "string", default: "3" } },
});
const JOBS = Number(values.jobs);
const REPEAT = Number(values.repeat);
const CONCURRENCY = 10;

let performed = 0;
let onPerformed: () => void = () => {};
function count(): void {
  if (++performed === JOBS) onPerformed();
}

const tenant = (args: unknown[]) => `t${Number(args[0]) % 100}`;
const window = Limiter.window("bench-window", 1_000_000_000, 1);
const concurrent = Limiter.concurrent("bench-concurrent", 1_000);

export class PlainRateBenchJob {
  perform(): void {
    count();
  }
}
export class KeyedRateBenchJob {
  static limit = { key: tenant, concurrency: 1_000, rate: { limit: 1_000_000_000, period: 1 } };
  perform(): void {
    count();
  }
}
export class KeyedRateOnlyBenchJob {
  static limit = { key: tenant, rate: { limit: 1_000_000_000, period: 1 } };
  perform(): void {
    count();
  }
}
export class WindowBenchJob {
  async perform(): Promise<void> {
    await window.withinLimit(() => count());
  }
}
export class ConcurrentBenchJob {
  async perform(): Promise<void> {
    await concurrent.withinLimit(() => count());
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
  if ((await client.redis.keys("tsq:rl-ready:*")).length !== 0) throw new Error(`${klass.name}: a limit was reached`);
  return us;
}

const median = medianOf;

installCleanupHandlers();
configureLogger({ level: "silent" });
try {
  const { url } = await startRedis();
  const client = new Client({ redis: url });
  const cases: [string, Klass][] = [
    ["plain class", PlainRateBenchJob],
    ["static limit: concurrency + rate per key", KeyedRateBenchJob],
    ["static limit: rate per key only", KeyedRateOnlyBenchJob],
    ["Limiter.window in perform", WindowBenchJob],
    ["Limiter.concurrent in perform", ConcurrentBenchJob],
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
      ["case", "jobs/s", "µs per job", "vs plain"],
      rows.map(([label, xs]) => {
        const us = median(xs);
        return [
          label,
          Math.round(1e6 / us).toLocaleString("en-US"),
          us.toFixed(1),
          `${us >= plain ? "+" : ""}${(us - plain).toFixed(1)} µs`,
        ];
      }),
    ),
  );
} catch (error) {
  console.error(`bench:ratelimit failed: ${messageOf(error)}`);
  process.exitCode = 1;
} finally {
  await cleanupAll();
}
