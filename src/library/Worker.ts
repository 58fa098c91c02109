/**
 * A worker started from code, with the same lifecycle as the `tsq` CLI (which runs one for the whole
 * process): `start()`, `quiet()`, `stop({ timeout })`, and events.
 *
 *   const worker = new Worker({ redis: process.env.REDIS_URL, jobs: [HardJob], queues: ["default"] });
 *   worker.on("job:end", ({ jid, status }) => ...);
 *   await worker.start();
 *   ...
 *   await worker.stop({ timeout: 10 });
 *
 * Several workers may live in one process, each with its own settings, plug-ins and connections;
 * jobs push through their own worker's client. Nothing is left running after `stop()` resolves, and a
 * worker never started holds nothing (its connections open at `start()`).
 */
import { EventEmitter } from "node:events";
import { adoptLogger, logger as rootLogger, type Logger } from "../platform/logger.js";
import { ArgumentError } from "../wire/errors.js";
import { MAX_TIMEOUT, showNumber } from "../platform/config/bounds.js";
import { packagePlugins } from "../packagePlugins.js";
import { RegisteredServerConfig, serverConfig as appServerConfig } from "../server/serverConfig.js";
import { Launcher } from "../server/Launcher.js";
import { Registry } from "../server/Registry.js";
import { settingsOf, type Plugin } from "../server/plugin.js";
import type { EndStatus } from "../server/hooks.js";
import { displayClass } from "../wire/payload.js";
import type { WorkerOptions } from "../platform/config/options.js";
import { checkDuration } from "../platform/util/longTimer.js";
import { jobClassesOf, refuseUnknownWorkerSettings, workerOptionsOf, type WorkerConfig } from "./workerConfig.js";

export type { WorkerConfig } from "./workerConfig.js";

export interface JobEventInfo {
  jid: string;
  class: string;
  queue: string;
}

export interface JobEndInfo extends JobEventInfo {
  /**
   * How this execution ended: done, failed (will retry), dead, cancelled, or suspended (the job slept,
   * parked or was interrupted to resume: not its end; it runs again).
   */
  status: EndStatus;
  /** What happened to a job that threw: retried (failed), or dead, discarded, dropped (dead). */
  disposition?: string;
  /** Why a suspended execution paused ("sleeping", "parked", "interrupted"). */
  why?: string;
  /** Seconds from start to end. */
  duration: number;
}

export interface JobProgressInfo extends JobEventInfo {
  /** The number the job reported (`this.progress(n, data?)`), usually a percentage. */
  progress: number;
  /** Its `data`, after a JSON round trip; absent when it gave none. */
  data?: unknown;
}

export interface WorkerEvents {
  started: [];
  "job:start": [JobEventInfo];
  /** Each `this.progress(n, data?)` call of a job running here (not throttled: the Redis writes are). */
  "job:progress": [JobProgressInfo];
  "job:end": [JobEndInfo];
  error: [Error];
  stopped: [];
}

type State = "new" | "starting" | "running" | "stopping" | "stopped";

/**
 * Seconds `start()` waits for Redis before it rejects: long enough for a Redis starting beside the app
 * (a container's, a failover), short enough that an app's boot fails visibly rather than hangs.
 */
const DEFAULT_START_TIMEOUT = 30;

/** `startTimeout` in ms: seconds above 0 up to a day, or Infinity (wait as long as it takes, as the CLI). */
function startTimeoutMs(value: unknown): number {
  if (value === undefined) return DEFAULT_START_TIMEOUT * 1000;
  if (value === Infinity) return Infinity;
  if (typeof value !== "number" || !(value > 0) || value > MAX_TIMEOUT)
    throw new ArgumentError(
      `Worker: \`startTimeout\` must be seconds above 0 and at most ${MAX_TIMEOUT}, or Infinity to wait for Redis as long as it takes; got ${showNumber(value)}`,
    );
  return value * 1000;
}

export class Worker extends EventEmitter<WorkerEvents> {
  /** The worker process underneath (for advanced use: its context, managers and state). */
  readonly launcher: Launcher;
  private state: State = "new";
  private stopped: Promise<void> | undefined;
  /** How long `start()` waits for Redis, ms (Infinity for the CLI's worker). */
  private readonly startTimeoutMs: number;

  constructor(config: WorkerConfig) {
    super();
    if (config === null || typeof config !== "object")
      throw new TypeError("new Worker(config): config must be an object");
    refuseUnknownWorkerSettings(config);
    const plugins = packagePlugins(config.plugins);
    this.startTimeoutMs = startTimeoutMs(config.startTimeout);
    const registry = new Registry();
    for (const klass of jobClassesOf(config.jobs)) registry.register(klass);
    const options = workerOptionsOf(config, "Worker", settingsOf(plugins));
    this.launcher = Worker.launch(options, registry, config.logger, plugins, {
      jobFactory: config.jobFactory,
      configure: config.configure,
    });
    this.forwardEvents();
  }

  /** A Worker over options already resolved (the CLI's path: flags and config file). */
  static fromResolved(
    options: WorkerOptions,
    registry: Registry,
    logger?: Logger,
    plugins?: readonly Plugin[],
  ): Worker {
    const worker = Object.create(Worker.prototype) as Worker;
    EventEmitter.call(worker);
    Object.assign(worker, {
      state: "new",
      stopped: undefined,
      // The CLI waits for Redis as long as it takes, logging the outage and retrying with back-off.
      startTimeoutMs: Infinity,
      launcher: Worker.launch(options, registry, logger, plugins),
    });
    worker.forwardEvents();
    return worker;
  }

  private static launch(
    options: WorkerOptions,
    registry: Registry,
    logger: Logger | undefined,
    plugins: readonly Plugin[] | undefined,
    own: Pick<WorkerConfig, "jobFactory" | "configure"> = {},
  ): Launcher {
    // Its own registrations, or the app's (configureServer) as the CLI's worker runs them.
    let serverConfig = appServerConfig();
    if (own.configure) {
      if (typeof own.configure !== "function")
        throw new TypeError("Worker: `configure` must be a function (config) => { ... }");
      serverConfig = new RegisteredServerConfig();
      own.configure(serverConfig);
    }
    return new Launcher(options, registry, {
      // The app's logger: through a child with tsq's error serializers, the job's fields on job lines.
      logger: logger ? adoptLogger(logger) : rootLogger(),
      plugins: packagePlugins(plugins),
      ...(own.jobFactory ? { jobFactory: own.jobFactory } : {}),
      serverConfig,
    });
  }

  /** The process identity in Redis (`hostname:pid:hex`), as the dashboard's Busy page shows it. */
  get identity(): string {
    return this.launcher.identity;
  }

  /**
   * Starts fetching. Rejects (and emits `error`) when the start fails: a bad schedule, or Redis not
   * answering within `startTimeout` seconds (the worker is then stopped). Rejects without `error` when
   * `stop()` is called before the start finished.
   */
  async start(): Promise<void> {
    if (this.state !== "new") throw new Error(`Worker.start(): the worker is already ${this.state}`);
    this.state = "starting";
    try {
      await this.launcher.start(this.startTimeoutMs);
    } catch (error) {
      if (this.launcher.stopRequested) throw stoppedDuringStart();
      const failure = error instanceof Error ? error : new Error(String(error));
      // EventEmitter throws an `error` nobody listens to: the rejection below carries it then.
      if (this.listenerCount("error") > 0) this.emit("error", failure);
      await this.stop();
      throw failure;
    }
    if (this.launcher.stopRequested) throw stoppedDuringStart();
    this.state = "running";
    this.emit("started");
  }

  /** Stops fetching new jobs; running ones go on. Idempotent. */
  async quiet(): Promise<void> {
    await this.launcher.quiet();
  }

  /**
   * Quiets, waits up to `timeout` seconds (default: the worker's `timeout`) for running jobs, requeues
   * the rest, and closes every connection. Idempotent; resolves when nothing of this worker is left.
   */
  stop(options: { timeout?: number } = {}): Promise<void> {
    const bad = badStopTimeout(options.timeout);
    if (bad) return Promise.reject(bad);
    if (this.state !== "stopped") this.state = "stopping";
    this.stopped ??= this.launcher.stop(options.timeout).then(() => {
      this.state = "stopped";
      this.emit("stopped");
    });
    return this.stopped;
  }

  private forwardEvents(): void {
    const events = this.launcher.ctx.events;
    events.on("start", (job, queue) => this.emit("job:start", { jid: job.jid, class: displayClass(job), queue }));
    events.on("progress", (job, queue, { n, data }) =>
      this.emit("job:progress", {
        jid: job.jid,
        class: displayClass(job),
        queue,
        progress: n,
        ...(data === undefined ? {} : { data }),
      }),
    );
    events.on("end", (job, queue, outcome) =>
      this.emit("job:end", {
        jid: job.jid,
        class: displayClass(job),
        queue,
        status: outcome.status,
        duration: outcome.durationSeconds,
        ...(outcome.disposition ? { disposition: outcome.disposition } : {}),
        ...(outcome.why ? { why: outcome.why } : {}),
      }),
    );
  }
}

/** The error for a `stop({ timeout })` that is no number of seconds from 0 to a day; undefined when it is. */
function badStopTimeout(timeout: number | undefined): Error | undefined {
  if (timeout === undefined) return undefined;
  try {
    checkDuration(timeout, { what: "worker.stop({ timeout })", zero: true, max: MAX_TIMEOUT });
    return undefined;
  } catch (error) {
    return error as Error;
  }
}

function stoppedDuringStart(): Error {
  return new Error("Worker.start(): stop() was called before the start finished; the worker did not start");
}
