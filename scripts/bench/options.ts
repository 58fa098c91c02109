// Options of `npm run bench`: the usage text and the parser of its command line.

import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { type FetchStrategy } from "./systems.js";

export const USAGE = `Usage: npm run bench -- [options]     (node dist/scripts/bench.js [options] after a build)

  --jobs <n>             no-op jobs per run (default 200000)
  --processes <p>        worker processes: 1 = one \`tsq\`, more = \`tsq-cluster --processes p\` (default 1)
  --concurrency <c>      job slots per process (default 50)
  --fetch <basic|reliable|both>  tsq's fetch strategy (default basic); both = the two take turns in
                         each round, and the report gives reliable / basic
  --redis-url <url>      use this Redis instead of a private redis-server; its database must be empty
                         (it is flushed between runs). Never defaults to 127.0.0.1:6379.
  --peer <list>          none | bullmq | sidekiq | all, or a comma list (default none): the same workload
                         through BullMQ and/or Ruby Sidekiq, same Redis, same P and C, with the ratio
  --sweep                P = 1, 2, 4 × C = 10, 50 (ignores --processes/--concurrency; no latency runs)
  --repeat <n>           run every (system, P, C) n times, the systems taking turns, and report the median
                         (default 1): this machine's speed drifts, so compare medians of interleaved runs
  --compare <dir>        another built tsq checkout (its bin/ and dist/), run as "tsq before" taking turns
                         with this one in every round: the cost of a change, measured in one run
                         (e.g. \`git worktree add /tmp/before <rev>\`, then npm ci and npm run build there).
                         Exits 3 when a fetch's worker CPU per job is more than 5% above the other's, or
                         its RSS peak more than 10% above, naming the figure (the guard of a change)
  --log-level <level>    TSQ_LOG_LEVEL of the tsq workers, both checkouts (default warn; info = the
                         default of a deployment: a start and a done line per job)
  --node-args=<args>     node options for this checkout's tsq processes only, space-separated (e.g.
                         --node-args="--max-semi-space-size=1"): with --compare naming this same checkout,
                         the cost of a flag
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

export type PeerName = "bullmq" | "sidekiq";
export const ALL_PEERS: readonly PeerName[] = ["bullmq", "sidekiq"];

export interface Options {
  jobs: number;
  processes: number;
  concurrency: number;
  fetch: FetchStrategy | "both";
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
  /** A built tsq checkout to run beside this one (--compare). */
  compare: string | undefined;
  /** TSQ_LOG_LEVEL of every tsq worker (--log-level). */
  logLevel: string;
  /** Node options of this checkout's tsq processes (--node-args). */
  nodeArgs: string[];
}

const LOG_LEVELS = ["trace", "debug", "info", "warn", "error", "fatal", "silent"];

export function parseOptions(argv: string[]): Options {
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
      compare: { type: "string" },
      "log-level": { type: "string", default: "warn" },
      "node-args": { type: "string", default: "" },
      help: { type: "boolean", short: "h", default: false },
    },
  });
  if (values.help) {
    console.log(USAGE);
    process.exit(0);
  }
  const integer = (
    name: "jobs" | "processes" | "concurrency" | "repeat" | "latency-jobs" | "retry-busy",
    min: number,
  ) => {
    const n = Number(values[name]);
    if (!Number.isInteger(n) || n < min)
      throw new UsageError(`--${name} must be an integer ≥ ${min}, got ${values[name]}`);
    return n;
  };
  const fetch = values.fetch;
  if (fetch !== "basic" && fetch !== "reliable" && fetch !== "both")
    throw new UsageError(`--fetch must be basic, reliable or both, got ${values.fetch}`);
  const logLevel = values["log-level"];
  if (!LOG_LEVELS.includes(logLevel))
    throw new UsageError(`--log-level must be one of ${LOG_LEVELS.join(", ")}, got ${logLevel}`);
  const peerNames = values.peer
    .split(",")
    .map((p) => p.trim().toLowerCase())
    .filter(Boolean);
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
    compare: values.compare === undefined ? undefined : builtCheckout(values.compare),
    logLevel,
    nodeArgs: values["node-args"].split(/\s+/).filter(Boolean),
  };
}

export class UsageError extends Error {}

/** The absolute path of a built tsq checkout, or a UsageError naming what is missing. */
function builtCheckout(dir: string): string {
  const root = resolve(dir);
  for (const needed of ["bin/tsq.js", "bin/tsq-cluster.js", "dist/examples/demoJobs.js", "package.json"])
    if (!existsSync(join(root, needed)))
      throw new UsageError(`--compare ${dir}: ${needed} is missing there; run npm ci and npm run build in it first`);
  return root;
}
