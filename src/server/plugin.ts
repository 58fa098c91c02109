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
import type { LuaSource } from "../platform/redis/luaScript.js";
import type { ClientPlugin } from "../client/plugin.js";
import type { ServerContext } from "./context.js";
import type { ClientEvents } from "../client/events.js";
import type { JobEvents, PluginMetrics, ServerHooks, StoredJobs } from "./hooks.js";
import type { PluginView } from "./pluginViews.js";
import type { PluginFetch } from "./fetch/fetchOrder.js";
import { distinctSettings, type Setting } from "../platform/config/settings.js";

export type {
  Service,
  ResolvedClass,
  StoredJobs,
  ServerHooks,
  JobEnd,
  JobEvents,
  MetricsSeam,
  FeatureCounter,
  FeatureGauge,
} from "./hooks.js";
export type { FetchOrder, PluginFetch } from "./fetch/fetchOrder.js";
export { defineView, type PluginView, type TableLines } from "./pluginViews.js";
export { defineSetting, type Setting, type SettingSpec } from "../platform/config/settings.js";

export interface Plugin extends ClientPlugin, PluginMetrics {
  /** Hooks for one worker; undefined when no class of this worker uses the feature. */
  server?(ctx: ServerContext): ServerHooks | undefined;
  /**
   * The locks this feature's payloads hold, released on every path a job leaves Redis by without
   * running again: dead, a poison pill buried by recovery (worker or supervisor), deleted or killed
   * through the API. Needs no worker: the supervisor and the admin API call it too.
   */
  locks?: PluginLocks;
  /**
   * The Lua scripts the feature runs (`luaScript`, src/platform/redis/luaScript.ts). None is read until
   * it first runs, nor sent to a Redis that does not ask for it (NOSCRIPT); the list lets a test load them
   * all and tools name them (the core's own are declared beside their callers, and no list in the core
   * names a feature's).
   */
  scripts?: readonly LuaSource[];
  /**
   * The order in which a capsule takes jobs, over Sidekiq's (fetch/fetchOrder.ts), with `before`/`after`
   * against other plug-ins' orders.
   */
  fetch?: PluginFetch;
  /** Read-only status views of the feature's state in Redis: `tsqctl <name>` (server/pluginViews.ts). */
  views?: readonly PluginView[];
  /**
   * The worker options the feature reads (`defineSetting`), each read in `server(ctx)`; the config file,
   * and a variable or flag a setting names, may set them where this plug-in runs.
   */
  settings?: readonly Setting[];
  /**
   * The events the feature emits: on a worker's `ctx.events` (`job`) and on a Client's `events`
   * (`client`), each declared by the feature's own augmentation of JobEvents (hooks.ts) or ClientEvents
   * (client/events.ts); no list in the core names a feature's event.
   */
  emits?: PluginEvents;
}

/** The names of the events a plug-in emits, by emitter. */
export interface PluginEvents {
  readonly job?: readonly (keyof JobEvents)[];
  readonly client?: readonly (keyof ClientEvents)[];
}

export interface PluginLocks {
  /** Releases the locks these stored jobs hold (a job naming none costs no round trip). */
  release(redis: Redis, stored: StoredJobs): Promise<unknown>;
  /**
   * Text every stored job holding one of these locks contains (a field name): clearing a set or a queue
   * then reads only the jobs that contain one (ZSCAN MATCH) to release their locks. Without it, a clear
   * reads every job of what it removes.
   */
  markers?: readonly string[];
}

/** One release over every plug-in's locks, in list order; undefined when none declares any. */
export function releaseLocksWith(
  plugins: readonly Plugin[],
): ((redis: Redis, stored: StoredJobs) => Promise<void>) | undefined {
  const releasers = plugins.flatMap((plugin) => plugin.locks ?? []);
  if (releasers.length === 0) return undefined;
  return async (redis, stored) => {
    const list = [...stored];
    for (const locks of releasers) await locks.release(redis, list);
  };
}

/** Identity function that checks a plug-in's shape at compile time (`export default definePlugin({...})`). */
export function definePlugin<P extends Plugin>(plugin: P): P {
  if (typeof plugin?.name !== "string" || plugin.name === "")
    throw new TypeError("definePlugin: a plug-in needs a non-empty `name`");
  return plugin;
}

/** The settings a plug-in list declares, each once (settings.ts); two under one name are refused. */
export function settingsOf(plugins: readonly Plugin[]): Setting[] {
  return distinctSettings(plugins.map((plugin) => plugin.settings));
}

/** Every hook of the given plug-ins for one worker, in list order (undefined ones dropped). */
export function serverHooksOf(plugins: readonly Plugin[], ctx: ServerContext): ServerHooks[] {
  return plugins.flatMap((plugin) => plugin.server?.(ctx) ?? []);
}
