// The systems `npm run bench` can drive: tsq itself and the peers (BullMQ, Ruby Sidekiq). Each one
// runs the same script, so the numbers compare like with like:
//
//   probe()                       available? version; else a reason to skip
//   enqueue(ctx, n)               push n no-op jobs so that no worker can see them yet (untimed by the drain)
//   start(ctx, {processes, concurrency, fetch}) -> handle
//   ready(ctx, handle, processes) every process connected and idle, blocked in its fetch
//   release(ctx)                  make the pushed jobs visible at once: the drain clock starts here
//   remaining(ctx)                jobs still waiting (the drain ends at 0, as Sidekiq's sidekiqload does)
//   pushLatency(ctx, hrtime)      one timed job (enqueue→start latency on an idle worker)
//   stop(ctx, handle)             graceful stop; resolves the number of jobs the system says it processed
//   whereabouts(ctx)              after stop: where the jobs not counted as processed are (queued, retry…)
//
// The handle gives workerPids() (the processes that run jobs: RSS is per one of these), allPids()
// (also a supervisor, for CPU) and check(), which throws if a process died during the run.
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { Queue } from "bullmq";
import type { Redis } from "ioredis";
import type { Client } from "../../src/index.js";
import {
  blockedClients,
  childPids,
  messageOf,
  onCleanup,
  sleep,
  spawnTracked,
  stopTracked,
  type TrackedChild,
} from "./lib.js";

export type SystemKey = "tsq" | "tsq-reliable" | "tsq-before" | "tsq-reliable-before" | "bullmq" | "sidekiq";
export type FetchStrategy = "basic" | "reliable";

/** What every system is driven with: the Redis under test, tsq's client on it, a scratch directory. */
export interface BenchContext {
  url: string;
  redis: Redis;
  client: Client;
  workDir: string;
  /** redis-server's pid: its CPU is Redis's, not "other processes'". */
  redisPid: number | undefined;
  /** --warm-cpus spin loops. */
  spinners: number[];
  /** TSQ_LOG_LEVEL of the tsq workers (--log-level). */
  logLevel: string;
}

export type Probe = { available: true; version: string; ruby?: string } | { available: false; reason: string };

/** After a stop: where the jobs are that the system does not count as processed. */
export interface Whereabouts {
  queued: number;
  [place: string]: number;
}

export interface Handle {
  roots: TrackedChild[];
  workerPids(): number[];
  allPids(): number[];
  check(): void;
  describeOutput(): string;
  outputLines(): number;
  outputTail(): string[];
  markStopping(): void;
  /** Finds the worker processes once they are up (tsq-cluster's children); a no-op elsewhere. */
  discover(): void;
}

export interface System {
  key: SystemKey;
  label: string;
  /** tsq's fetch strategy when this system fixes it (--fetch both runs tsq once with each). */
  fetch?: FetchStrategy;
  probe(): Promise<Probe>;
  enqueue(ctx: BenchContext, n: number): Promise<void>;
  start(ctx: BenchContext, config: { processes: number; concurrency: number; fetch: FetchStrategy }): Promise<Handle>;
  ready(ctx: BenchContext, handle: Handle, processes: number): Promise<void>;
  release(ctx: BenchContext): Promise<unknown>;
  remaining(ctx: BenchContext): Promise<number>;
  pushLatency(ctx: BenchContext, hrtime: string): Promise<unknown>;
  stop(ctx: BenchContext, handle: Handle): Promise<number | null>;
  whereabouts(ctx: BenchContext): Promise<Whereabouts>;
}

const STAGED = "bench:staged";
const SIDEKIQ_QUEUE = "queue:default";
const BOOT_TIMEOUT_MS = 60_000;

/** Waits until `condition()` holds, or throws `what` (with the output of the processes) after `timeoutMs`. */
async function waitFor(
  condition: () => Promise<boolean>,
  what: string,
  handle: Handle,
  timeoutMs = BOOT_TIMEOUT_MS,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    handle.check();
    if (Date.now() > deadline) throw new Error(`${what} within ${timeoutMs / 1000} s${handle.describeOutput()}`);
    await sleep(25);
  }
}

/** Every process is known to Redis and at least `processes` clients sit in a blocking fetch. */
async function waitIdle(
  ctx: BenchContext,
  handle: Handle,
  processes: number,
  registered: () => Promise<boolean>,
): Promise<void> {
  await waitFor(registered, "the workers did not all register", handle);
  // A worker that polls instead of blocking would never show up here; give it 3 s, then go on.
  const deadline = Date.now() + 3_000;
  while ((await blockedClients(ctx.redis)) < processes && Date.now() < deadline) await sleep(25);
  await sleep(300); // every fetch loop settled
  handle.check();
}

/** Handle over tracked children. `workers()` lists the job-running pids. */
function makeHandle(
  name: string,
  roots: TrackedChild[],
  workers: () => number[],
  discover: () => void = () => {},
): Handle {
  let stopping = false;
  const died: string[] = [];
  for (const child of roots) {
    void child.exited.then(({ code, signal }) => {
      if (!stopping) died.push(`${name} process ${child.pid} exited (${signal ?? `code ${code}`})`);
    });
  }
  const describeOutput = () =>
    roots
      .map((child) => {
        const { tail } = child.output();
        return tail.length ? `\n--- ${name} ${child.pid}, last output:\n${tail.join("\n")}` : "";
      })
      .join("");
  return {
    roots,
    workerPids: workers,
    allPids: () => [...new Set([...roots.flatMap((c) => (c.pid === undefined ? [] : [c.pid])), ...workers()])],
    check() {
      if (died.length) throw new Error(`${died.join("; ")}${describeOutput()}`);
    },
    describeOutput,
    outputLines: () => roots.reduce((sum, child) => sum + child.output().lines, 0),
    outputTail: () => roots.flatMap((child) => child.output().tail),
    markStopping() {
      stopping = true;
    },
    discover,
  };
}

/** Sidekiq-layout push shared by tsq and Ruby Sidekiq: tsq's client (same wire format), then hidden. */
async function pushSidekiqJobs(ctx: BenchContext, n: number): Promise<void> {
  await ctx.client.pushBulk({ class: "NoopJob", args: Array.from({ length: n }, () => []) });
  // Park the list under another name so that no worker sees a job before the clock starts.
  await ctx.redis.rename(SIDEKIQ_QUEUE, STAGED);
}

/** The pids of the children that started (a failed spawn has none). */
function pidsOf(children: readonly TrackedChild[]): number[] {
  return children.flatMap((c) => (c.pid === undefined ? [] : [c.pid]));
}

async function readProcessed(ctx: BenchContext): Promise<number> {
  return Number((await ctx.redis.get("stat:processed")) ?? 0);
}

/** Sidekiq layout: what is left after the stop, to tell a lost job from a requeued or failed one. */
async function sidekiqWhereabouts(ctx: BenchContext): Promise<Whereabouts> {
  const [queued, failed, retry, dead] = await Promise.all([
    ctx.redis.llen(SIDEKIQ_QUEUE),
    ctx.redis.get("stat:failed"),
    ctx.redis.zcard("retry"),
    ctx.redis.zcard("dead"),
  ]);
  return { queued, failed: Number(failed ?? 0), retry, dead };
}

// ---------------------------------------------------------------------------------------------------

/**
 * tsq; with `fixedFetch` "reliable" it is its own system ("tsq-reliable"), beside a basic one. `before`:
 * another checkout (--compare), run as "tsq before". `nodeArgs`: node's own options for its processes.
 */
export function tsqSystem(
  root: string,
  tsqVersion: string,
  fixedFetch?: FetchStrategy,
  before = false,
  nodeArgs: readonly string[] = [],
): System {
  const jobsModule = join(root, "dist/examples/demoJobs.js");
  const reliable = fixedFetch === "reliable";
  const base = reliable ? "tsq-reliable" : "tsq";
  return {
    key: before ? `${base}-before` : base,
    label: `${reliable ? "tsq reliable" : "tsq"}${before ? " before" : ""}`,
    ...(fixedFetch === undefined ? {} : { fetch: fixedFetch }),
    probe: async () => ({ available: true, version: tsqVersion }),
    enqueue: pushSidekiqJobs,
    async start(ctx, { processes, concurrency, fetch: given }) {
      const fetch = fixedFetch ?? given;
      const common = ["-r", jobsModule, "-c", String(concurrency), "--fetch", fetch, "-t", "5", "--redis-url", ctx.url];
      const args =
        processes === 1
          ? [join(root, "bin/tsq.js"), ...common]
          : [join(root, "bin/tsq-cluster.js"), "--processes", String(processes), "--metrics-port", "0", ...common];
      const child = spawnTracked("tsq", process.execPath, [...nodeArgs, ...args], {
        cwd: ctx.workDir, // no config/tsq.yml of the caller's is picked up
        env: { ...process.env, TSQ_LOG_LEVEL: ctx.logLevel },
      });
      const pid = child.pid;
      let workers = processes === 1 && pid !== undefined ? [pid] : [];
      return makeHandle(
        "tsq",
        [child],
        () => workers,
        () => {
          if (processes > 1 && pid !== undefined) workers = childPids(pid);
        },
      );
    },
    async ready(ctx, handle, processes) {
      await waitIdle(ctx, handle, processes, async () => (await ctx.redis.scard("processes")) >= processes);
      handle.discover();
    },
    release: (ctx) => ctx.redis.rename(STAGED, SIDEKIQ_QUEUE),
    remaining: (ctx) => ctx.redis.llen(SIDEKIQ_QUEUE),
    pushLatency: (ctx, hrtime) => ctx.client.push({ class: "LatencyJob", args: [hrtime] }),
    async stop(ctx, handle) {
      handle.markStopping();
      await stopTracked(handle.roots[0], { signal: "SIGTERM", graceMs: 20_000 });
      return readProcessed(ctx);
    },
    whereabouts: sidekiqWhereabouts,
  };
}

// ---------------------------------------------------------------------------------------------------

/** What the bench puts in a BullMQ job: nothing (noop), or the push time (latency). */
export interface BullmqJobData {
  t?: string;
}

/** IPC from a bullmq-worker process. */
export type BullmqWorkerMessage = { type: "ready"; pid?: number } | { type: "done"; completed: number; failed: number };

/** A message from the worker process is untyped: check it is one of ours. */
function asWorkerMessage(message: unknown): BullmqWorkerMessage | null {
  if (typeof message !== "object" || message === null || !("type" in message)) return null;
  if (message.type === "ready") return { type: "ready" };
  if (
    message.type === "done" &&
    "completed" in message &&
    typeof message.completed === "number" &&
    "failed" in message &&
    typeof message.failed === "number"
  ) {
    return { type: "done", completed: message.completed, failed: message.failed };
  }
  return null;
}

export function bullmqSystem(root: string): System {
  // Forked by the bench: the compiled scripts/bench/bullmq-worker.ts.
  const script = join(root, "dist/scripts/bench/bullmq-worker.js");
  const QUEUE = "bench";
  // eslint-disable-next-line @typescript-eslint/consistent-type-imports -- bullmq is optional: loaded only when asked for
  let bullmq: typeof import("bullmq") | undefined;
  let queue: Queue<BullmqJobData, void, "noop" | "latency"> | undefined;
  let queueConnection: Redis | undefined;
  const counts = new Map<TrackedChild, { completed: number; failed: number }>(); // child -> {completed, failed}
  const readyChildren = new Set<TrackedChild>(); // children that reported "ready"
  return {
    key: "bullmq",
    label: "BullMQ",
    async probe() {
      try {
        bullmq = await import("bullmq");
        const manifest: unknown = JSON.parse(readFileSync(join(root, "node_modules/bullmq/package.json"), "utf8"));
        const version =
          typeof manifest === "object" &&
          manifest !== null &&
          "version" in manifest &&
          typeof manifest.version === "string"
            ? manifest.version
            : "unknown";
        return { available: true, version };
      } catch (error) {
        return {
          available: false,
          reason: `bullmq (a devDependency) is not installed; run \`npm ci\` without --omit=dev: ${messageOf(error)}`,
        };
      }
    },
    async enqueue(ctx, n) {
      if (!bullmq) throw new Error("BullMQ: enqueue() before a successful probe()");
      const { Redis } = await import("ioredis");
      const connection = new Redis(ctx.url, { maxRetriesPerRequest: null });
      queueConnection = connection;
      connection.on("error", () => {});
      const q = new bullmq.Queue<BullmqJobData, void, "noop" | "latency">(QUEUE, { connection });
      queue = q;
      q.on("error", () => {}); // after a Ctrl-C, Redis may be gone first
      onCleanup(() => queueConnection?.disconnect());
      await q.waitUntilReady();
      // Paused: jobs wait in the list but no worker takes one until resume() starts the clock.
      await q.pause();
      const CHUNK = 1_000;
      for (let i = 0; i < n; i += CHUNK) {
        const size = Math.min(CHUNK, n - i);
        // removeOnComplete: a finished job leaves nothing behind, as in tsq and Sidekiq.
        await q.addBulk(
          Array.from({ length: size }, () => ({ name: "noop" as const, data: {}, opts: { removeOnComplete: true } })),
        );
      }
    },
    async start(ctx, { processes, concurrency }) {
      counts.clear();
      readyChildren.clear();
      const children: TrackedChild[] = [];
      for (let i = 0; i < processes; i++) {
        const child = spawnTracked("bullmq", process.execPath, [script, ctx.url, QUEUE, String(concurrency)], {
          cwd: ctx.workDir,
          stdio: ["ignore", "pipe", "pipe", "ipc"],
        });
        child.on("message", (raw) => {
          const message = asWorkerMessage(raw);
          if (message?.type === "ready") readyChildren.add(child);
          if (message?.type === "done") counts.set(child, { completed: message.completed, failed: message.failed });
        });
        children.push(child);
      }
      return makeHandle("bullmq", children, () => pidsOf(children));
    },
    async ready(ctx, handle, processes) {
      await waitIdle(ctx, handle, processes, async () => handle.roots.every((c) => readyChildren.has(c)));
    },
    release: () => enqueued(queue).resume(),
    remaining: (ctx) => ctx.redis.llen(`bull:${QUEUE}:wait`),
    pushLatency: (ctx, hrtime) => enqueued(queue).add("latency", { t: hrtime }, { removeOnComplete: true }),
    async stop(ctx, handle) {
      handle.markStopping();
      await Promise.all(handle.roots.map((child) => stopTracked(child, { signal: "SIGTERM", graceMs: 20_000 })));
      await queue?.close();
      await queueConnection?.quit().catch(() => {});
      queue = queueConnection = undefined;
      if (counts.size < handle.roots.length) return null; // a worker did not report
      return [...counts.values()].reduce((sum, c) => sum + c.completed, 0);
    },
    async whereabouts(ctx) {
      const [wait, active, failedSet] = await Promise.all([
        ctx.redis.llen(`bull:${QUEUE}:wait`),
        ctx.redis.llen(`bull:${QUEUE}:active`),
        ctx.redis.zcard(`bull:${QUEUE}:failed`),
      ]);
      return { queued: wait, active, failed: [...counts.values()].reduce((sum, c) => sum + c.failed, 0), failedSet };
    },
  };
}

/** The queue enqueue() made: release() and pushLatency() come after it. */
function enqueued<Q>(queue: Q | undefined): Q {
  if (queue === undefined) throw new Error("BullMQ: the queue is used before enqueue()");
  return queue;
}

// ---------------------------------------------------------------------------------------------------

export function sidekiqSystem(root: string): System {
  const jobsFile = join(root, "scripts/bench/sidekiq_jobs.rb");
  return {
    key: "sidekiq",
    label: "Sidekiq",
    async probe() {
      const result = spawnSync("sidekiq", ["--version"], { encoding: "utf8", timeout: 30_000 });
      if (result.error || result.status !== 0) {
        return {
          available: false,
          reason: `Ruby Sidekiq is not installed (${result.error?.message ?? result.stderr.trim()}); apt-get install ruby-sidekiq`,
        };
      }
      const version = /Sidekiq (\S+)/.exec(result.stdout + result.stderr)?.[1] ?? "unknown";
      const ruby = spawnSync("ruby", ["-e", "print RUBY_VERSION"], { encoding: "utf8" }).stdout.trim();
      return { available: true, version, ruby };
    },
    enqueue: pushSidekiqJobs,
    async start(ctx, { processes, concurrency }) {
      const children: TrackedChild[] = [];
      for (let i = 0; i < processes; i++) {
        children.push(
          spawnTracked(
            "sidekiq",
            "sidekiq",
            ["-r", jobsFile, "-c", String(concurrency), "-q", "default", "-t", "5", "-e", "production"],
            {
              cwd: ctx.workDir,
              env: { ...process.env, REDIS_URL: ctx.url },
            },
          ),
        );
      }
      return makeHandle("sidekiq", children, () => pidsOf(children));
    },
    async ready(ctx, handle, processes) {
      await waitIdle(ctx, handle, processes, async () => (await ctx.redis.scard("processes")) >= processes);
    },
    release: (ctx) => ctx.redis.rename(STAGED, SIDEKIQ_QUEUE),
    remaining: (ctx) => ctx.redis.llen(SIDEKIQ_QUEUE),
    pushLatency: (ctx, hrtime) => ctx.client.push({ class: "LatencyJob", args: [hrtime] }),
    async stop(ctx, handle) {
      handle.markStopping();
      await Promise.all(handle.roots.map((child) => stopTracked(child, { signal: "SIGTERM", graceMs: 20_000 })));
      return readProcessed(ctx);
    },
    whereabouts: sidekiqWhereabouts,
  };
}
