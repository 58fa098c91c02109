// Measuring one system at one (processes, concurrency): the machine's quiet and round trip, the drain,
// the latency run and the stop that must account for every job.
import { availableParallelism, setPriority } from "node:os";

import { performance } from "node:perf_hooks";
import {
  cpuSeconds,
  otherProcessesCpu,
  cpuBetween,
  messageOf,
  percentile,
  redisCpuSeconds,
  round,
  rssKb,
  sleep,
  spawnTracked,
} from "./lib.js";
import { type BenchContext, type System } from "./systems.js";
import type { Redis } from "ioredis";
import type { Options } from "./options.js";
import type { Latency, Measured, Run } from "./report.js";

/** Median µs of 2,000 sequential PINGs: what one round trip costs on this machine right now. */
export async function pingRoundTrip(redis: Redis): Promise<number | null> {
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
export async function waitForQuiet(ctx: BenchContext): Promise<void> {
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
export function startSpinners(): number[] {
  return Array.from({ length: availableParallelism() }, () => {
    const child = spawnTracked("spinner", process.execPath, ["-e", "for (;;) {}"], { stdio: "ignore" });
    if (child.pid === undefined) return []; // did not start
    setPriority(child.pid, 19);
    return [child.pid];
  }).flat();
}

export async function measureLatency(system: System, ctx: BenchContext, count: number): Promise<Latency> {
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
export async function runOne(
  system: System,
  ctx: BenchContext,
  {
    jobs,
    processes,
    concurrency,
    fetch: given,
    latencyJobs,
  }: Pick<Options, "jobs" | "processes" | "concurrency" | "fetch" | "latencyJobs">,
): Promise<Run> {
  // "both" makes two tsq systems, each with its fetch fixed; peers ignore the value.
  const fetch = system.fetch ?? (given === "both" ? "basic" : given);
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
  const output =
    workerOutputLines > 0
      ? { workerOutputLines, workerOutputTail: handle.outputTail().slice(-5) }
      : { workerOutputLines };
  let accounting: Pick<Run, "whereabouts" | "requeuedAtStop" | "allAccountedFor" | "warning">;
  if (!allProcessed) {
    // A job the worker had popped but not started when told to stop goes back to the queue (Sidekiq
    // requeues what it fetched while quieting): not lost, and not counted as processed.
    const whereabouts = await system.whereabouts(ctx).catch(() => null);
    const requeuedAtStop = whereabouts?.queued ?? 0;
    const allAccountedFor = processed !== null && processed + requeuedAtStop === expected;
    accounting = { whereabouts, requeuedAtStop, allAccountedFor };
    if (!allAccountedFor) {
      const where = whereabouts
        ? ` (after the stop: ${Object.entries(whereabouts)
            .map(([k, v]) => `${k} ${v}`)
            .join(", ")})`
        : "";
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
    fetch: system.key.startsWith("tsq") ? fetch : undefined,
    jobs,
    ...measured,
    ...(stopped.stopError === undefined ? {} : { stopError: stopped.stopError }),
    processed,
    allProcessed,
    ...output,
    ...accounting,
  };
}
