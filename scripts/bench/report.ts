// What a bench run records: one record per run, the medians over rounds, the ratios to peers, and the
// shape of a saved report (--save, --report).
import { round } from "./lib.js";
import { type FetchStrategy, type Probe, type SystemKey, type Whereabouts } from "./systems.js";

import type { Options } from "./options.js";

export interface Latency {
  jobs: number;
  p50Ms: number | null;
  p90Ms: number | null;
  p99Ms: number | null;
  maxMs: number | null;
  meanMs: number | null;
}

/** RSS in KB per worker process (null: not sampled, e.g. no /proc). */
export interface RssKb {
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
export interface Measured {
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
export interface Run extends Measured {
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
export interface Summary {
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

export interface Ratio {
  peer: string;
  processes: number;
  concurrency: number;
  ratio: number | null;
}

export type PeerInfo = { label: string } & Probe;

export interface Config {
  processes: number;
  concurrency: number;
}

/** What --json prints and --save writes (and --report reads back). */
export interface Report {
  machine: {
    tsq: string;
    node: string;
    redis: string;
    redisWhere: string;
    cpus: number;
    cpuModel: string;
    loadAverage1m: number | null;
    /** Absent from reports saved before it was added. */
    loadAverage1mAfter?: number | null;
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
  /** --fetch both: reliable fetch's jobs/s over basic fetch's, per (P, C). */
  fetchRatios?: { processes: number; concurrency: number; ratio: number | null }[];
  /** --compare: this checkout's jobs/s over the other's, and both CPU costs per job (µs), per fetch and (P, C). */
  changeRatios?: {
    processes: number;
    concurrency: number;
    fetch: FetchStrategy;
    ratio: number | null;
    workerCpuMicrosPerJob: number | null;
    workerCpuMicrosPerJobBefore: number | null;
    /** Absent from reports saved before the guard. */
    rssPeakKb?: number | null;
    rssPeakKbBefore?: number | null;
  }[];
  /** --compare: the figures that grew past the guard's limits (guard.ts); empty when none did. */
  guardFailures?: string[];
  sweep?: Config[];
  date: string;
}

export const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null;

/**
 * A --report file is JSON from outside: check that it is shaped like a saved report (the parts every
 * version of the bench wrote) before printing it.
 */
export function isReport(value: unknown): value is Report {
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

export function ratio(a: number | null | undefined, b: number | null | undefined): number | null {
  return a && b ? round(a / b, 2) : null;
}

export const median = (values: readonly (number | null | undefined)[]): number | null => {
  const sorted = values
    .filter((v): v is number => v !== null && v !== undefined && Number.isFinite(v))
    .sort((a, b) => a - b);
  // The middle one, or the mean of the middle two (for an odd count these are one and the same).
  const lower = sorted[(sorted.length - 1) >> 1];
  const upper = sorted[sorted.length >> 1];
  if (lower === undefined || upper === undefined) return null;
  return sorted.length % 2 ? upper : (lower + upper) / 2;
};

/** `n` with `digits` decimals, or "n/a". */
export const fixed = (n: number | null | undefined, digits: number): string => n?.toFixed(digits) ?? "n/a";

/** Per (system, P, C): medians over the rounds (--repeat), with the spread of jobs/s. */
export function summarize(runs: readonly Run[]): Summary[] {
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
