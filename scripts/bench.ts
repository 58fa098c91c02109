// `npm run bench`: worker throughput, latency and footprint, in the manner of Sidekiq's bin/sidekiqload.
// `npm run bench` builds, then runs this file compiled (node dist/scripts/bench.js); with it
// scripts/bench/lib.ts (processes, /proc, statistics), scripts/bench/systems.ts (tsq, BullMQ, Sidekiq),
// scripts/bench/bullmq-worker.ts (a forked BullMQ worker) and scripts/bench/sidekiq_jobs.rb.
//
//   npm run bench                                   # 200,000 no-op jobs, 1 process, concurrency 50
//   npm run bench -- --peer all --repeat 3          # the same through BullMQ and Ruby Sidekiq, 3 rounds
//   npm run bench -- --processes 2 --peer all       # two processes each (tsq-cluster --processes 2)
//   npm run bench -- --sweep --peer bullmq          # P = 1, 2, 4 × C = 10, 50, as a table
//   npm run bench -- --jobs 1000000 --latency-jobs 0  # RSS over the first vs the last 100,000 jobs (leak check)
//   npm run bench -- --help
//
// docs/performance.md has the method, the caveats of this machine and the figures.
//
// For each system: N no-op jobs are pushed in bulk and held back (tsq, Sidekiq: the list is renamed
// away; BullMQ: the queue is paused), the workers are started and waited for until every process is
// registered and blocked in its fetch, then the jobs are released and the clock runs until the queue is
// empty (sidekiqload's end point; at most P × C jobs are still running then). Meanwhile the bench
// polls each worker process's VmRSS (peak; peaks over the first and the last tenth of the jobs) and
// reads the CPU seconds of the workers (/proc), of Redis (INFO cpu) and of every other process (a busy
// machine is reported, and left out of medians) before and after. Then, on the same idle workers, 1,000
// latency jobs are pushed one at a time, each after the previous one has reported, and each measures
// process.hrtime (one clock for every process) at perform minus at push. Finally the workers are
// stopped gracefully and must account for every job (processed, or requeued by the stop): a lossy
// system cannot look fast.
//
// Redis: a private redis-server on a free loopback port, or --redis-url (whose database must be empty,
// since it is flushed between runs). Workers log at warn (TSQ_LOG_LEVEL=warn, Sidekiq's logger WARN).
import { readFileSync, writeFileSync } from "node:fs";
import { availableParallelism, cpus, loadavg, setPriority } from "node:os";
import { dirname, join } from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import {
  cleanupAll,
  cpuSeconds,
  fmtInt,
  fmtMb,
  installCleanupHandlers,
  isInterrupted,
  onCleanup,
  otherProcessesCpu,
  cpuBetween,
  makeTempDir,
  messageOf,
  percentile,
  redisCpuSeconds,
  round,
  rssKb,
  sleep,
  spawnTracked,
  startRedis,
  table,
  useMarkdownTables,
  type Cell,
  type PrivateRedis,
} from "./bench/lib.js";
import {
  bullmqSystem,
  sidekiqSystem,
  tsqSystem,
  type BenchContext,
  type FetchStrategy,
  type Probe,
  type System,
  type SystemKey,
  type Whereabouts,
} from "./bench/systems.js";
import type { Redis } from "ioredis";

// This file runs as dist/scripts/bench.js: the repository is two levels up.
const root = join(dirname(fileURLToPath(import.meta.url)), "../..");

const USAGE = `Usage: npm run bench -- [options]     (node dist/scripts/bench.js [options] after a build)

  --jobs <n>             no-op jobs per run (default 200000)
  --processes <p>        worker processes: 1 = one \`tsq\`, more = \`tsq-cluster --processes p\` (default 1)
  --concurrency <c>      job slots per process (default 50)
  --fetch <basic|reliable>  tsq's fetch strategy (default basic)
  --redis-url <url>      use this Redis instead of a private redis-server; its database must be empty
                         (it is flushed between runs). Never defaults to 127.0.0.1:6379.
  --peer <list>          none | bullmq | sidekiq | all, or a comma list (default none): the same workload
                         through BullMQ and/or Ruby Sidekiq, same Redis, same P and C, with the ratio
  --sweep                P = 1, 2, 4 × C = 10, 50 (ignores --processes/--concurrency; no latency runs)
  --repeat <n>           run every (system, P, C) n times, the systems taking turns, and report the median
                         (default 1): this machine's speed drifts, so compare medians of interleaved runs
  --latency-jobs <n>     timed jobs for enqueue→start latency on the idle workers (default 1000, 0 = skip)
  --json                 print one JSON object instead of tables
  --markdown             print the tables as Markdown (to paste into docs/performance.md)
  --save <file>          also write the JSON report to this file
  --report <file>        print a report saved with --save again (with --markdown: as Markdown); runs nothing
  --retry-busy <n>       redo a run during which other processes took CPU, after waiting (up to 10 min)
                         for a quiet machine, at most n times (default 0: keep it, with a warning)
  --warm-cpus            keep every CPU busy with a nice-19 spin loop, so no CPU ever goes idle: on a VM
                         whose idle vCPUs are slow to wake (this one), that is what a loaded host looks like
  -h, --help`;

type PeerName = "bullmq" | "sidekiq";
const ALL_PEERS: readonly PeerName[] = ["bullmq", "sidekiq"];

interface Options {
  jobs: number;
  processes: number;
  concurrency: number;
  fetch: FetchStrategy;
  redisUrl: string | undefined;
  peers: PeerName[];
  sweep: boolean;
  repeat: number;
  latencyJobs: number;
  json: boolean;
  markdown: boolean;
  save: string | undefined;
  report: string | undefined;
  warmCpus: boolean;
  retryBusy: number;
}

interface Latency {
  jobs: number;
  p50Ms: number | null;
  p90Ms: number | null;
  p99Ms: number | null;
  maxMs: number | null;
  meanMs: number | null;
}

/** RSS in KB per worker process (null: not sampled, e.g. no /proc). */
interface RssKb {
  perChildPeak: (number | null)[];
  perChildStart: (number | null)[];
  perChildAt10Percent: (number | null)[];
  perChildEnd: (number | null)[];
  perChildFirstTenthPeak: (number | null)[];
  perChildLastTenthPeak: (number | null)[];
  /** Absent from reports saved before it was added. */
  perChildPeakByTenth?: (number | null)[][];
  growthFirstToLastTenth: (number | null)[];
}

/** What runOne() measures during the drain, and the latency run after it. */
interface Measured {
  seconds: number | null;
  jobsPerSecond: number | null;
  push: { seconds: number | null; jobsPerSecond: number | null };
  rssKb: RssKb;
  workerCpuSeconds: number | null;
  supervisorCpuSeconds: number | null;
  redisCpuSeconds: number | null;
  redisCpuMicrosPerJob: number | null;
  workerCpuMicrosPerJob: number | null;
  benchCpuSeconds: number | null;
  otherCpuSeconds: number | null;
  busyWarning?: string;
  latency?: Latency;
}

/** One system, one (P, C), one round: an element of the report's `runs`. */
interface Run extends Measured {
  system: SystemKey;
  label: string;
  processes: number;
  concurrency: number;
  fetch: FetchStrategy | undefined;
  jobs: number;
  stopError?: string;
  processed: number | null;
  allProcessed: boolean;
  workerOutputLines: number;
  workerOutputTail?: string[];
  whereabouts?: Whereabouts | null;
  requeuedAtStop: number;
  allAccountedFor: boolean;
  warning?: string;
  round?: number;
}

/** Per (system, P, C): the medians over the rounds. */
interface Summary {
  system: SystemKey;
  label: string;
  processes: number;
  concurrency: number;
  rounds: number;
  busyRoundsLeftOut: number;
  jobsPerSecond: number | null;
  minJobsPerSecond: number;
  maxJobsPerSecond: number;
  seconds: number | null;
  workerCpuMicrosPerJob: number | null;
  redisCpuMicrosPerJob: number | null;
  rssPeakKb: number;
  latency?: { p50Ms: number | null; p99Ms: number | null; maxMs: number | null };
  allAccountedFor: boolean;
}

interface Ratio {
  peer: string;
  processes: number;
  concurrency: number;
  ratio: number | null;
}

type PeerInfo = { label: string } & Probe;

interface Config {
  processes: number;
  concurrency: number;
}

/** What --json prints and --save writes (and --report reads back). */
interface Report {
  machine: {
    tsq: string;
    node: string;
    redis: string;
    redisWhere: string;
    cpus: number;
    cpuModel: string;
    loadAverage1m: number | null;
    redisPingMicrosP50: number | null;
    warmCpus: boolean;
    platform: string;
  };
  options: Omit<Options, "redisUrl"> & { redisUrl: string | null; workerLogLevel: string };
  peers: Record<string, PeerInfo>;
  runs: Run[];
  /** Absent from reports saved before --retry-busy. */
  discardedBusyRuns?: Run[];
  summary: Summary[];
  ratios: Ratio[];
  sweep?: Config[];
  date: string;
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null;

/**
 * A --report file is JSON from outside: check that it is shaped like a saved report (the parts every
 * version of the bench wrote) before printing it.
 */
function isReport(value: unknown): value is Report {
  return (
    isObject(value) &&
    isObject(value.machine) &&
    isObject(value.options) &&
    isObject(value.peers) &&
    Array.isArray(value.runs) &&
    Array.isArray(value.summary) &&
    Array.isArray(value.ratios)
  );
}

function parseOptions(argv: string[]): Options {
  const { values } = parseArgs({
    args: argv,
    options: {
      jobs: { type: "string", default: "200000" },
      processes: { type: "string", default: "1" },
      concurrency: { type: "string", default: "50" },
      fetch: { type: "string", default: "basic" },
      "redis-url": { type: "string" },
      peer: { type: "string", default: "none" },
      sweep: { type: "boolean", default: false },
      repeat: { type: "string", default: "1" },
      "latency-jobs": { type: "string" },
      json: { type: "boolean", default: false },
      markdown: { type: "boolean", default: false },
      save: { type: "string" },
      report: { type: "string" },
      "warm-cpus": { type: "boolean", default: false },
      "retry-busy": { type: "string", default: "0" },
      help: { type: "boolean", short: "h", default: false },
    },
  });
  if (values.help) {
    console.log(USAGE);
    process.exit(0);
  }
  const integer = (name: "jobs" | "processes" | "concurrency" | "repeat" | "latency-jobs" | "retry-busy", min: number) => {
    const n = Number(values[name]);
    if (!Number.isInteger(n) || n < min) throw new UsageError(`--${name} must be an integer ≥ ${min}, got ${values[name]}`);
    return n;
  };
  const fetch = values.fetch;
  if (fetch !== "basic" && fetch !== "reliable") throw new UsageError(`--fetch must be basic or reliable, got ${values.fetch}`);
  const peerNames = values.peer.split(",").map((p) => p.trim().toLowerCase()).filter(Boolean);
  const peers = new Set<PeerName>();
  for (const name of peerNames) {
    if (name === "none") continue;
    if (name === "all") ALL_PEERS.forEach((p) => peers.add(p));
    else if (name === "bullmq" || name === "sidekiq") peers.add(name);
    else throw new UsageError(`--peer must be none, bullmq, sidekiq or all (comma-separated), got ${values.peer}`);
  }
  return {
    jobs: integer("jobs", 1),
    processes: integer("processes", 1),
    concurrency: integer("concurrency", 1),
    fetch,
    redisUrl: values["redis-url"],
    peers: [...peers],
    sweep: values.sweep,
    repeat: integer("repeat", 1),
    latencyJobs: values["latency-jobs"] === undefined ? (values.sweep ? 0 : 1000) : integer("latency-jobs", 0),
    json: values.json,
    markdown: values.markdown,
    save: values.save,
    report: values.report,
    warmCpus: values["warm-cpus"],
    retryBusy: integer("retry-busy", 0),
  };
}

class UsageError extends Error {}

// ---------------------------------------------------------------------------------------------------

/** Median µs of 2,000 sequential PINGs: what one round trip costs on this machine right now. */
async function pingRoundTrip(redis: Redis): Promise<number | null> {
  const samples: number[] = [];
  for (let i = 0; i < 2_000; i++) {
    const start = process.hrtime.bigint();
    await redis.ping();
    samples.push(Number(process.hrtime.bigint() - start) / 1000);
  }
  samples.sort((a, b) => a - b);
  return round(percentile(samples, 50));
}

/** Until other processes use < 5% of a core over 2 s (at most 10 minutes). */
async function waitForQuiet(ctx: BenchContext): Promise<void> {
  const ours = [process.pid, ...(ctx.redisPid ? [ctx.redisPid] : []), ...ctx.spinners];
  const deadline = Date.now() + 10 * 60_000;
  while (Date.now() < deadline) {
    const before = otherProcessesCpu(ours);
    await sleep(2_000);
    const used = cpuBetween(before, otherProcessesCpu(ours));
    if (used === null || used < 0.1) return;
  }
}

/** --warm-cpus: one spin loop per CPU at the lowest priority (nice 19), tracked like every child. */
function startSpinners(): number[] {
  return Array.from({ length: availableParallelism() }, () => {
    const child = spawnTracked("spinner", process.execPath, ["-e", "for (;;) {}"], { stdio: "ignore" });
    if (child.pid === undefined) return []; // did not start
    setPriority(child.pid, 19);
    return [child.pid];
  }).flat();
}

async function measureLatency(system: System, ctx: BenchContext, count: number): Promise<Latency> {
  const blocking = ctx.redis.duplicate();
  blocking.on("error", () => {});
  try {
    await ctx.redis.del("bench:latency");
    await sleep(500); // the workers are idle, blocked in their fetch
    const samples: number[] = [];
    for (let i = 0; i < count; i++) {
      await system.pushLatency(ctx, process.hrtime.bigint().toString());
      const reply = await blocking.blpop("bench:latency", 10);
      if (!reply) throw new Error(`${system.label}: latency job ${i + 1} did not report within 10 s`);
      samples.push(Number(reply[1]) / 1e6);
      await sleep(3); // let the worker go back to waiting: each job meets an idle worker
    }
    samples.sort((a, b) => a - b);
    return {
      jobs: count,
      p50Ms: round(percentile(samples, 50), 3),
      p90Ms: round(percentile(samples, 90), 3),
      p99Ms: round(percentile(samples, 99), 3),
      maxMs: round(samples[samples.length - 1], 3),
      meanMs: round(samples.reduce((a, b) => a + b, 0) / samples.length, 3),
    };
  } finally {
    blocking.disconnect();
  }
}

/** One system, one (P, C): enqueue, start, drain (timed), latency, stop, verify. */
async function runOne(
  system: System,
  ctx: BenchContext,
  { jobs, processes, concurrency, fetch, latencyJobs }: Pick<Options, "jobs" | "processes" | "concurrency" | "fetch" | "latencyJobs">,
): Promise<Run> {
  await ctx.redis.flushdb();
  const pushStart = performance.now();
  await system.enqueue(ctx, jobs);
  const pushSeconds = (performance.now() - pushStart) / 1000;

  const handle = await system.start(ctx, { processes, concurrency, fetch });
  let stopped: { processed: number | null; stopError?: string };
  let measured: Measured;
  try {
    await system.ready(ctx, handle, processes);
    const workers = handle.workerPids();
    const allPids = handle.allPids();
    // Per child: the peak of the whole drain, and the peaks of its first and last tenth (by jobs taken).
    // Peaks of windows, not single samples, because the V8/Ruby heap saw-tooths between collections:
    // a leak shows as the last tenth's peak above the first tenth's.
    const peak = workers.map(() => 0);
    const firstTenth = workers.map(() => 0);
    const lastTenth = workers.map(() => 0);
    const byTenth = workers.map(() => new Array<number>(10).fill(0)); // the curve: peak per tenth of the jobs
    const sampleRss = (done = 0) => {
      const sample = workers.map((pid) => rssKb(pid));
      const tenth = Math.min(9, Math.max(0, Math.ceil(done * 10) - 1));
      sample.forEach((kb, i) => {
        if (kb === null) return;
        peak[i] = Math.max(peak[i] ?? 0, kb);
        const tenths = byTenth[i];
        if (tenths) tenths[tenth] = Math.max(tenths[tenth] ?? 0, kb);
        if (done <= 0.1) firstTenth[i] = Math.max(firstTenth[i] ?? 0, kb);
        if (done >= 0.9) lastTenth[i] = Math.max(lastTenth[i] ?? 0, kb);
      });
      return sample;
    };
    const cpuOf = (pids: number[]) => pids.reduce((sum, pid) => sum + (cpuSeconds(pid) ?? NaN), 0);

    const rssStart = workers.map((pid) => rssKb(pid));
    const redisCpu0 = await redisCpuSeconds(ctx.redis);
    const workerCpu0 = cpuOf(allPids);
    const supervisors = allPids.filter((pid) => !workers.includes(pid)); // tsq-cluster's primary
    const supervisorCpu0 = cpuOf(supervisors);
    const benchCpu0 = process.cpuUsage();
    const ours = [...allPids, process.pid, ...(ctx.redisPid ? [ctx.redisPid] : []), ...ctx.spinners];
    const others0 = otherProcessesCpu(ours);
    const t0 = performance.now();
    await system.release(ctx);

    let rssAt10: (number | null)[] | null = null;
    let crossed90 = false;
    let last = jobs;
    let lastChange = t0;
    let nextSample = t0 + 100;
    for (;;) {
      const remaining = await system.remaining(ctx);
      const now = performance.now();
      if (remaining === 0) break;
      if (remaining !== last) {
        last = remaining;
        lastChange = now;
      } else if (now - lastChange > 60_000) {
        throw new Error(`${system.label}: no progress for 60 s with ${remaining} jobs left${handle.describeOutput()}`);
      }
      const done = 1 - remaining / jobs;
      if (rssAt10 === null && done >= 0.1) {
        rssAt10 = sampleRss(0.1); // the moment 10% were taken closes the first tenth
        nextSample = now + 100;
      } else if ((!crossed90 && done >= 0.9) || now >= nextSample) {
        crossed90 ||= done >= 0.9;
        sampleRss(done);
        nextSample = now + 100;
      }
      handle.check();
      await sleep(10); // the end is known to ±10 ms; polling faster costs the machine under test CPU
    }
    const seconds = (performance.now() - t0) / 1000;
    const rssEnd = sampleRss(1);
    const workerCpu = cpuOf(allPids) - workerCpu0;
    const supervisorCpu = supervisors.length ? cpuOf(supervisors) - supervisorCpu0 : null;
    const redisCpu = (await redisCpuSeconds(ctx.redis)) - redisCpu0;
    const benchCpuUsage = process.cpuUsage(benchCpu0);
    const benchCpu = (benchCpuUsage.user + benchCpuUsage.system) / 1e6;
    // CPU that other processes used meanwhile: a busy machine makes every figure wrong, so say so.
    // (Processes that started and ended within the drain escape this.)
    const otherCpu = cpuBetween(others0, otherProcessesCpu(ours));
    handle.check();

    measured = {
      seconds: round(seconds, 3),
      jobsPerSecond: round(jobs / seconds),
      push: { seconds: round(pushSeconds, 3), jobsPerSecond: round(jobs / pushSeconds) },
      rssKb: {
        perChildPeak: peak.map((kb) => kb || null),
        perChildStart: rssStart,
        perChildAt10Percent: rssAt10 ?? rssEnd,
        perChildEnd: rssEnd,
        perChildFirstTenthPeak: firstTenth.map((kb) => kb || null),
        perChildLastTenthPeak: lastTenth.map((kb) => kb || null),
        perChildPeakByTenth: byTenth.map((tenths) => tenths.map((kb) => kb || null)),
        growthFirstToLastTenth: firstTenth.map((first, i) => {
          const last = lastTenth[i];
          return first && last ? round((last - first) / first, 3) : null;
        }),
      },
      workerCpuSeconds: round(workerCpu, 2),
      supervisorCpuSeconds: round(supervisorCpu, 2),
      redisCpuSeconds: round(redisCpu, 2),
      redisCpuMicrosPerJob: round((redisCpu / jobs) * 1e6, 1),
      workerCpuMicrosPerJob: round((workerCpu / jobs) * 1e6, 1),
      benchCpuSeconds: round(benchCpu, 2),
      otherCpuSeconds: round(otherCpu, 2),
    };
    if (otherCpu !== null && otherCpu > 0.1 * seconds) {
      measured.busyWarning = `other processes used ${otherCpu.toFixed(1)} CPU-s during this ${seconds.toFixed(1)} s drain (more than 10% of a core): the machine was not quiet, so this run's figures are low`;
    }

    if (latencyJobs > 0) measured.latency = await measureLatency(system, ctx, latencyJobs);
  } finally {
    stopped = await system.stop(ctx, handle).then(
      (processed) => ({ processed }),
      (error: unknown) => ({ processed: null, stopError: messageOf(error) }),
    );
  }
  const { processed } = stopped;
  const expected = jobs + (measured.latency?.jobs ?? 0);
  const allProcessed = processed === expected;
  const workerOutputLines = handle.outputLines();
  const output = workerOutputLines > 0 ? { workerOutputLines, workerOutputTail: handle.outputTail().slice(-5) } : { workerOutputLines };
  let accounting: Pick<Run, "whereabouts" | "requeuedAtStop" | "allAccountedFor" | "warning">;
  if (!allProcessed) {
    // A job the worker had popped but not started when told to stop goes back to the queue (Sidekiq
    // requeues what it fetched while quieting): not lost, and not counted as processed.
    const whereabouts = await system.whereabouts(ctx).catch(() => null);
    const requeuedAtStop = whereabouts?.queued ?? 0;
    const allAccountedFor = processed !== null && processed + requeuedAtStop === expected;
    accounting = { whereabouts, requeuedAtStop, allAccountedFor };
    if (!allAccountedFor) {
      const where = whereabouts ? ` (after the stop: ${Object.entries(whereabouts).map(([k, v]) => `${k} ${v}`).join(", ")})` : "";
      accounting.warning = `${system.label} P=${processes} C=${concurrency} reports ${processed ?? "no count of"} processed jobs, expected ${expected}${where}`;
    }
  } else {
    accounting = { requeuedAtStop: 0, allAccountedFor: true };
  }
  // The keys in the order earlier versions of the bench wrote them.
  return {
    system: system.key,
    label: system.label,
    processes,
    concurrency,
    fetch: system.key === "tsq" ? fetch : undefined,
    jobs,
    ...measured,
    ...(stopped.stopError === undefined ? {} : { stopError: stopped.stopError }),
    processed,
    allProcessed,
    ...output,
    ...accounting,
  };
}

// ---------------------------------------------------------------------------------------------------

function ratio(a: number | null | undefined, b: number | null | undefined): number | null {
  return a && b ? round(a / b, 2) : null;
}

const median = (values: readonly (number | null | undefined)[]): number | null => {
  const sorted = values.filter((v): v is number => v !== null && v !== undefined && Number.isFinite(v)).sort((a, b) => a - b);
  // The middle one, or the mean of the middle two (for an odd count these are one and the same).
  const lower = sorted[(sorted.length - 1) >> 1];
  const upper = sorted[sorted.length >> 1];
  if (lower === undefined || upper === undefined) return null;
  return sorted.length % 2 ? upper : (lower + upper) / 2;
};

/** `n` with `digits` decimals, or "n/a". */
const fixed = (n: number | null | undefined, digits: number): string => n?.toFixed(digits) ?? "n/a";

/** Per (system, P, C): medians over the rounds (--repeat), with the spread of jobs/s. */
function summarize(runs: readonly Run[]): Summary[] {
  const groups = new Map<string, [Run, ...Run[]]>();
  for (const run of runs) {
    const key = `${run.system}|${run.processes}|${run.concurrency}`;
    const group = groups.get(key);
    if (group) group.push(run);
    else groups.set(key, [run]);
  }
  return [...groups.values()].map((all) => {
    const [first] = all;
    // Rounds during which other processes took CPU do not count, unless every round was like that.
    const quiet = all.filter((r) => !r.busyWarning);
    const group = quiet.length ? quiet : all;
    const pick = <T>(f: (run: Run) => T): T[] => group.map(f);
    const latency = group.some((r) => r.latency)
      ? {
          p50Ms: round(median(pick((r) => r.latency?.p50Ms)), 3),
          p99Ms: round(median(pick((r) => r.latency?.p99Ms)), 3),
          maxMs: round(Math.max(...pick((r) => r.latency?.maxMs ?? -Infinity)), 3),
        }
      : undefined;
    return {
      system: first.system,
      label: first.label,
      processes: first.processes,
      concurrency: first.concurrency,
      rounds: all.length,
      busyRoundsLeftOut: all.length - group.length,
      jobsPerSecond: round(median(pick((r) => r.jobsPerSecond))),
      // (Math.min/max read a null as 0.)
      minJobsPerSecond: Math.min(...pick((r) => r.jobsPerSecond ?? 0)),
      maxJobsPerSecond: Math.max(...pick((r) => r.jobsPerSecond ?? 0)),
      seconds: round(median(pick((r) => r.seconds)), 3),
      workerCpuMicrosPerJob: round(median(pick((r) => r.workerCpuMicrosPerJob)), 1),
      redisCpuMicrosPerJob: round(median(pick((r) => r.redisCpuMicrosPerJob)), 1),
      rssPeakKb: Math.max(...group.flatMap((r) => r.rssKb.perChildPeak.map((kb) => kb ?? 0))),
      latency,
      allAccountedFor: all.every((r) => r.allAccountedFor),
    };
  });
}

const perChild = (values: readonly (number | null)[] | undefined, format: (value: number | null) => string): string =>
  values?.length ? values.map((value) => format(value)).join("/") : "n/a";

function runRows(runs: readonly Run[], rounds: number): Cell[][] {
  return runs.map((r) => [
    r.label + (rounds > 1 ? ` #${r.round}` : ""),
    r.processes,
    r.concurrency,
    fmtInt(r.jobsPerSecond),
    r.seconds?.toFixed(2) ?? "n/a",
    fmtInt(r.push?.jobsPerSecond),
    perChild(r.rssKb?.perChildPeak, fmtMb),
    perChild(r.rssKb?.perChildFirstTenthPeak, fmtMb) + " → " + perChild(r.rssKb?.perChildLastTenthPeak, fmtMb),
    (r.workerCpuSeconds?.toFixed(1) ?? "n/a") + (r.supervisorCpuSeconds !== null && r.supervisorCpuSeconds !== undefined ? ` (sup. ${r.supervisorCpuSeconds.toFixed(1)})` : ""),
    r.redisCpuSeconds?.toFixed(1) ?? "n/a",
    r.redisCpuMicrosPerJob?.toFixed(0) ?? "n/a",
    `${fmtInt(r.processed)}${r.requeuedAtStop ? ` + ${fmtInt(r.requeuedAtStop)} requeued` : ""}${r.allAccountedFor ? " ✓" : " ✗"}`,
  ]);
}

const RUN_HEADER = ["system", "P", "C", "jobs/s", "wall s", "push jobs/s", "RSS peak MB", "RSS first→last 10% MB", "worker CPU s", "Redis CPU s", "Redis µs/job", "processed"];

/** The issue's targets that this report can judge (issue 7, "Targets"). */
function targets(report: Report): string[] {
  const out: string[] = [];
  const tsqRuns = report.summary.filter((r) => r.system === "tsq");
  const verdict = (ok: boolean) => (ok ? "met" : "MISSED");
  for (const r of report.ratios) {
    if (r.processes !== 1 || r.concurrency !== 50 || r.ratio === null) continue;
    const goal = r.peer === "BullMQ" ? 2 : 4;
    out.push(`tsq/${r.peer} at P=1 C=50 ≥ ${goal}×: ${r.ratio.toFixed(2)}× (${verdict(r.ratio >= goal)})`);
  }
  for (const r of tsqRuns.filter((run) => run.processes === 2)) {
    const one = tsqRuns.find((run) => run.processes === 1 && run.concurrency === r.concurrency);
    // (A comparison reads a null as 0.)
    const perSecond = r.jobsPerSecond ?? 0;
    out.push(
      `tsq P=2 C=${r.concurrency} ≥ 80,000 jobs/s: ${fmtInt(r.jobsPerSecond)} (${verdict(perSecond >= 80_000)})` +
        (one ? `; more than P=1: ${fmtInt(one.jobsPerSecond)} (${verdict(perSecond > (one.jobsPerSecond ?? 0))})` : ""),
    );
  }
  for (const { processes, concurrency, latency } of tsqRuns) {
    if (!latency) continue;
    const { p50Ms, p99Ms } = latency;
    out.push(`tsq P=${processes} C=${concurrency} latency p50 < 1 ms: ${fixed(p50Ms, 2)} ms (${verdict(p50Ms !== null && p50Ms < 1)}); p99 < 5 ms: ${fixed(p99Ms, 2)} ms (${verdict(p99Ms !== null && p99Ms < 5)})`);
  }
  for (const r of report.runs.filter((run) => run.system === "tsq" && run.jobs >= 1_000_000)) {
    // The target's own reading: a child's RSS when 10% of the jobs were done against at the end.
    const growth = (from: number | null | undefined, to: number | null | undefined) => (from && to ? (to - from) / from : Infinity);
    const pointGrowth = Math.max(...r.rssKb.perChildAt10Percent.map((at10, i) => growth(at10, r.rssKb.perChildEnd[i])));
    // Peaks of windows, which the V8 heap's saw-tooth cannot hide: first tenth → last, and second → last
    // (the heap reaches its working size during the first tenth; from the second on, growth is a leak).
    const worst = Math.max(...r.rssKb.growthFirstToLastTenth.map((g) => g ?? Infinity));
    const later = Math.max(...(r.rssKb.perChildPeakByTenth ?? []).map((tenths) => growth(tenths[1], tenths[9])));
    const signed = (g: number) => `${g >= 0 ? "+" : ""}${(g * 100).toFixed(1)}%`;
    const perChild = r.processes > 1 ? ` (${fmtInt(r.jobs / r.processes)} per child)` : "";
    out.push(
      `tsq P=${r.processes} C=${r.concurrency} child RSS after ${fmtInt(r.jobs)} jobs${perChild} within 10% of after the first ${fmtInt(r.jobs / 10)}: ` +
        `${signed(pointGrowth)} (${verdict(pointGrowth <= 0.1)}); peak per tenth, first → last ${signed(worst)}, second → last ${signed(later)}`,
    );
  }
  return out;
}

function printReport(report: Report): void {
  const { machine, options } = report;
  const md = options.markdown;
  const say = (line = "") => console.log(line);
  const bullet = (line: string) => say(md ? `- ${line}` : `  ${line}`);
  const peers = Object.values(report.peers)
    .map((p) => (p.available ? `${p.label} ${p.version}${p.ruby ? ` (Ruby ${p.ruby})` : ""}` : `${p.label}: skipped`))
    .join(" · ");
  say(
    `tsq ${machine.tsq} · Node ${machine.node} · Redis ${machine.redis} (${machine.redisWhere}) · ${machine.cpus} CPUs (${machine.cpuModel}), ` +
      `load ${machine.loadAverage1m} before, Redis PING ${machine.redisPingMicrosP50} µs${machine.warmCpus ? ", CPUs kept warm (--warm-cpus)" : ""}` +
      `${peers ? ` · ${peers}` : ""}${md ? "  " : ""}`,
  );
  say(
    `${fmtInt(options.jobs)} no-op jobs per run, pushed before the clock; clock = release → queue empty; tsq fetch ${options.fetch}; ` +
      `worker logs at warn (TSQ_LOG_LEVEL=warn; Sidekiq logger WARN)`,
  );
  for (const p of Object.values(report.peers)) if (!p.available) bullet(`skipped ${p.label}: ${p.reason}`);
  say();

  const runs = report.runs;
  const rounds = options.repeat;
  say(table(RUN_HEADER, runRows(runs, rounds)));
  say();
  say("RSS: per worker process, a/b/… with several; first→last 10%: peak while the first tenth of the jobs was taken → peak over the last tenth.");
  say("CPU: user+sys seconds during the drain; worker CPU counts every process of the system, tsq-cluster's supervisor included (sup.).");
  say("processed: the system's own count after a graceful stop (✓ = every job pushed, latency jobs included; \"requeued\" = popped but not started when the stop came, pushed back by the worker).");

  for (const r of runs.filter((run) => run.jobs >= 1_000_000)) {
    const curves = (r.rssKb.perChildPeakByTenth ?? []).map((tenths) => tenths.map(fmtMb).join(" "));
    say();
    say(`${r.label} P=${r.processes} C=${r.concurrency}: RSS peak per tenth of the ${fmtInt(r.jobs)} jobs, MB (per child): ${curves.join(" | ")}`);
  }

  const withLatency = runs.filter((r): r is Run & { latency: Latency } => Boolean(r.latency));
  const [firstWithLatency] = withLatency;
  if (firstWithLatency) {
    say();
    say(`enqueue→start latency on idle workers, ${fmtInt(firstWithLatency.latency.jobs)} jobs pushed one at a time:`);
    say();
    say(
      table(
        ["system", "P", "C", "p50 ms", "p90 ms", "p99 ms", "max ms", "mean ms"],
        withLatency.map((r) => {
          const { p50Ms, p90Ms, p99Ms, maxMs, meanMs } = r.latency;
          const label = r.label + (rounds > 1 ? ` #${r.round}` : "");
          return [label, r.processes, r.concurrency, ...[p50Ms, p90Ms, p99Ms, maxMs, meanMs].map((ms) => fixed(ms, 2))];
        }),
      ),
    );
  }

  if (rounds > 1) {
    say();
    const leftOut = report.summary.reduce((n, r) => n + r.busyRoundsLeftOut, 0);
    say(`median of ${rounds} rounds (the systems took turns)${leftOut ? `; ${leftOut} round(s) on a busy machine (see the warnings) left out` : ""}:`);
    say();
    say(
      table(
        ["system", "P", "C", "jobs/s", "min–max", "wall s", "worker µs/job", "Redis µs/job", "RSS peak MB", ...(report.summary.some((r) => r.latency) ? ["latency p50/p99 ms"] : [])],
        report.summary.map((r) => [
          r.label,
          r.processes,
          r.concurrency,
          fmtInt(r.jobsPerSecond),
          `${fmtInt(r.minJobsPerSecond)}–${fmtInt(r.maxJobsPerSecond)}`,
          fixed(r.seconds, 2),
          r.workerCpuMicrosPerJob?.toFixed(0) ?? "n/a",
          r.redisCpuMicrosPerJob?.toFixed(0) ?? "n/a",
          fmtMb(r.rssPeakKb),
          ...(r.latency ? [`${fixed(r.latency.p50Ms, 2)}/${fixed(r.latency.p99Ms, 2)}`] : []),
        ]),
      ),
    );
  }

  if (report.sweep) {
    const systems = [...new Set(runs.map((r) => r.label))];
    const header = ["P", "C", ...systems.map((s) => `${s} jobs/s`), ...systems.filter((s) => s !== "tsq").map((s) => `tsq/${s}`)];
    const rows = report.sweep.map(({ processes, concurrency }) => {
      const find = (label: string) => report.summary.find((r) => r.label === label && r.processes === processes && r.concurrency === concurrency);
      const tsq = find("tsq");
      return [
        processes,
        concurrency,
        ...systems.map((s) => fmtInt(find(s)?.jobsPerSecond)),
        ...systems.filter((s) => s !== "tsq").map((s) => `${ratio(tsq?.jobsPerSecond, find(s)?.jobsPerSecond)?.toFixed(2) ?? "n/a"}×`),
      ];
    });
    say();
    say(`sweep (jobs/s${rounds > 1 ? `, median of ${rounds}` : ""}):`);
    say();
    say(table(header, rows));
  } else if (report.ratios.length) {
    say();
    for (const r of report.ratios) {
      bullet(`tsq / ${r.peer} at P=${r.processes} C=${r.concurrency}: ${r.ratio?.toFixed(2) ?? "n/a"}×${rounds > 1 ? " (medians)" : ""}`);
    }
  }

  const goals = targets(report);
  if (goals.length) {
    say();
    say("targets (issue 7):");
    if (md) say();
    for (const line of goals) bullet(line);
  }

  if (report.discardedBusyRuns?.length) {
    say();
    say(`${report.discardedBusyRuns.length} run(s) on a busy machine were redone (--retry-busy); not shown above: ` +
      report.discardedBusyRuns.map((r) => `${r.label} P=${r.processes} C=${r.concurrency} ${fmtInt(r.jobsPerSecond)} jobs/s`).join(", "));
  }

  for (const r of runs) {
    const where = `${r.label} P=${r.processes} C=${r.concurrency}${rounds > 1 ? ` #${r.round}` : ""}`;
    if (r.warning) say(`\nWARNING: ${r.warning}`);
    if (r.busyWarning) say(`\nWARNING: ${where}: ${r.busyWarning}`);
    if (r.stopError) say(`\nWARNING: ${where} did not stop cleanly: ${r.stopError}`);
    if (r.workerOutputLines > 0) say(`\nnote: ${where} printed ${r.workerOutputLines} line(s), last:\n  ${(r.workerOutputTail ?? []).join("\n  ")}`);
  }
}

// ---------------------------------------------------------------------------------------------------

async function main(): Promise<void> {
  let options: Options;
  try {
    options = parseOptions(process.argv.slice(2));
  } catch (error) {
    console.error(`bench: ${messageOf(error)}\n\n${USAGE}`);
    process.exit(2);
  }
  if (options.report) {
    const report: unknown = JSON.parse(readFileSync(options.report, "utf8"));
    if (!isReport(report)) throw new Error(`${options.report} is not a report saved with --save`);
    if (options.markdown) useMarkdownTables();
    report.options.markdown = options.markdown;
    printReport(report);
    return;
  }
  installCleanupHandlers();

  // tsq itself, as built beside this file (dist/src/index.js).
  let tsqModule: typeof import("../src/index.js");
  try {
    tsqModule = await import("../src/index.js");
  } catch (error) {
    throw new Error(`dist/ is missing or broken; run \`npm run build\` (or use \`npm run bench\`): ${messageOf(error)}`);
  }
  const { Redis } = await import("ioredis");

  let redisUrl = options.redisUrl;
  let redisWhere = "from --redis-url";
  let ownRedis: PrivateRedis | undefined;
  if (!redisUrl) {
    ownRedis = await startRedis();
    redisUrl = ownRedis.url;
    redisWhere = `private, 127.0.0.1:${ownRedis.port}`;
  }
  const redis = new Redis(redisUrl, { maxRetriesPerRequest: 3 });
  const client = new tsqModule.Client({ redis: redisUrl });
  // After a Ctrl-C the server may go before these connections: that is not worth a stack trace.
  redis.on("error", () => {});
  client.redis.on("error", () => {});
  onCleanup(() => {
    redis.disconnect();
    client.redis.disconnect();
  });
  const workDir = makeTempDir("tsq-bench-work-");
  const ctx: BenchContext = { url: redisUrl, redis, client, workDir, redisPid: undefined, spinners: [] };
  try {
    if (options.redisUrl && (await redis.dbsize()) > 0) {
      throw new UsageError(`the database of ${options.redisUrl} is not empty; the bench flushes it between runs, so give an empty one (e.g. …/13)`);
    }
    const serverInfo = await redis.info("server");
    const redisVersion = /redis_version:(\S+)/.exec(serverInfo)?.[1] ?? "unknown";
    // Its CPU is Redis's, not "other processes'" (a --redis-url server on this machine too).
    ctx.redisPid = Number(/process_id:(\d+)/.exec(serverInfo)?.[1]) || ownRedis?.child.pid;

    const pingMicros = await pingRoundTrip(redis);
    if (options.warmCpus) ctx.spinners = startSpinners();

    const systems: System[] = [tsqSystem(root, tsqModule.VERSION)];
    const peers: Record<string, PeerInfo> = {};
    for (const name of options.peers) {
      const system = name === "bullmq" ? bullmqSystem(root) : sidekiqSystem(root);
      const probe = await system.probe();
      peers[name] = { label: system.label, ...probe };
      if (probe.available) systems.push(system);
      else if (!options.json) console.error(`bench: skipping ${system.label}: ${probe.reason}`);
    }

    const configs: Config[] = options.sweep
      ? [1, 2, 4].flatMap((processes) => [10, 50].map((concurrency) => ({ processes, concurrency })))
      : [{ processes: options.processes, concurrency: options.concurrency }];

    const runs: Run[] = [];
    const discarded: Run[] = []; // busy runs redone (--retry-busy)
    for (const config of configs) {
      for (let turn = 1; turn <= options.repeat; turn++) {
        for (const system of systems) {
          const which = `${system.label} P=${config.processes} C=${config.concurrency}${options.repeat > 1 ? ` #${turn}` : ""}`;
          if (!options.json) process.stderr.write(`bench: ${which}, ${fmtInt(options.jobs)} jobs…\n`);
          let run: Run;
          for (let attempt = 0; ; attempt++) {
            run = await runOne(system, ctx, { ...options, ...config });
            run.round = turn;
            if (!run.busyWarning || attempt >= options.retryBusy) break;
            discarded.push(run);
            if (!options.json) process.stderr.write(`bench:   ${fmtInt(run.jobsPerSecond)} jobs/s on a busy machine; waiting for quiet to redo it…\n`);
            await redis.flushdb();
            await waitForQuiet(ctx);
          }
          runs.push(run);
          if (!options.json) process.stderr.write(`bench:   ${fmtInt(run.jobsPerSecond)} jobs/s\n`);
          await redis.flushdb();
        }
      }
    }

    const summary = summarize(runs);
    const ratios: Ratio[] = [];
    for (const peer of summary.filter((s) => s.system !== "tsq")) {
      const tsq = summary.find((s) => s.system === "tsq" && s.processes === peer.processes && s.concurrency === peer.concurrency);
      ratios.push({ peer: peer.label, processes: peer.processes, concurrency: peer.concurrency, ratio: ratio(tsq?.jobsPerSecond, peer.jobsPerSecond) });
    }

    const report: Report = {
      machine: {
        tsq: tsqModule.VERSION,
        node: process.version,
        redis: redisVersion,
        redisWhere,
        cpus: availableParallelism(),
        cpuModel: cpus()[0]?.model?.trim() ?? "unknown",
        loadAverage1m: round(loadavg()[0], 2),
        redisPingMicrosP50: pingMicros,
        warmCpus: options.warmCpus,
        platform: `${process.platform} ${process.arch}`,
      },
      options: { ...options, redisUrl: options.redisUrl ?? null, workerLogLevel: "warn" },
      peers,
      runs,
      discardedBusyRuns: discarded,
      summary,
      ratios,
      sweep: options.sweep ? configs : undefined,
      date: new Date().toISOString(),
    };
    if (options.save) writeFileSync(options.save, `${JSON.stringify(report, null, 2)}\n`);
    if (options.json) console.log(JSON.stringify(report));
    else {
      if (options.markdown) useMarkdownTables();
      printReport(report);
    }
    if (runs.some((r) => !r.allAccountedFor)) process.exitCode = 1;
  } finally {
    await client.close().catch(() => {});
    redis.disconnect();
    await cleanupAll();
  }
}

main()
  .catch((error: unknown) => {
    if (isInterrupted()) return new Promise(() => {}); // the signal handler cleans up and exits
    console.error(
      error instanceof UsageError ? `bench: ${error.message}` : `bench failed: ${error instanceof Error ? (error.stack ?? error) : error}`,
    );
    process.exitCode = error instanceof UsageError ? 2 : 1;
  })
  .finally(() => process.exit());
