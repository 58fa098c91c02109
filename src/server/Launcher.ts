/**
 * Launcher: one worker process. Starts a Manager per capsule, the Heartbeat and the Poller, and runs
 * the lifecycle as Sidekiq does:
 *
 *   start()   startup hooks, wait for Redis (at most `startTimeoutMs`), heartbeat, managers, poller
 *   quiet()   stop fetching and polling; keep beating (Web UI shows "quiet"); running jobs go on
 *   stop()    quiet, wait up to `timeout` s for running jobs, requeue the rest, flush stats, leave
 *             `processes` (the process hash expires on its own)
 */
import { EventEmitter } from "node:events";
import { performance } from "node:perf_hooks";
import { Client } from "../client/Client.js";
import { configureClient } from "../client/defaultClient.js";
import { defaultPlugins } from "../client/defaultPlugins.js";
import { shardMapOf } from "../platform/shards/serve.js";
import { DEFAULT_SHARD } from "../platform/shards/ShardMap.js";
import type { WorkerOptions } from "../platform/config/options.js";
import { logger as rootLogger, withJobFields, type Logger } from "../platform/logger.js";
import { connect, type TsqRedis } from "../platform/redis/connection.js";
import { whenReachable } from "../platform/redis/reachable.js";
import { settlesWithin } from "../platform/util/sleep.js";
import { nowSeconds } from "../wire/timestamps.js";
import type { JobEvents, ServerContext } from "./context.js";
import { newIdentity } from "./context.js";
import { Heartbeat, type RemoteSignal } from "./Heartbeat.js";
import { Manager } from "./Manager.js";
import { Poller } from "./Poller.js";
import { DueAlarms } from "./DueAlarms.js";
import { ProcessState } from "./ProcessState.js";
import { ExecutionTracker } from "./ExecutionTracker.js";
import { watchConnection } from "./connectionWatch.js";
import { processInfo } from "./processInfo.js";
import type { Registry } from "./Registry.js";
import { serverConfig, type LifecycleEvent, type RegisteredServerConfig } from "./serverConfig.js";
import { recoverIdentity, sweepOrphans } from "./fetch/recovery.js";
import { QUIET_WRITE_MS, StopBudget } from "./StopBudget.js";
import { registerReliable } from "./fetch/registration.js";
import { Chain } from "../platform/Chain.js";
import { SYSTEM_CLOCK, type Clock } from "../platform/util/clock.js";
import { lockHooks, type JobFactory, type ServerMiddlewareArgs } from "./context.js";
import { serverHooksOf, type Plugin, type Service } from "./plugin.js";

/** ms between sweeps for orphaned reliable-fetch jobs of processes that died without a supervisor. */
const ORPHAN_SWEEP_INTERVAL = 60_000;

export interface LauncherHooks {
  /** A remote signal popped by the heartbeat; the CLI routes it to the same handler as the OS signal. */
  onRemoteSignal?(signal: RemoteSignal): void;
  logger?: Logger;
  /**
   * Features, in chain order (src/plugins.ts `builtinPlugins()` for all built-in ones). Default: the
   * process's default list (client/defaultPlugins.ts); `[]`: plain Sidekiq OSS behaviour.
   */
  plugins?: readonly Plugin[];
  /** Builds job instances (dependency injection); default `new Class()`. */
  jobFactory?: JobFactory;
  /**
   * True for a worker that is the whole process (the CLI): its client becomes the process's default
   * client, so code outside jobs pushes to the worker's Redis too. Jobs always push through their own
   * worker's client.
   */
  ownsDefaultClient?: boolean;
  /** This worker's own middleware, death handlers and lifecycle handlers; default: the process's (configureServer). */
  serverConfig?: RegisteredServerConfig;
  /** Time for the roles that run on it (poller, cron, leader); default: the system clock. Tests drive one by hand. */
  clock?: Clock;
}

export class Launcher {
  readonly ctx: ServerContext;
  readonly managers: Manager[];
  private readonly heartbeat: Heartbeat;
  private readonly poller: Poller;
  private readonly services: Service[];
  private readonly connections: TsqRedis[] = [];
  private readonly startedAt = nowSeconds();
  private quieted = false;
  /** True once Redis answered during the start: from then on the stop has Redis writes to make. */
  private started = false;
  /** True once the services and the poller run (a stop during the start finds them not started). */
  private running = false;
  /** The start in progress, which a stop lets settle before closing the connections under it. */
  private starting: Promise<void> | undefined;
  /** Ends the start's wait for Redis when a stop begins. */
  private readonly startAbort = new AbortController();
  private sweepTimer: NodeJS.Timeout | undefined;
  /** Ends a registration for reliable fetch still being retried (fetch/registration.ts). */
  private readonly registration = new AbortController();
  private stopping: Promise<void> | undefined;
  /** Replaced by the stop's own budget when a stop begins; a second signal hurries it. */
  private budget = new StopBudget(0);
  /** Middleware, death and lifecycle handlers this worker was built with. */
  private readonly config: RegisteredServerConfig;

  constructor(options: WorkerOptions, registry: Registry, hooks: LauncherHooks = {}) {
    const { identity, hostname } = newIdentity();
    const config = hooks.serverConfig ?? serverConfig();
    this.config = config;
    // Lazy: a worker that is built and never started opens no socket, so it cannot hold the process.
    const open = (name: string, blocking = false): TsqRedis => {
      const conn = connect(options.redisUrl, { name, blocking, lazy: true });
      this.connections.push(conn);
      return conn;
    };
    const redis = open("tsq");
    // An app's logger gets the job's fields on the lines logged inside a job (tsq's own has them).
    const logger = withJobFields(hooks.logger ?? rootLogger());
    watchConnection(redis, logger, () => this.stopping !== undefined);
    const plugins = hooks.plugins ?? defaultPlugins<Plugin>();
    const client = new Client({
      redis,
      plugins,
      middleware: config.clientMiddleware.copy(),
      sidekiqVersion: options.sidekiqVersion,
      maxPayloadBytes: options.maxPayloadBytes,
      compressThresholdBytes: options.compressThresholdBytes,
      maxInflatedBytes: options.maxInflatedBytes,
      // Jobs of limited classes pushed from jobs are parked at push under the worker's own bound.
      concurrencyLimits: { maxParked: options.concurrencyLimitMaxParked, slotTtl: options.heartbeatTtl },
      // Jobs that enqueue jobs reach every shard; this process's own Redis serves its shard's queues.
      shards: { map: shardMapOf(options), home: options.shard ?? DEFAULT_SHARD },
    });
    if (hooks.ownsDefaultClient) configureClient(client);
    this.ctx = {
      options,
      identity,
      hostname,
      redis,
      connect: open,
      logger,
      registry,
      state: new ProcessState(),
      execution: options.executionMetrics ? new ExecutionTracker() : undefined,
      client,
      serverMiddleware: new Chain<ServerMiddlewareArgs>(),
      deathHandlers: [],
      hooks: [],
      locks: lockHooks(redis, []),
      events: new EventEmitter<JobEvents>(),
      // The client's: `sidekiq_version: auto` may change it at any heartbeat (Heartbeat reads the fleet).
      get timestampFormat() {
        return client.timestampFormat;
      },
      clock: hooks.clock ?? SYSTEM_CLOCK,
      alarms: new DueAlarms(hooks.clock),
      ...(hooks.jobFactory ? { jobFactory: hooks.jobFactory } : {}),
    };
    // Plug-ins first, in list order, then what the app registered (configureServer), copied: the
    // process-wide registration is never modified, so several workers in one process stay apart.
    try {
      this.ctx.hooks.push(...serverHooksOf(plugins, this.ctx));
    } catch (error) {
      // A plug-in refused this worker's settings or classes: no connection may keep the process alive.
      for (const conn of this.connections) conn.disconnect();
      throw error;
    }
    Object.assign(this.ctx, { locks: lockHooks(redis, this.ctx.hooks) });
    for (const hook of this.ctx.hooks) {
      if (hook.middleware) this.ctx.serverMiddleware.add(hook.middleware.use, ...(hook.middleware.options ?? []));
      if (hook.onDeath) this.ctx.deathHandlers.push(hook.onDeath);
    }
    for (const entry of config.middleware.entriesList())
      this.ctx.serverMiddleware.add(entry.middleware, ...entry.options);
    this.ctx.deathHandlers.push(...config.deathHandlers);
    this.services = this.ctx.hooks.flatMap((hook) => hook.services ?? []);
    this.managers = options.capsules.map((capsule) => new Manager(this.ctx, capsule));
    this.poller = new Poller(this.ctx);
    this.heartbeat = new Heartbeat(this.ctx, {
      info: processInfo(this.ctx, this.startedAt),
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

  /**
   * Resolves once the worker fetches, or at once when a stop begins meanwhile (the caller tells the two
   * apart with `stopRequested`). Rejects when Redis does not answer within `startTimeoutMs` (ms; default
   * Infinity: the CLI waits, its connection logging the outage and retrying with back-off).
   */
  start(startTimeoutMs = Infinity): Promise<void> {
    this.starting ??= this.startUp(startTimeoutMs);
    return this.starting;
  }

  /** True once `stop()` was called (a start in progress then resolves without starting). */
  get stopRequested(): boolean {
    return this.stopping !== undefined;
  }

  private async startUp(startTimeoutMs: number): Promise<void> {
    await this.fire("startup");
    if (this.stopping) return;
    try {
      await whenReachable(
        this.ctx.redis,
        startTimeoutMs,
        "the worker did not start; check that Redis is up, or give it a longer `startTimeout`",
        this.startAbort.signal,
      );
    } catch (error) {
      if (this.stopping) return;
      throw error;
    }
    this.started = true;
    // The process record exists before the first fetch, so no sweeper can take this live process for dead.
    await this.heartbeat.start();
    if (this.stopping) return;
    if (this.ctx.options.fetch === "reliable") await this.startReliable();
    if (this.stopping) return;
    this.running = true;
    for (const manager of this.managers) manager.start();
    for (const service of this.services) service.start();
    this.poller.start();
    const { options } = this.ctx;
    this.ctx.logger.info(
      {
        identity: this.identity,
        capsules: options.capsules.map((c) => ({ name: c.name, concurrency: c.concurrency, queues: c.queues })),
        jobs: this.ctx.registry.names(),
        fetch: options.fetch,
        ...(options.shards?.length ? { shard: options.shard ?? DEFAULT_SHARD } : {}),
      },
      "tsq worker started",
    );
  }

  /** Idempotent. Each Redis step is bounded (QUIET_WRITE_MS), so quiet never waits on an unreachable Redis. */
  async quiet(budget = new StopBudget(0)): Promise<void> {
    if (this.quieted) return;
    this.quieted = true;
    this.ctx.logger.info("quieting: no new jobs will be fetched");
    if (this.sweepTimer) clearInterval(this.sweepTimer);
    this.registration.abort();
    for (const manager of this.managers) manager.quiet();
    const by = performance.now() + QUIET_WRITE_MS;
    // A quiet process steps down as cron leader so a working one takes over (services stopped on quiet).
    // Services never started (a stop during the start) have nothing to step down from.
    const onQuiet = this.running ? this.services.filter((service) => service.stopOnQuiet) : [];
    const stepped = await budget.within(
      this.ctx.redis,
      () => Promise.all([this.poller.stop(), ...onQuiet.map((service) => service.stop())]),
      by,
    );
    if (!stepped && onQuiet.length > 0)
      this.ctx.logger.warn(
        { services: onQuiet.map((service) => service.name) },
        "could not stop these services cleanly (Redis unreachable); their leases expire by themselves",
      );
    await this.fire("quiet");
    // Publish quiet="true" now rather than at the next beat.
    if (this.started) await budget.within(this.ctx.redis, () => this.heartbeat.beat(), by);
  }

  /**
   * Idempotent. Resolves when the process has left Redis cleanly. `timeout`: seconds running jobs get
   * before they are requeued (default: the `timeout` option); ignored once a stop has begun.
   */
  stop(timeout?: number): Promise<void> {
    this.stopping ??= this.shutdown(timeout ?? this.ctx.options.timeout);
    return this.stopping;
  }

  /** Registers for reliable fetch and recovers orphans now and every minute. */
  private async startReliable(): Promise<void> {
    const { redis, options, logger } = this.ctx;
    // A refused write (Redis over maxmemory) must not stop the start: draining the queues frees memory.
    await registerReliable(redis, this.identity, logger, this.registration.signal);
    const sweep = async () => {
      try {
        await sweepOrphans(redis, this.identity, options, logger, this.ctx.locks);
      } catch (error) {
        logger.error({ err: error }, "orphan recovery failed; will retry in a minute");
      }
    };
    await sweep();
    this.sweepTimer = setInterval(() => void sweep(), ORPHAN_SWEEP_INTERVAL);
    this.sweepTimer.unref();
  }

  /** The cron leader is known to be gone (its record released): stand for election at once. */
  electNow(): void {
    if (this.quieted) return;
    for (const service of this.services) (service as { electNow?: () => void }).electNow?.();
  }

  /** A second INT/TERM: requeue running jobs now and end every wait of the stop. */
  async stopNow(): Promise<void> {
    this.budget.hurry();
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

  /** See StopBudget for the time each step gets. */
  private async shutdown(timeout: number): Promise<void> {
    const { options, logger, redis } = this.ctx;
    const budget = (this.budget = new StopBudget(timeout));
    logger.info({ timeout_s: timeout }, "shutting down");
    // A start in progress ends first (its wait for Redis at once, a first beat in flight within
    // QUIET_WRITE_MS): closing the connections under it would make it report a false outage.
    this.startAbort.abort();
    if (this.starting) await settlesWithin(this.starting, QUIET_WRITE_MS);
    await this.quiet(budget);
    await Promise.all(this.managers.map((m) => m.stop(budget)));
    if (options.fetch === "reliable" && this.started) {
      // Anything still in this process's private lists (an ack that failed) goes back to its queue.
      const recovered = await budget.within(redis, () =>
        recoverIdentity(redis, this.identity, options, logger, this.ctx.locks).catch((error: unknown) =>
          logger.error({ err: error }, "could not requeue this process's leftover in-progress jobs"),
        ),
      );
      if (!recovered)
        logger.warn(
          "Redis unreachable: unfinished jobs stay in this process's private lists; the next reliable process recovers them",
        );
    }
    if (this.running)
      for (const service of [...this.services].reverse()) if (!service.stopOnQuiet) await service.stop();
    await this.fire("shutdown");
    const unflushed = this.ctx.state.unflushedCounts();
    // A worker that never reached Redis has no record to remove and nothing counted.
    const left =
      !this.started ||
      (await budget.within(redis, () =>
        this.heartbeat.stop().catch((error: unknown) => logger.error({ err: error }, "could not leave Redis cleanly")),
      ));
    if (!left)
      logger.warn(
        { unflushed_processed: unflushed.processed, unflushed_failed: unflushed.failed },
        "Redis unreachable: these stat counts were not written; the process record expires in 60 s",
      );
    await Promise.all(
      this.connections.map(async (c) => {
        // A lazy connection never used has no socket; QUIT would open one just to close it.
        if (c.status === "wait" || !(await budget.within(c, () => c.quit()))) c.disconnect();
      }),
    );
    logger.info("bye");
  }

  private defaultSignal(signal: RemoteSignal): void {
    if (signal === "TSTP") void this.quiet();
    else if (signal === "TERM") void this.stop();
    else this.dumpBusy();
  }

  private async fire(event: LifecycleEvent): Promise<void> {
    for (const handler of this.config.handlers[event]) {
      try {
        await handler();
      } catch (error) {
        // Sidekiq re-raises startup errors: a broken boot must not run jobs.
        if (event === "startup") throw error;
        this.ctx.logger.error({ err: error, event }, "lifecycle handler raised");
      }
    }
  }
}
