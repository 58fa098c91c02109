/**
 * Builds what the roles of one worker share (ServerContext): its client, its plug-ins' server hooks in
 * list order, then the app's middleware and death handlers. The Launcher builds one per worker and runs
 * its lifecycle.
 */
import { JobOptionKeys } from "../client/jobOptionKeys.js";
import { EventEmitter } from "node:events";
import { Client } from "../client/Client.js";
import { configureClient } from "../client/defaultClient.js";
import { defaultPlugins } from "../client/defaultPlugins.js";
import { shardMapOf } from "../platform/shards/serve.js";
import { WorkerRouter } from "../platform/attributes/WorkerRouter.js";
import { DEFAULT_SHARD } from "../platform/shards/ShardMap.js";
import type { WorkerOptions } from "../platform/config/options.js";
import { logger as rootLogger, withJobFields, type Logger } from "../platform/logger.js";
import { Chain } from "../platform/Chain.js";
import { SYSTEM_CLOCK, type Clock } from "../platform/util/clock.js";
import { ExecutionTracker } from "./ExecutionTracker.js";
import type { Connections } from "./Connections.js";
import { lockHooks, newIdentity, type JobEvents, type JobFactory, type ServerContext } from "./context.js";
import type { ServerMiddlewareArgs } from "./context.js";
import { watchConnection } from "./connectionWatch.js";
import { DueAlarms } from "./DueAlarms.js";
import type { RemoteSignal } from "./Heartbeat.js";
import { releaseLocksWith, serverHooksOf, type Plugin, type Service } from "./plugin.js";
import { ProcessState } from "./ProcessState.js";
import type { Registry } from "./Registry.js";
import type { RegisteredServerConfig } from "./serverConfig.js";
import { fetchOrderOf } from "./fetch/fetchOrder.js";
import { WorkerLocals } from "./WorkerLocals.js";

export interface LauncherHooks {
  /** A remote signal popped by the heartbeat; the CLI routes it to the same handler as the OS signal. */
  onRemoteSignal?(signal: RemoteSignal): void;
  logger?: Logger;
  /**
   * Features, in chain order (src/plugins.ts `builtinPlugins()` for all built-in ones). Default: the
   * list the process set at boot (client/defaultPlugins.ts), else none; the entry points pass theirs.
   * `[]`: plain Sidekiq OSS behaviour.
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
  /**
   * This worker's middleware, death handlers and lifecycle handlers. Default: none. The entry points
   * pass the app's `configureServer` registrations (`serverConfig()`) or the worker's own.
   */
  serverConfig?: RegisteredServerConfig;
  /** Time for the roles that run on it (poller, cron, leader); default: the system clock. Tests drive one by hand. */
  clock?: Clock;
}

export interface WorkerContext {
  readonly ctx: ServerContext;
  /** The plug-ins' services, in list order (started in it, stopped in reverse). */
  readonly services: Service[];
  /** The names of the plug-ins this worker runs, in chain order (its start log names them). */
  readonly pluginNames: string[];
}

/**
 * Throws when a plug-in refuses this worker's settings or classes, having dropped every connection
 * first. `isStopping`: true once the worker's stop began (a lost connection is then expected, not news).
 */
export function buildWorkerContext(
  options: WorkerOptions,
  registry: Registry,
  hooks: LauncherHooks,
  config: RegisteredServerConfig,
  connections: Connections,
  isStopping: () => boolean,
): WorkerContext {
  // Jobs that enqueue jobs route them by this worker's rules (`routing_rules`); without any, by the
  // app's (`configureRouting`), as its other pushes are. Parsed first: a bad rule opens no connection.
  const router = options.routingRules.length > 0 ? new WorkerRouter(options.routingRules) : undefined;
  const plugins = hooks.plugins ?? defaultPlugins<Plugin>() ?? [];
  // The classes' options against this worker's own plug-ins, before any connection opens.
  registry.checkOptions(new JobOptionKeys(plugins));
  const { identity, hostname } = newIdentity();
  const redis = connections.open("tsq");
  // An app's logger gets the job's fields on the lines logged inside a job (tsq's own has them).
  const logger = withJobFields(hooks.logger ?? rootLogger());
  watchConnection(redis, logger, isStopping);
  const client = new Client({
    redis,
    plugins,
    middleware: config.clientMiddleware.copy(),
    // Pushes by name from this worker (the poller's re-push) find this worker's class of that name.
    jobClasses: (name) => registry.get(name),
    ...(router ? { router } : {}),
    sidekiqVersion: options.sidekiqVersion,
    maxPayloadBytes: options.maxPayloadBytes,
    compressThresholdBytes: options.compressThresholdBytes,
    maxInflatedBytes: options.maxInflatedBytes,
    // Plug-ins read this worker's settings for the pushes of its jobs (a limited class's parked bound).
    workerOptions: options as unknown as Readonly<Record<string, unknown>>,
    // Jobs that enqueue jobs reach every shard; this process's own Redis serves its shard's queues.
    shards: { map: shardMapOf(options), home: options.shard ?? DEFAULT_SHARD },
  });
  if (hooks.ownsDefaultClient) configureClient(client);
  const ctx: ServerContext = {
    options,
    identity,
    hostname,
    redis,
    connect: (name, blocking) => connections.open(name, blocking),
    logger,
    registry,
    state: new ProcessState(),
    execution: options.executionMetrics ? new ExecutionTracker() : undefined,
    client,
    serverMiddleware: new Chain<ServerMiddlewareArgs>(),
    deathHandlers: [],
    hooks: [],
    metered: plugins,
    locks: lockHooks(redis, []),
    events: new EventEmitter<JobEvents>(),
    // The client's: `sidekiq_version: auto` may change it at any heartbeat (Heartbeat reads the fleet).
    get timestampFormat() {
      return client.timestampFormat;
    },
    clock: hooks.clock ?? SYSTEM_CLOCK,
    alarms: new DueAlarms(hooks.clock),
    locals: new WorkerLocals(),
    ...(hooks.jobFactory ? { jobFactory: hooks.jobFactory } : {}),
  };
  // Plug-ins first, in list order, then the registrations this worker was given (the app's
  // configureServer, or its own), copied: they are never modified, so several workers stay apart.
  let fetchOrder: ReturnType<typeof fetchOrderOf>;
  try {
    fetchOrder = fetchOrderOf(plugins);
    ctx.hooks.push(...serverHooksOf(plugins, ctx));
  } catch (error) {
    // A plug-in refused this worker's settings or classes (or the fetch orders' before/after): no
    // connection may keep the process alive.
    connections.disconnect();
    throw error;
  }
  Object.assign(ctx, {
    locks: lockHooks(redis, ctx.hooks, releaseLocksWith(plugins)),
    ...(fetchOrder && { fetchOrder: fetchOrder(ctx) }),
  });
  for (const hook of ctx.hooks) {
    if (hook.middleware) ctx.serverMiddleware.add(hook.middleware.use, ...(hook.middleware.options ?? []));
    if (hook.onDeath) ctx.deathHandlers.push(hook.onDeath);
  }
  for (const entry of config.middleware.entriesList()) ctx.serverMiddleware.add(entry.middleware, ...entry.options);
  ctx.deathHandlers.push(...config.deathHandlers);
  return {
    ctx,
    services: ctx.hooks.flatMap((hook) => hook.services ?? []),
    pluginNames: plugins.map((plugin) => plugin.name),
  };
}
