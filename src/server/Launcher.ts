/**
 * Launcher: one worker process. Starts a Manager per capsule, the Heartbeat and the Poller, and runs
 * the lifecycle as Sidekiq does:
 *
 *   start()   startup hooks, wait for Redis (at most `startTimeoutMs`), heartbeat, managers, poller
 *   quiet()   stop fetching and polling; keep beating (Web UI shows "quiet"); running jobs go on
 *   stop()    quiet, wait up to `timeout` s for running jobs, requeue the rest, flush stats, leave
 *             `processes` (the process hash expires on its own)
 */
import { performance } from "node:perf_hooks";
import { DEFAULT_SHARD } from "../platform/shards/ShardMap.js";
import type { WorkerOptions } from "../platform/config/options.js";
import { whenReachable } from "../platform/redis/reachable.js";
import { settlesWithin } from "../platform/util/sleep.js";
import { nowSeconds } from "../wire/timestamps.js";
import type { ServerContext } from "./context.js";
import { Connections } from "./Connections.js";
import { Heartbeat, type RemoteSignal } from "./Heartbeat.js";
import { registerSlotGroup } from "./slotGroups.js";
import { Manager } from "./Manager.js";
import { Poller } from "./Poller.js";
import { processInfo } from "./processInfo.js";
import type { Registry } from "./Registry.js";
import { ReliableRecovery } from "./ReliableRecovery.js";
import { fireLifecycle, RegisteredServerConfig, type LifecycleEvent } from "./serverConfig.js";
import { QUIET_WRITE_MS, StopBudget } from "./StopBudget.js";
import { buildWorkerContext, type LauncherHooks } from "./workerContext.js";
import type { Service } from "./plugin.js";

export type { LauncherHooks } from "./workerContext.js";

export class Launcher {
  readonly ctx: ServerContext;
  readonly managers: Manager[];
  private readonly heartbeat: Heartbeat;
  private readonly poller: Poller;
  private readonly services: Service[];
  /** Which plug-ins run, for the start log: with a job module's own `plugins`, an operator checks here. */
  private readonly pluginNames: string[];
  private readonly connections: Connections;
  private readonly reliable: ReliableRecovery;
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
  private stopping: Promise<void> | undefined;
  /** Replaced by the stop's own budget when a stop begins; a second signal hurries it. */
  private budget = new StopBudget(0);
  /** Middleware, death and lifecycle handlers this worker was built with. */
  private readonly config: RegisteredServerConfig;

  constructor(options: WorkerOptions, registry: Registry, hooks: LauncherHooks = {}) {
    this.config = hooks.serverConfig ?? new RegisteredServerConfig();
    this.connections = new Connections(options.redisUrl);
    const built = buildWorkerContext(options, registry, hooks, this.config, this.connections, () => this.stopRequested);
    this.ctx = built.ctx;
    this.services = built.services;
    this.pluginNames = built.pluginNames;
    this.managers = options.capsules.map((capsule) => new Manager(this.ctx, capsule));
    this.poller = new Poller(this.ctx);
    this.reliable = new ReliableRecovery(this.ctx);
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
    registerSlotGroup(this.ctx);
    if (this.ctx.options.fetch === "reliable") await this.reliable.start();
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
        plugins: this.pluginNames,
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
    this.reliable.quiet();
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
    // Anything still in this process's private lists (an ack that failed) goes back to its queue.
    if (options.fetch === "reliable" && this.started) await this.reliable.stop(budget);
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
    await this.connections.close(budget);
    logger.info("bye");
  }

  private defaultSignal(signal: RemoteSignal): void {
    if (signal === "TSTP") void this.quiet();
    else if (signal === "TERM") void this.stop();
    else this.dumpBusy();
  }

  private fire(event: LifecycleEvent): Promise<void> {
    return fireLifecycle(this.config, event, this.ctx.logger);
  }
}
