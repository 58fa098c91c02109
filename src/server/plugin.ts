/**
 * The plug-in seam. A feature is one object: a name, optional client hooks (client/plugin.ts) and
 * optional server hooks, built once per worker from its context. Built-in features register through
 * this same seam from one ordered list (src/plugins.ts) whose order is the chain order; a worker with
 * `plugins: []` behaves as plain Sidekiq OSS.
 *
 * A fetched job passes, in list order: every `intercept` (may take the job before it starts) →
 * `resolveClass` when no class has the payload's name → every `around` (outermost first) → plug-in
 * middleware → the app's server middleware → every `aroundPerform` → perform. A server hook returning
 * undefined (or a plug-in without `server`) costs nothing on the job path.
 */
import type { Redis } from "ioredis";
import type { Middleware } from "../platform/Chain.js";
import type { JobPayload } from "../wire/payload.js";
import type { ClientPlugin } from "../client/plugin.js";
import type { DeathHandler, JobOutcome, ServerContext, ServerMiddlewareArgs } from "./context.js";
import type { UnitOfWork } from "./fetch/unitOfWork.js";

/** A long-running part of a feature (a limiter's sweep, the cron scheduler): started after the first heartbeat, stopped at shutdown. */
export interface Service {
  readonly name: string;
  start(): void;
  /** Stops and waits for the service's own work; quiet() calls it before stop() when `stopOnQuiet`. */
  stop(): Promise<void>;
  /** True: stopped when the process quiets (the poller and cron leader step down then). */
  readonly stopOnQuiet?: boolean;
}

/** A class found for a payload whose `class` names no registered class (a Rails ActiveJob wrapper). */
export interface ResolvedClass {
  className: string;
  /** The arguments `perform` receives, given the new instance. */
  prepare(instance: object): unknown[];
}

/** How a job that ran ended: its outcome, with what `perform` returned or the error it threw. */
export interface JobEnd {
  readonly outcome: JobOutcome;
  /** `perform`'s resolved value (status "done"). */
  readonly result?: unknown;
  /** The failure (status "fail"). */
  readonly error?: Error;
}

/** Stored jobs as payloads, or their text or bytes as read from Redis. */
export type StoredJobs = Iterable<JobPayload | string | Buffer>;

export interface ServerHooks {
  /**
   * Before a job starts: `false` (synchronously, no tick) when the hook does not apply; a promise of
   * true when it took the job away (deferred, dropped) and acknowledged it itself.
   */
  intercept?(job: JobPayload, unit: UnitOfWork): false | Promise<boolean>;
  /** Finds the class of a payload whose `class` is not registered (ActiveJob's wrapper). */
  resolveClass?(job: JobPayload): ResolvedClass | undefined;
  /** Around the whole chain and perform, for the jobs it concerns; must call `run` once or throw. */
  around?(run: () => Promise<void>, instance: object, job: JobPayload, queue: string): Promise<void>;
  /** Server middleware, with the options its class is constructed with. */
  middleware?: { use: Middleware<ServerMiddlewareArgs>; options?: unknown[] };
  /** Around `perform` only, inside every middleware (a rate limit's OverLimitError reschedules). */
  aroundPerform?(perform: () => Promise<unknown>, job: JobPayload, queue: string): Promise<unknown>;
  /** Long-running parts, started and stopped with the worker. */
  services?: Service[];
  onDeath?: DeathHandler;
  /**
   * A job ran and ended (done, retried or dead), called synchronously just before its acknowledgement
   * so a write it starts goes out in the same tick (auto-pipelined). Must not throw; it owns its errors.
   * Undefined, or a promise the slot waits for (after the acknowledgement) to bound writes in flight.
   */
  onEnd?(job: JobPayload, queue: string, end: JobEnd): Promise<void> | undefined;
  /** Releases the locks held by jobs leaving Redis without running again (dead, poison pills). */
  releaseLocks?(redis: Redis, stored: StoredJobs): Promise<unknown>;
  /** A job scheduled for a retry at `retryAt` (epoch seconds) keeps what it must until then. */
  keepLocksForRetry?(redis: Redis, job: JobPayload, retryAt: number): Promise<unknown>;
}

export interface Plugin extends ClientPlugin {
  /** Hooks for one worker; undefined when no class of this worker uses the feature. */
  server?(ctx: ServerContext): ServerHooks | undefined;
}

/** Identity function that checks a plug-in's shape at compile time (`export default definePlugin({...})`). */
export function definePlugin<P extends Plugin>(plugin: P): P {
  if (typeof plugin?.name !== "string" || plugin.name === "")
    throw new TypeError("definePlugin: a plug-in needs a non-empty `name`");
  return plugin;
}

/** Every hook of the given plug-ins for one worker, in list order (undefined ones dropped). */
export function serverHooksOf(plugins: readonly Plugin[], ctx: ServerContext): ServerHooks[] {
  return plugins.flatMap((plugin) => plugin.server?.(ctx) ?? []);
}
