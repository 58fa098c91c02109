// What durable jobs guarantee and cost, against a private redis-server.
//
//   npm run bench:durable [-- --runs 1000] [-- --parked 10000] [-- --plain 20000] [-- --only kill,parked,cost]
//
// (a) `--runs` five-step jobs (test/jobs/durableJobs.ts FiveStepJob) on a two-child `tsq-cluster` with
//     reliable fetch, in rounds of 200 (a fresh cluster each), a child SIGKILLed at random points (every
//     0.5 to 2.5 s while steps commit) until 95% of a round's jobs are done; then the rest drains.
//     Each step's side effect commits in the step's own MULTI (ctx.tx) and is counted per job: a count
//     other than 1 is an exactly-once violation (printed; must be 0). Also printed: completions, kills,
//     and how many step functions were called again after a kill (their effect did not commit twice).
// (b) `--parked` jobs sleeping and as many waiting on events, on an in-process worker of concurrency 5
//     (durableParked.ts): Redis memory per parked job, wake lateness, signal-to-start latency, signals
//     sent before the wait delivered, and plain work served while they are parked.
// (c) µs per plain no-op job with the durable plug-in in the worker's plug-in list and without it,
//     alternating in the same run, `--repeat` rounds each, median.
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { performance } from "node:perf_hooks";
import { parseArgs } from "node:util";
import { pino } from "pino";
import { Client } from "../../src/library/Client.js"; // every built-in feature, as an app's
import { Launcher } from "../../src/server/Launcher.js";
import { Registry } from "../../src/server/Registry.js";
import { builtinPlugins } from "../../src/plugins.js";
import { configureLogger } from "../../src/platform/logger.js";
import {
  childPids,
  cleanupAll,
  inProcessWorkerOptions,
  installCleanupHandlers,
  medianOf,
  messageOf,
  sleep,
  spawnTracked,
  startRedis,
  stopTracked,
  table,
} from "./lib.js";
import { parkedBench } from "./durableParked.js";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "../../..");
const { values } = parseArgs({
  options: {
    runs: { type: "string", default: "1000" },
    parked: { type: "string", default: "10000" },
    plain: { type: "string", default: "20000" },
    repeat: { type: "string", default: "3" },
    only: { type: "string", default: "kill,parked,cost" },
  },
});
const RUNS = Number(values.runs);
const PARKED = Number(values.parked);
const PLAIN = Number(values.plain);
const REPEAT = Number(values.repeat);
const ONLY = new Set(values.only.split(","));
for (const [flag, n] of Object.entries({ runs: RUNS, parked: PARKED, plain: PLAIN, repeat: REPEAT }))
  if (!Number.isInteger(n) || n < 1) throw new Error(`--${flag} must be a whole number >= 1, got ${String(n)}`);
const STEPS = ["charge", "reserve", "label", "notify", "close"];
/** Each step's function pauses up to this long (ms), so a kill lands inside steps as well as between. */
const PAUSE_MS = 60;

/**
 * Jobs per round: each round gets a fresh cluster. A child killed every few seconds never runs the 60 s
 * the supervisor needs to reset its restart back-off (1 s doubling to 30 s), so one long run would end
 * up waiting out 30 s back-offs rather than running jobs; rounds of this size keep kills and work mixed.
 */
const ROUND = 200;

interface RoundResult {
  completed: number;
  kills: number;
  violations: number;
  recalled: number;
  dead: number;
  seconds: number;
}

async function killRuns(url: string, client: Client): Promise<void> {
  const total: RoundResult = { completed: 0, kills: 0, violations: 0, recalled: 0, dead: 0, seconds: 0 };
  const rounds = Math.ceil(RUNS / ROUND);
  for (let round = 0; round < rounds; round++) {
    const result = await killRound(url, client, Math.min(ROUND, RUNS - round * ROUND));
    for (const key of Object.keys(total) as (keyof RoundResult)[]) total[key] += result[key];
  }
  console.log(
    `(a) ${RUNS.toLocaleString("en-US")} five-step jobs in ${rounds} rounds of up to ${ROUND}, reliable fetch, ` +
      "two children (concurrency 5 each), a fresh cluster per round",
  );
  console.log(
    table(
      ["jobs completed", "SIGKILLs", "exactly-once violations", "step functions re-called", "dead", "seconds"],
      [
        [
          `${total.completed} / ${RUNS}`,
          total.kills,
          total.violations,
          total.recalled,
          total.dead,
          total.seconds.toFixed(0),
        ],
      ],
    ),
  );
}

async function killRound(url: string, client: Client, runs: number): Promise<RoundResult> {
  await client.redis.flushdb();
  const cluster = spawnTracked(
    "tsq-cluster",
    process.execPath,
    [
      join(ROOT, "bin/tsq-cluster.js"),
      ...["-r", join(ROOT, "dist/test/jobs/durableJobs.js"), "--processes", "2", "-c", "5", "-t", "5"],
      ...["--fetch", "reliable", "--metrics-port", "0"],
    ],
    { env: { ...process.env, REDIS_URL: url, TSQ_LOG_LEVEL: "warn" } },
  );
  try {
    await client.pushBulk({ class: "FiveStepJob", args: Array.from({ length: runs }, () => ["k", PAUSE_MS]) });
    const t0 = performance.now();
    let kills = 0;
    let committed = 0;
    // A kill only after a step committed since the last one, so each lands on a child at work (a restarted
    // child waits out the supervisor's back-off while the other keeps working). Kills stop at 95% done;
    // the rest drains.
    while ((await client.redis.scard("k:done")) < runs * 0.95) {
      if (performance.now() - t0 > 30 * 60_000) throw new Error("the jobs were not done in 30 min");
      await sleep(500 + Math.random() * 2000);
      const now = await client.redis.hlen("k:effects");
      const children = childPids(cluster.pid!);
      if (now === committed || children.length === 0) continue;
      committed = now;
      process.kill(children[Math.floor(Math.random() * children.length)]!, "SIGKILL");
      kills++;
    }
    while ((await client.redis.scard("k:done")) < runs) {
      await sleep(200);
      if (performance.now() - t0 > 30 * 60_000) throw new Error("the jobs were not done in 30 min");
    }
    const seconds = (performance.now() - t0) / 1000;
    const effects = await client.redis.hgetall("k:effects");
    const jids = await client.redis.smembers("k:done");
    let violations = 0;
    for (const jid of jids) for (const step of STEPS) if (effects[`${jid}:${step}`] !== "1") violations++;
    const calls = Object.values(await client.redis.hgetall("k:calls")).map(Number);
    return {
      completed: jids.length,
      kills,
      violations,
      recalled: calls.filter((n) => n > 1).length,
      dead: await client.redis.zcard("dead"),
      seconds,
    };
  } finally {
    await stopTracked(cluster);
  }
}

export class NoopBenchJob {
  static done: () => void = () => {};
  perform(): void {
    NoopBenchJob.done();
  }
}

async function drainPlain(url: string, client: Client, withDurable: boolean): Promise<number> {
  await client.redis.flushdb();
  await client.pushBulk({ class: NoopBenchJob, args: Array.from({ length: PLAIN }, () => []) });
  const registry = new Registry();
  registry.register(NoopBenchJob);
  const plugins = builtinPlugins().filter((plugin) => withDurable || plugin.name !== "durable");
  const launcher = new Launcher(inProcessWorkerOptions(url, 10), registry, {
    logger: pino({ level: "silent" }),
    plugins,
  });
  let left = PLAIN;
  const done = new Promise<void>((resolve) => (NoopBenchJob.done = () => void (--left === 0 && resolve())));
  const t0 = performance.now();
  await launcher.start();
  await done;
  const ms = performance.now() - t0;
  await launcher.stop();
  return (ms * 1000) / PLAIN;
}

async function plainCost(url: string, client: Client): Promise<void> {
  const on: number[] = [];
  const off: number[] = [];
  for (let round = 0; round < REPEAT; round++) {
    off.push(await drainPlain(url, client, false));
    on.push(await drainPlain(url, client, true));
  }
  const [a, b] = [medianOf(off), medianOf(on)];
  console.log(
    `\n(c) ${PLAIN.toLocaleString("en-US")} plain no-op jobs per cell, in-process worker, concurrency 10, median of ${REPEAT}`,
  );
  console.log(
    table(
      ["plug-in list", "µs per job", "rounds (µs)"],
      [
        ["without durable", a.toFixed(1), off.map((x) => x.toFixed(1)).join(" ")],
        ["with durable", b.toFixed(1), on.map((x) => x.toFixed(1)).join(" ")],
        ["difference", `${b - a >= 0 ? "+" : ""}${(b - a).toFixed(1)}`, ""],
      ],
    ),
  );
}

installCleanupHandlers();
configureLogger({ level: "silent" });
try {
  const { url } = await startRedis();
  const client = new Client({ redis: url });
  if (ONLY.has("kill")) await killRuns(url, client);
  if (ONLY.has("parked")) await parkedBench(url, client, PARKED);
  if (ONLY.has("cost")) await plainCost(url, client);
  await client.close();
} catch (error) {
  console.error(`bench:durable failed: ${messageOf(error)}`);
  process.exitCode = 1;
} finally {
  await cleanupAll();
}
