// `npm run bench`: worker throughput, latency and footprint, in the manner of Sidekiq's bin/sidekiqload.
// `npm run bench` builds, then runs this file compiled (node dist/scripts/bench.js); with it
// scripts/bench/options.ts (flags), measure.ts (one run), report.ts (tables, targets), lib.ts (processes, /proc, statistics), scripts/bench/systems.ts (tsq, BullMQ, Sidekiq),
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
// since it is flushed between runs). Workers log at warn (TSQ_LOG_LEVEL=warn, Sidekiq's logger WARN;
// --log-level changes tsq's).
//
// With --compare, the bench is also the guard of a change: it exits 3 when, for a fetch, this
// checkout's worker CPU per job is more than 5% above the other's or its RSS peak more than 10% above
// (guard.ts), after printing the report and the figures that failed.
import { readFileSync, writeFileSync } from "node:fs";
import { availableParallelism, cpus, loadavg } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import {
  cleanupAll,
  fmtInt,
  installCleanupHandlers,
  isInterrupted,
  onCleanup,
  makeTempDir,
  messageOf,
  round,
  startRedis,
  useMarkdownTables,
  type PrivateRedis,
} from "./bench/lib.js";
import {
  bullmqSystem,
  sidekiqSystem,
  tsqSystem,
  type BenchContext,
  type FetchStrategy,
  type System,
} from "./bench/systems.js";

import type { Options } from "./bench/options.js";
import { USAGE, parseOptions, UsageError } from "./bench/options.js";
import type { Run, Ratio, PeerInfo, Config, Report } from "./bench/report.js";
import { isReport, ratio, summarize } from "./bench/report.js";
import { printReport } from "./bench/print.js";
import { guardFailures } from "./bench/guard.js";
import { pingRoundTrip, waitForQuiet, startSpinners, runOne } from "./bench/measure.js";

// This file runs as dist/scripts/bench.js: the repository is two levels up.
const root = join(dirname(fileURLToPath(import.meta.url)), "../..");

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
  // eslint-disable-next-line @typescript-eslint/consistent-type-imports -- the module is loaded late, so a missing dist/ gets its own message
  let tsqModule: typeof import("../src/index.js");
  try {
    tsqModule = await import("../src/index.js");
  } catch (error) {
    throw new Error(
      `dist/ is missing or broken; run \`npm run build\` (or use \`npm run bench\`): ${messageOf(error)}`,
      { cause: error },
    );
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
  const ctx: BenchContext = {
    url: redisUrl,
    redis,
    client,
    workDir,
    redisPid: undefined,
    spinners: [],
    logLevel: options.logLevel,
  };
  try {
    if (options.redisUrl && (await redis.dbsize()) > 0) {
      throw new UsageError(
        `the database of ${options.redisUrl} is not empty; the bench flushes it between runs, so give an empty one (e.g. …/13)`,
      );
    }
    const serverInfo = await redis.info("server");
    const redisVersion = /redis_version:(\S+)/.exec(serverInfo)?.[1] ?? "unknown";
    // Its CPU is Redis's, not "other processes'" (a --redis-url server on this machine too).
    ctx.redisPid = Number(/process_id:(\d+)/.exec(serverInfo)?.[1]) || ownRedis?.child.pid;

    const loadAverage1m = loadavg()[0];
    const pingMicros = await pingRoundTrip(redis);
    if (options.warmCpus) ctx.spinners = startSpinners();

    const fetches: (FetchStrategy | undefined)[] = options.fetch === "both" ? ["basic", "reliable"] : [undefined];
    const systems: System[] = fetches.flatMap((fetch) => [
      tsqSystem(root, tsqModule.VERSION, fetch, false, options.nodeArgs),
      ...(options.compare ? [tsqSystem(options.compare, versionAt(options.compare), fetch, true)] : []),
    ]);
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
            if (!options.json)
              process.stderr.write(
                `bench:   ${fmtInt(run.jobsPerSecond)} jobs/s on a busy machine; waiting for quiet to redo it…\n`,
              );
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
    for (const peer of summary.filter((s) => !s.system.startsWith("tsq"))) {
      const tsq = summary.find(
        (s) => s.system === "tsq" && s.processes === peer.processes && s.concurrency === peer.concurrency,
      );
      ratios.push({
        peer: peer.label,
        processes: peer.processes,
        concurrency: peer.concurrency,
        ratio: ratio(tsq?.jobsPerSecond, peer.jobsPerSecond),
      });
    }

    const report: Report = {
      machine: {
        tsq: tsqModule.VERSION,
        node: process.version,
        redis: redisVersion,
        redisWhere,
        cpus: availableParallelism(),
        cpuModel: cpus()[0]?.model?.trim() ?? "unknown",
        loadAverage1m: round(loadAverage1m, 2),
        loadAverage1mAfter: round(loadavg()[0], 2),
        redisPingMicrosP50: pingMicros,
        warmCpus: options.warmCpus,
        platform: `${process.platform} ${process.arch}`,
      },
      options: { ...options, redisUrl: options.redisUrl ?? null, workerLogLevel: options.logLevel },
      peers,
      runs,
      discardedBusyRuns: discarded,
      summary,
      ratios,
      fetchRatios: summary
        .filter((s) => s.system === "tsq-reliable")
        .map((reliable) => {
          const basic = summary.find(
            (s) => s.system === "tsq" && s.processes === reliable.processes && s.concurrency === reliable.concurrency,
          );
          return { ...pick(reliable), ratio: ratio(reliable.jobsPerSecond, basic?.jobsPerSecond) };
        }),
      changeRatios: summary
        .filter((s) => s.system.endsWith("-before"))
        .map((before) => {
          const now = summary.find(
            (s) =>
              s.system === before.system.replace(/-before$/, "") &&
              s.processes === before.processes &&
              s.concurrency === before.concurrency,
          );
          return {
            ...pick(before),
            // One fetch (not both): the systems have no fetch of their own; the option is theirs.
            fetch: before.system.includes("reliable") || options.fetch === "reliable" ? "reliable" : "basic",
            ratio: ratio(now?.jobsPerSecond, before.jobsPerSecond),
            workerCpuMicrosPerJob: now?.workerCpuMicrosPerJob ?? null,
            workerCpuMicrosPerJobBefore: before.workerCpuMicrosPerJob,
            rssPeakKb: now?.rssPeakKb ?? null,
            rssPeakKbBefore: before.rssPeakKb,
          };
        }),
      sweep: options.sweep ? configs : undefined,
      date: new Date().toISOString(),
    };
    report.guardFailures = options.compare ? guardFailures(report) : undefined;
    if (options.save) writeFileSync(options.save, `${JSON.stringify(report, null, 2)}\n`);
    if (options.json) console.log(JSON.stringify(report));
    else {
      if (options.markdown) useMarkdownTables();
      printReport(report);
    }
    if (report.guardFailures?.length) {
      console.error(`bench: worse than ${options.compare}:\n  ${report.guardFailures.join("\n  ")}`);
      process.exitCode = 3;
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
      error instanceof UsageError
        ? `bench: ${error.message}`
        : `bench failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`,
    );
    process.exitCode = error instanceof UsageError ? 2 : 1;
  })
  .finally(() => process.exit());

/** The version in a checkout's package.json ("unknown" when it cannot be read). */
function versionAt(root: string): string {
  try {
    const { version } = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { version?: unknown };
    return typeof version === "string" ? version : "unknown";
  } catch {
    return "unknown";
  }
}

const pick = ({ processes, concurrency }: { processes: number; concurrency: number }) => ({ processes, concurrency });
