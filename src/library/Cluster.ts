/**
 * A supervised cluster of worker processes started from code: what `tsq-cluster` runs, with the same
 * plan, supervisor, /metrics and dashboard (the CLI is a thin wrapper over this class).
 *
 *   const cluster = new Cluster({ require: new URL("./jobs.js", import.meta.url), processes: 2 });
 *   cluster.on("child:restart", ({ group, reason }) => ...);
 *   await cluster.start();       // every child has written its first heartbeat
 *   ...
 *   await cluster.stop({ timeout: 10 });   // every child has exited
 *
 * Only one Cluster may run per process: node:cluster's primary is per process (cluster.setupPrimary
 * and its events are global), so a second concurrent start() is refused (src/cluster/primary.ts).
 */
import { EventEmitter } from "node:events";
import { packagePlugins } from "../packagePlugins.js";
import { pluginsOfJobModule } from "./processPlugins.js";
import { releaseLocksWith, settingsOf, type Plugin } from "../server/plugin.js";
import { logger as rootLogger, type Logger } from "../platform/logger.js";
import { connect, redactUrl, type TsqRedis } from "../platform/redis/connection.js";
import { ShardConnections } from "../platform/shards/ShardConnections.js";
import { shardMapOf } from "../platform/shards/serve.js";
import { withClusterGroups } from "../platform/shards/discoverGroups.js";
import { DEFAULT_SHARD } from "../platform/shards/ShardMap.js";
import { TsqError } from "../wire/errors.js";
import { Supervisor, type RestartReason } from "../cluster/Supervisor.js";
import { primaryUnavailable } from "../cluster/primary.js";
import type { ChildPlan } from "../cluster/groups.js";
import type { ClusterOptions } from "../options/clusterOptions.js";
import type { MetricsHandle } from "../metrics/serve.js";
import { startClusterMetrics } from "../cluster/serveMetrics.js";
import { clusterOptionsOf, type ClusterConfig } from "./clusterConfig.js";
import { planCluster } from "../cluster/plan.js";
import { childInfo, describeChild, type ChildExitInfo, type ChildInfo } from "./childInfo.js";

export type { ClusterConfig } from "./clusterConfig.js";
export type { ChildInfo, ChildExitInfo } from "./childInfo.js";

export interface ClusterEvents {
  /** Every child has written its first heartbeat. */
  started: [];
  "child:exit": [ChildExitInfo];
  /** A child is being replaced: it crashed, hung, outgrew `maxMemoryMb`, or a rolling restart. */
  "child:restart": [{ group: string; reason: RestartReason }];
  error: [Error];
  /** Every child exited and the supervisor closed its connections. */
  stopped: [];
}

type State = "new" | "starting" | "running" | "stopping" | "stopped";

interface Running {
  supervisor: Supervisor;
  plan: ChildPlan[];
  /** Resolves once every child exited and every server and connection is closed. */
  closed: Promise<void>;
}

type Server = { stop(): Promise<void> } | undefined;

/**
 * Options already resolved from flags, a config file and the environment (the `tsq-cluster` path),
 * with that environment (its TSQ_PLUGINS).
 */
export class ResolvedCluster {
  constructor(
    readonly options: ClusterOptions,
    readonly logger: Logger,
    readonly env: NodeJS.ProcessEnv,
  ) {}
}

export class Cluster extends EventEmitter<ClusterEvents> {
  private readonly options: ClusterOptions;
  private readonly logger: Logger;
  /** Where TSQ_PLUGINS is read: the children inherit this process's environment. */
  private readonly env: NodeJS.ProcessEnv;
  private state: State = "new";
  private running: Running | undefined;
  private stopTimeout: number | undefined;
  /** The startup error of the latest child that failed, for start()'s rejection. */
  private lastFatal: string | undefined;
  private resolveExitCode!: (code: number) => void;
  private readonly exitCode = new Promise<number>((resolve) => (this.resolveExitCode = resolve));

  constructor(config: ClusterConfig | ResolvedCluster) {
    super();
    if (config instanceof ResolvedCluster) {
      ({ options: this.options, logger: this.logger, env: this.env } = config);
    } else {
      this.options = clusterOptionsOf(config, settingsOf(packagePlugins()));
      this.logger = (config.logger ?? rootLogger()).child({ role: "supervisor" });
      this.env = process.env;
    }
  }

  /**
   * Resolves once the cluster has stopped, by stop() or because every child failed to boot: 0 when
   * every child exited cleanly, 1 otherwise (a child needed SIGKILL, or the supervisor gave up).
   */
  get finished(): Promise<number> {
    return this.exitCode;
  }

  /** What each child runs (queues, concurrency), in plan order; empty before start(). */
  get plan(): readonly ChildPlan[] {
    return this.running?.plan ?? [];
  }

  /** The live children. */
  children(): ChildInfo[] {
    return [...(this.running?.supervisor.children.values() ?? [])].map(childInfo);
  }

  /**
   * Reads the job module's plug-ins, plans the children, forks them and serves /metrics and the
   * dashboard when asked. Resolves when every child has written its first heartbeat; rejects (and emits
   * `error` when someone listens) when another cluster runs in this process, the job module fails to
   * load or exports a bad `plugins`, planning fails, or every child fails to boot.
   */
  async start(): Promise<void> {
    if (this.state !== "new") throw new TsqError(`Cluster.start(): the cluster is already ${this.state}`);
    const busy = primaryUnavailable();
    if (busy !== undefined) throw new TsqError(`Cluster.start(): ${busy}`);
    this.state = "starting";
    try {
      await this.launch();
      await this.allReady(this.running!.supervisor);
    } catch (error) {
      const failure = error instanceof Error ? error : new Error(String(error));
      // EventEmitter throws an `error` nobody listens to: the rejection below carries it then.
      if (this.listenerCount("error") > 0) this.emit("error", failure);
      if (this.running) await this.stop();
      else this.finish(1);
      throw failure;
    }
    if (this.state === "starting") {
      this.state = "running";
      this.emit("started");
    }
  }

  /** Stops every child fetching; running jobs go on (TSTP). */
  quiet(): void {
    this.running?.supervisor.quiet();
  }

  /** Replaces the children one by one, each once its successor heartbeats (USR2). */
  rollingRestart(): Promise<void> {
    return this.running?.supervisor.rollingRestart() ?? Promise.resolve();
  }

  /** Every child logs its busy jobs (TTIN). */
  dumpBusy(): void {
    this.running?.supervisor.dumpBusy();
  }

  /** After stop(): every child requeues its running jobs now instead of waiting out the timeout. */
  stopNow(): void {
    this.running?.supervisor.stopNow();
  }

  /**
   * Gives running jobs `timeout` seconds (default: the worker timeout), requeues the rest, SIGKILLs a
   * child still running 5 s later, and closes every connection. Idempotent (the first timeout holds);
   * resolves when every child has exited and nothing of the cluster is left.
   */
  async stop(options: { timeout?: number } = {}): Promise<void> {
    this.stopTimeout ??= options.timeout;
    if (this.state === "new") this.finish(0);
    else if (this.state !== "stopped") this.state = "stopping";
    // While planning, launch() passes the stop on once the supervisor exists.
    if (this.running) void this.running.supervisor.stop(this.stopTimeout);
    await this.exitCode;
  }

  /**
   * What start() would fork (each child's group, queues and concurrency), read from Redis and the job
   * module, forking nothing: `tsq-cluster --dryrun`. Rejects when no plan can be made.
   */
  async dryRun(): Promise<ChildPlan[]> {
    const { shards, disconnect } = this.connectShards();
    try {
      return await planCluster(this.options, await withClusterGroups(shards), this.logger);
    } finally {
      disconnect();
    }
  }

  /** The supervisor's own Redis (its shard's) and the others', for planning, pruning and /metrics. */
  private connectShards(): { redis: TsqRedis; shards: ShardConnections; disconnect: () => void } {
    const redis = connect(this.options.worker.redisUrl, { name: "tsq-supervisor" });
    const shards = new ShardConnections(shardMapOf(this.options.worker), "tsq-supervisor", {
      shard: this.options.worker.shard ?? DEFAULT_SHARD,
      redis,
    });
    const disconnect = () => {
      shards.disconnect();
      redis.disconnect();
    };
    return { redis, shards, disconnect };
  }

  private async launch(): Promise<void> {
    const { options, logger: log } = this;
    // The children's list, read as they will read it: a bad `plugins` export stops the start before any
    // connection or fork, and the supervisor releases these plug-ins' locks when it buries a poison pill.
    const plugins = await pluginsOfJobModule(options.worker.require, log, this.env);
    const { redis, shards, disconnect } = this.connectShards();
    let plan: ChildPlan[];
    try {
      plan = await planCluster(options, await withClusterGroups(shards), log);
    } catch (error) {
      disconnect();
      throw error;
    }
    // On a Redis Cluster the groups the children serve are read by /metrics even before they hold keys.
    shards.map.remember(plan.flatMap((child) => (child.shard === undefined ? [] : [child.shard])));
    const supervisor = this.supervise(plan, plugins, redis, shards);
    log.info({ redis: redactUrl(options.worker.redisUrl), children: plan.map(describeChild) }, "starting tsq-cluster");
    try {
      supervisor.start();
    } catch (error) {
      // Another cluster claimed the primary while this one was planning: nothing was forked.
      await supervisor.stop();
      disconnect();
      throw error;
    }
    const serving = this.serve(supervisor, plan, redis, shards, plugins);
    const closed = Promise.all([supervisor.finished, serving]).then(([code, servers]) =>
      this.close(code, servers, disconnect),
    );
    this.running = { supervisor, plan, closed };
    if (this.state === "stopping") void supervisor.stop(this.stopTimeout);
    await serving;
  }

  private supervise(
    plan: ChildPlan[],
    plugins: readonly Plugin[],
    redis: TsqRedis,
    shards: ShardConnections,
  ): Supervisor {
    const { options } = this;
    const supervisor = new Supervisor({
      worker: options.worker,
      plan,
      hangThreshold: options.hangThreshold,
      maxMemoryMb: options.maxMemoryMb,
      maxAbandoned: options.maxAbandoned,
      logger: this.logger,
      redis,
      redisOf: (shard) => (shard === undefined ? redis : shards.get(shard)),
      releaseLocks: releaseLocksWith(plugins),
    });
    supervisor.on("restart", (group, reason) => this.emit("child:restart", { group, reason }));
    supervisor.on("exit", (child, code, signal) => {
      if (child.fatal !== undefined) this.lastFatal = child.fatal;
      this.emit("child:exit", { ...childInfo(child), code, signal });
    });
    return supervisor;
  }

  /** /metrics (subscribed before any child can report: children take a while to boot), then the dashboard. */
  private async serve(
    supervisor: Supervisor,
    plan: ChildPlan[],
    redis: TsqRedis,
    shards: ShardConnections,
    plugins: readonly Plugin[],
  ): Promise<Server[]> {
    const { options, logger } = this;
    const metrics: MetricsHandle | undefined = await startClusterMetrics(supervisor, {
      plan,
      worker: options.worker,
      redis,
      otherShards: shards.others(),
      port: options.metricsPort,
      host: options.metricsHost,
      logger,
      plugins,
    });
    // The dashboard's 45 modules are loaded only when it is served.
    const web = options.webPort ? await (await import("./clusterWeb.js")).startClusterWeb(options, logger) : undefined;
    return [metrics, web];
  }

  /** Resolves once every planned child is ready; rejects if the supervisor stops first. */
  private allReady(supervisor: Supervisor): Promise<void> {
    return new Promise((resolve, reject) => {
      const check = () => {
        if (supervisor.readyChildren().length < supervisor.expectedChildren) return;
        supervisor.off("ready", check);
        resolve();
      };
      supervisor.on("ready", check);
      void supervisor.finished.then(() => {
        supervisor.off("ready", check);
        const why = this.lastFatal === undefined ? "" : `; last child error: ${this.lastFatal}`;
        reject(new TsqError(`Cluster.start(): the cluster stopped before every child started${why}`));
      });
      check();
    });
  }

  private async close(code: number, servers: Server[], disconnect: () => void): Promise<void> {
    for (const server of servers.reverse()) await server?.stop();
    disconnect();
    this.logger.info({ code }, "tsq-cluster stopped");
    this.finish(code);
  }

  private finish(code: number): void {
    if (this.state === "stopped") return;
    this.state = "stopped";
    this.resolveExitCode(code);
    this.emit("stopped");
  }
}
