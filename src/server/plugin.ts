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
import type { ClientPlugin } from "../client/plugin.js";
import type { ServerContext } from "./context.js";
import type { ServerHooks } from "./hooks.js";

export type { Service, ResolvedClass, StoredJobs, ServerHooks, JobEnd } from "./hooks.js";

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
