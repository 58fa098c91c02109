/**
 * A `tsq-cluster` child: a full worker (capsules, fetch, poller, heartbeat) with its own identity,
 * steered by the supervisor over IPC.
 *
 * - Lifecycle commands arrive as IPC messages. An OS TERM sent straight to a child stops it too; an OS
 *   INT is ignored, because a terminal's Ctrl-C reaches the whole process group and the supervisor
 *   already relays it (acting on both would turn one Ctrl-C into a hard stop).
 * - If the supervisor dies (even by SIGKILL) the IPC channel closes: the child stops gracefully within
 *   its timeout and exits, so no orphan keeps running.
 */
import type { Plugin } from "../server/plugin.js";
import { registerUrlSecrets } from "../platform/secrets.js";
import { shardMapOf } from "../platform/shards/serve.js";
import { DEFAULT_SHARD } from "../platform/shards/ShardMap.js";
import cluster from "node:cluster";
import { configureLogger, type Logger } from "../platform/logger.js";
import { Launcher } from "../server/Launcher.js";
import { serverConfig } from "../server/serverConfig.js";
import type { Registry } from "../server/Registry.js";
import type { WorkerOptions } from "../platform/config/options.js";
import { CHILD_ENV, isToChild, type ChildSpec, type FromChild } from "./ipc.js";
import { ChildReporter } from "./ChildReporter.js";
import { JobMetrics } from "../metrics/JobMetrics.js";
import { batchReporter } from "./batchFile.js";

/** Seconds past the timeout after which an orphaned child exits whatever it is doing. */
const ORPHAN_GRACE = 5;

function send(message: FromChild): void {
  if (process.connected) process.send?.(message);
}

function guard(log: Logger): void {
  process.on("uncaughtException", (error) => log.error({ err: error }, "uncaught exception; the worker keeps running"));
  process.on("unhandledRejection", (reason) =>
    log.error({ err: reason }, "unhandled promise rejection; the worker keeps running"),
  );
}

/**
 * Loads the job module: its classes and the plug-ins to run (its `plugins` export, or the built-ins).
 * The entry point's, so the child runs as `tsq -r` would; the core names no feature.
 */
export type JobModuleLoader = (
  options: WorkerOptions,
  log: Logger,
) => Promise<{ registry: Registry; plugins: readonly Plugin[] }>;

export async function runChild(loadJobModule: JobModuleLoader): Promise<void> {
  const spec = JSON.parse(process.env[CHILD_ENV] ?? "null") as ChildSpec | null;
  if (!spec) throw new Error(`${CHILD_ENV} is not set: this module is started by tsq-cluster`);
  const { plan, options } = spec;
  const log = configureLogger({
    ...(options.verbose ? { level: "debug" as const } : {}),
    base: { child: plan.index, group: plan.groupLabel },
  });
  guard(log);
  // Every shard's password is masked from the first log line on, not only once its connection opens.
  for (const shard of shardMapOf(options).all()) registerUrlSecrets(shard.url);
  const planned = { name: "default", concurrency: plan.concurrency, queues: plan.queues };
  // A child of another shard than the cluster's serves that shard's Redis, and only its group's queues:
  // the config's extra capsules belong to the cluster's own shard.
  const elsewhere = plan.shard !== undefined && plan.shard !== (options.shard ?? DEFAULT_SHARD);
  const workerOptions = {
    ...options,
    ...(plan.shard === undefined ? {} : { shard: plan.shard, redisUrl: shardMapOf(options).urlOf(plan.shard) }),
    capsules: elsewhere ? [planned] : [planned, ...options.capsules.slice(1)],
  };

  // A stop that arrives while the job module is still loading: nothing has been fetched, so leave now
  // (otherwise the message would be lost and the supervisor would have to SIGKILL this child).
  const stopWhileBooting = (message: unknown) => {
    if (isToChild(message) && (message.type === "stopNow" || (message.type === "signal" && message.signal === "TERM")))
      process.exit(0);
  };
  process.on("message", stopWhileBooting);
  process.once("SIGTERM", () => process.exit(0));

  let launcher: Launcher;
  try {
    const { registry, plugins } = await loadJobModule(workerOptions, log);
    launcher = new Launcher(workerOptions, registry, {
      logger: log,
      plugins,
      ownsDefaultClient: true,
      // What the job module registered with configureServer as it loaded.
      serverConfig: serverConfig(),
      onRemoteSignal: (signal) => handle(signal),
    });
    send({ type: "identity", identity: launcher.identity });
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    log.fatal({ err: error }, message);
    send({ type: "fatal", message });
    process.exit(1);
  }

  // Each fetched batch is recorded before its jobs start, so a job that blocks the event loop at once
  // can still be named by the supervisor's hang watch.
  launcher.ctx.state.onBatch = batchReporter(spec.batchFile, log, (batch) => send({ type: "started", batch }));
  // Job metrics go to the supervisor, which serves /metrics for the whole cluster.
  const metrics = new ChildReporter(new JobMetrics(launcher.ctx, { processLabels: { child: String(plan.index) } }));
  metrics.start();

  let stopping = false;
  /** `timeout`: seconds for the running jobs, when the supervisor's stop names its own. */
  const stop = (now: boolean, timeout?: number) => {
    if (now) void launcher.stopNow();
    if (stopping) return;
    stopping = true;
    launcher
      .stop(timeout)
      .then(() => metrics.stop())
      .then(
        () => process.exit(0),
        (error: unknown) => {
          log.error({ err: error }, "shutdown failed");
          process.exit(1);
        },
      );
  };
  function handle(signal: "TERM" | "TSTP" | "TTIN", timeout?: number): void {
    if (signal === "TERM") stop(false, timeout);
    else if (signal === "TSTP") void launcher.quiet();
    else launcher.dumpBusy();
  }

  process.off("message", stopWhileBooting);
  process.removeAllListeners("SIGTERM");
  process.on("message", (message) => {
    if (!isToChild(message)) return;
    if (message.type === "signal") handle(message.signal, message.timeout);
    else if (message.type === "stopNow") stop(true);
    else if (message.type === "leaderVacant") launcher.electNow();
  });
  process.on("SIGTERM", () => stop(false));
  process.on("SIGINT", () => {});
  process.on("SIGTSTP", () => void launcher.quiet());
  process.on("SIGTTIN", () => launcher.dumpBusy());
  // node:cluster's own "disconnect" listener exits a worker at once (code 0) when the channel closes
  // without the primary asking, i.e. when the supervisor died: running jobs would be lost, not requeued.
  // Telling it the exit after disconnect is ours leaves the handler below to stop gracefully.
  if (cluster.worker) cluster.worker.exitedAfterDisconnect = true;
  process.on("disconnect", () => {
    if (stopping) return;
    log.warn("the supervisor is gone; stopping");
    setTimeout(() => process.exit(1), (options.timeout + ORPHAN_GRACE) * 1000).unref();
    stop(false);
  });

  try {
    await launcher.start();
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    log.fatal({ err: error }, `startup failed: ${message}`);
    send({ type: "fatal", message: `startup failed: ${message}` });
    await launcher.stop().catch(() => {});
    process.exit(1);
  }
  send({ type: "ready", identity: launcher.identity });
}
