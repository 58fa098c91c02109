/**
 * Launcher: one worker process. Starts a Manager per capsule, the Heartbeat and the Poller, and runs
 * the lifecycle as Sidekiq does:
 *
 *   start()   startup hooks, managers, heartbeat, poller
 *   quiet()   stop fetching and polling; keep beating (Web UI shows "quiet"); running jobs go on
 *   stop()    quiet, wait up to `timeout` s for running jobs, requeue the rest, flush stats, leave
 *             `processes` (the process hash expires on its own)
 */
import { EventEmitter } from "node:events";
import { performance } from "node:perf_hooks";
import { Client } from "../client/Client.js";
import { configureClient } from "../client/defaultClient.js";
import type { WorkerOptions } from "../config/options.js";
import { logger as rootLogger, type Logger } from "../logger.js";
import { connect, type TsqRedis } from "../redis/connection.js";
import { VERSION } from "../version.js";
import { nowSeconds } from "../timestamps.js";
import type { JobEvents, ServerContext } from "./context.js";
import { newIdentity } from "./context.js";
import { Heartbeat, type RemoteSignal } from "./Heartbeat.js";
import { Manager } from "./Manager.js";
import { Poller } from "./Poller.js";
import { ProcessState } from "./ProcessState.js";
import { queueMode } from "./queueOrder.js";
import type { Registry } from "./Registry.js";
import { serverConfig, type LifecycleEvent } from "./serverConfig.js";
import { recoverIdentity, sweepOrphans } from "./recovery.js";
import { startCron, type CronHandle } from "../cron/index.js";
import { SUPER_PROCESSES } from "../keys.js";

/** ms between sweeps for orphaned reliable-fetch jobs of processes that died without a supervisor. */
const ORPHAN_SWEEP_INTERVAL = 60_000;

export interface LauncherHooks {
  /** A remote signal popped by the heartbeat; the CLI routes it to the same handler as the OS signal. */
  onRemoteSignal?(signal: RemoteSignal): void;
  logger?: Logger;
}

export class Launcher {
  readonly ctx: ServerContext;
  readonly managers: Manager[];
  private readonly heartbeat: Heartbeat;
  private readonly poller: Poller;
  private cron: CronHandle | undefined;
  private readonly connections: TsqRedis[] = [];
  private readonly startedAt = nowSeconds();
  private quieted = false;
  private started = false;
  private sweepTimer: NodeJS.Timeout | undefined;
  private stopping: Promise<void> | undefined;

  constructor(options: WorkerOptions, registry: Registry, hooks: LauncherHooks = {}) {
    const { identity, hostname } = newIdentity();
    const config = serverConfig();
    const open = (name: string, blocking = false): TsqRedis => {
      const conn = connect(options.redisUrl, { name, blocking });
      this.connections.push(conn);
      return conn;
    };
    const redis = open("tsq");
    this.watchConnection(redis, hooks.logger ?? rootLogger());
    const client = new Client({
      redis,
      middleware: config.clientMiddleware,
      sidekiqVersion: options.sidekiqVersion,
      maxPayloadBytes: options.maxPayloadBytes,
    });
    configureClient(client);
    this.ctx = {
      options,
      identity,
      hostname,
      redis,
      connect: open,
      logger: hooks.logger ?? rootLogger(),
      registry,
      state: new ProcessState(),
      client,
      serverMiddleware: config.middleware,
      deathHandlers: config.deathHandlers,
      events: new EventEmitter<JobEvents>(),
      timestampFormat: options.sidekiqVersion === 8 ? "milliseconds" : "seconds",
    };
    this.managers = options.capsules.map((capsule) => new Manager(this.ctx, capsule));
    this.poller = new Poller(this.ctx);
    this.heartbeat = new Heartbeat(this.ctx, {
      info: this.info(),
      concurrency: this.concurrency,
      isQuiet: () => this.quieted,
      onSignal: (signal) => (hooks.onRemoteSignal ? hooks.onRemoteSignal(signal) : this.defaultSignal(signal)),
    });
  }

  get identity(): string {
    return this.ctx.identity;
  }

  get concurrency(): number {
    return this.ctx.options.capsules.reduce((sum, c) => sum + c.concurrency, 0);
  }

  async start(): Promise<void> {
    await this.fire("startup");
    this.started = true;
    // The process record exists before the first fetch, so no sweeper can take this live process for dead.
    await this.heartbeat.start();
    if (this.ctx.options.fetch === "reliable") await this.startReliable();
    for (const manager of this.managers) manager.start();
    this.poller.start();
    this.cron = startCron(this.ctx);
    const { options } = this.ctx;
    this.ctx.logger.info(
      {
        identity: this.identity,
        capsules: options.capsules.map((c) => ({ name: c.name, concurrency: c.concurrency, queues: c.queues })),
        jobs: this.ctx.registry.names(),
        fetch: options.fetch,
      },
      "tsq worker started",
    );
  }

  /** Idempotent. */
  async quiet(): Promise<void> {
    if (this.quieted) return;
    this.quieted = true;
    this.ctx.logger.info("quieting: no new jobs will be fetched");
    if (this.sweepTimer) clearInterval(this.sweepTimer);
    for (const manager of this.managers) manager.quiet();
    await this.poller.stop();
    // A quiet process steps down as cron leader so a working one takes over.
    await this.cron?.stop();
    await this.fire("quiet");
    // Publish quiet="true" now rather than at the next beat.
    if (this.started) await this.heartbeat.beat();
  }

  /** Idempotent. Resolves when the process has left Redis cleanly. */
  stop(): Promise<void> {
    this.stopping ??= this.shutdown();
    return this.stopping;
  }

  /** Registers for reliable fetch and recovers orphans now and every minute. */
  private async startReliable(): Promise<void> {
    const { redis, options, logger } = this.ctx;
    await redis.sadd(SUPER_PROCESSES, this.identity);
    const sweep = async () => {
      try {
        await sweepOrphans(redis, this.identity, options, logger);
      } catch (error) {
        logger.error({ err: error }, "orphan recovery failed; will retry in a minute");
      }
    };
    await sweep();
    this.sweepTimer = setInterval(() => void sweep(), ORPHAN_SWEEP_INTERVAL);
    this.sweepTimer.unref();
  }

  /** A second INT: requeue running jobs now instead of waiting for the timeout. */
  async stopNow(): Promise<void> {
    for (const manager of this.managers) manager.hurry();
    await this.stop();
  }

  /** TTIN: logs every running job, with how long it has been running. */
  dumpBusy(): void {
    const now = performance.now();
    const jobs = [...this.ctx.state.work.entries()].map(([tid, w]) => ({
      tid,
      jid: w.jid,
      class: w.className,
      queue: w.queue,
      running_s: Math.round((now - w.startedMs) / 100) / 10,
    }));
    this.ctx.logger.info({ busy: jobs.length, concurrency: this.concurrency, jobs }, "busy jobs (TTIN)");
  }

  private async shutdown(): Promise<void> {
    const { options, logger } = this.ctx;
    const deadline = performance.now() + options.timeout * 1000;
    logger.info({ timeout_s: options.timeout }, "shutting down");
    await this.quiet();
    await Promise.all(this.managers.map((m) => m.stop(deadline)));
    if (this.ctx.options.fetch === "reliable" && this.started) {
      // Anything still in this process's private lists (an ack that failed) goes back to its queue.
      await recoverIdentity(this.ctx.redis, this.identity, this.ctx.options, logger).catch((error: unknown) =>
        logger.error({ err: error }, "could not requeue this process's leftover in-progress jobs; another process will recover them"),
      );
    }
    await this.fire("shutdown");
    try {
      await this.heartbeat.stop();
    } catch (error) {
      logger.error({ err: error }, "could not remove this process from Redis; its record expires in 60 s");
    }
    await Promise.all(this.connections.map((c) => c.quit().catch(() => c.disconnect())));
    logger.info("bye");
  }

  /**
   * Logs a Redis outage once when it starts and once when it ends. Commands wait for the reconnect
   * (ioredis retries with back-off, 50 ms growing to 2 s), so work resumes without a restart.
   */
  private watchConnection(redis: TsqRedis, logger: Logger): void {
    let downSince: number | undefined;
    redis.on("close", () => {
      if (downSince !== undefined || this.stopping) return;
      downSince = performance.now();
      logger.error("Redis connection lost; retrying with back-off, jobs in flight are kept");
    });
    redis.on("ready", () => {
      if (downSince === undefined) return;
      const seconds = Math.round((performance.now() - downSince) / 100) / 10;
      downSince = undefined;
      logger.info({ outage_s: seconds }, "Redis connection restored; resuming");
    });
  }

  private defaultSignal(signal: RemoteSignal): void {
    if (signal === "TSTP") void this.quiet();
    else if (signal === "TERM") void this.stop();
    else this.dumpBusy();
  }

  private async fire(event: LifecycleEvent): Promise<void> {
    for (const handler of serverConfig().handlers[event]) {
      try {
        await handler();
      } catch (error) {
        // Sidekiq re-raises startup errors: a broken boot must not run jobs.
        if (event === "startup") throw error;
        this.ctx.logger.error({ err: error, event }, "lifecycle handler raised");
      }
    }
  }

  /** The process record's `info`, with the fields every Sidekiq version's UI reads (see keys.ts). */
  private info(): Record<string, unknown> {
    const { options, hostname, identity } = this.ctx;
    const weights = options.capsules.map((c) => Object.fromEntries(c.queues.map((q) => [q.name, q.weight])));
    const capsules = Object.fromEntries(
      options.capsules.map((c, i) => [c.name, { concurrency: c.concurrency, mode: queueMode(c.queues), weights: weights[i] }]),
    );
    return {
      hostname,
      started_at: this.startedAt,
      pid: process.pid,
      tag: options.tag,
      concurrency: this.concurrency,
      queues: [...new Set(options.capsules.flatMap((c) => c.queues.map((q) => q.name)))],
      weights,
      capsules,
      labels: options.labels,
      identity,
      version: `tsq ${VERSION}`,
      embedded: false,
    };
  }
}
