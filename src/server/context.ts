/**
 * What every server role shares within one process: options, connections, logger, registry, state,
 * middleware and death handlers. Built once by the Launcher.
 */
import { randomBytes } from "node:crypto";
import { hostname } from "node:os";
import type { EventEmitter } from "node:events";
import type { Chain } from "../platform/Chain.js";
import type { Client } from "../client/Client.js";
import type { WorkerOptions } from "../platform/config/options.js";
import type { JobPayload } from "../wire/payload.js";
import type { Logger } from "../platform/logger.js";
import type { TsqRedis } from "../platform/redis/connection.js";
import type { TimestampFormat } from "../wire/timestamps.js";
import type { DueAlarms } from "./DueAlarms.js";
import type { Clock } from "../platform/util/clock.js";
import type { ProcessState } from "./ProcessState.js";
import type { JobInstance, Registry, RunnableClass } from "./Registry.js";
import type { ExecutionTracker } from "./ExecutionTracker.js";
import type { WorkerLocals } from "./WorkerLocals.js";
import type {
  CapsuleFetchOrder,
  DeathHandler,
  JobEvents,
  PluginMetrics,
  ServerHooks,
  ServerMiddlewareArgs,
  StoredJobs,
} from "./hooks.js";

export type { JobOutcome, JobEvents } from "./hooks.js";

export type { ServerMiddlewareArgs, DeathHandler } from "./hooks.js";

export interface ServerContext {
  readonly options: WorkerOptions;
  readonly identity: string;
  readonly hostname: string;
  /** Shared connection for everything that does not block. */
  readonly redis: TsqRedis;
  /** Opens a dedicated connection (BRPOP must not share one with anything); `blocking` for fetchers. */
  connect(name: string, blocking?: boolean): TsqRedis;
  readonly logger: Logger;
  readonly registry: Registry;
  readonly state: ProcessState;
  /** Per-class run metrics, flushed by the Heartbeat in the client's metrics layout; undefined when switched off. */
  readonly execution: ExecutionTracker | undefined;
  readonly client: Client;
  /** Plug-in middleware in list order, then the app's (configureServer): this worker's own copy. */
  readonly serverMiddleware: Chain<ServerMiddlewareArgs>;
  /** Plug-ins' death handlers, then the app's. */
  readonly deathHandlers: DeathHandler[];
  /** The plug-ins' server hooks, in list order (filled once, as the worker is built). */
  readonly hooks: ServerHooks[];
  /** The plug-ins of this worker's list, as its metrics read them (their counters and gauges), in list order. */
  readonly metered: readonly PluginMetrics[];
  /** Lock bookkeeping for jobs leaving Redis, by the plug-ins that hold locks (none: nothing to do). */
  readonly locks: LockHooks;
  /** The plug-ins' fetch orders, settled (fetch/fetchOrder.ts); undefined when none declares one. */
  readonly fetchOrder?: CapsuleFetchOrder;
  readonly events: EventEmitter<JobEvents>;
  /** How timestamps are written now: the client's (`client.fleetVersion`), read at each use. */
  readonly timestampFormat: TimestampFormat;
  /** Time for the roles that run on it (poller, cron scheduler, leader election); the system clock but in tests. */
  readonly clock: Clock;
  /** Due times of jobs this process put in `schedule`: the Poller polls then (`alarms.add(epochSeconds)`). */
  readonly alarms: DueAlarms;
  /** Builds the instance a job runs on (dependency injection); default `new Class()`. */
  readonly jobFactory?: JobFactory;
  /** What this worker's roles and plug-ins keep for its life (paused queues, a shared limiter): see WorkerLocals. */
  readonly locals: WorkerLocals;
}

/** Builds a job instance for a class, e.g. `(Class) => container.get(Class)`. */
export type JobFactory = (klass: RunnableClass) => JobInstance;

export interface LockHooks {
  release(stored: StoredJobs): Promise<void>;
  keepForRetry(job: JobPayload, retryAt: number): Promise<void>;
}

/**
 * The worker's lock duties: `release` from the plug-ins' lock declarations (plugin.ts), keeping for a
 * retry from `hooks` (read when called, so hooks added after this is built count).
 */
export function lockHooks(
  redis: TsqRedis,
  hooks: readonly ServerHooks[],
  release?: (redis: TsqRedis, stored: StoredJobs) => Promise<void>,
): LockHooks {
  return {
    async release(stored) {
      if (release) await release(redis, stored);
    },
    async keepForRetry(job, retryAt) {
      for (const hook of hooks) if (hook.keepLocksForRetry) await hook.keepLocksForRetry(redis, job, retryAt);
    },
  };
}

/** `hostname:pid:<12 hex>`, as Sidekiq's `identity` (DYNO overrides the hostname, as on Heroku). */
export function newIdentity(): { identity: string; hostname: string } {
  const host = process.env.DYNO ?? hostname();
  return { identity: `${host}:${process.pid}:${randomBytes(6).toString("hex")}`, hostname: host };
}
