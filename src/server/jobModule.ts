/**
 * The job module (`-r`, `require:`, `new Cluster({ require })`): the operator's code, imported by every
 * process that runs its jobs, for its classes (server/Registry.ts) and its `plugins` export
 * (server/jobModulePlugins.ts). Only this module chooses code; a payload only names a registered class.
 */
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { ConfigError } from "../wire/errors.js";

/** The module's exports; a module that fails to load is a ConfigError naming it and the usual fix. */
export async function importJobModule(modulePath: string): Promise<Record<string, unknown>> {
  const absolute = resolve(modulePath);
  try {
    // The same URL every time, so the Registry, the plug-in list and the planner share one import.
    return (await import(pathToFileURL(absolute).href)) as Record<string, unknown>;
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new ConfigError(
      `could not load the job module ${absolute} (-r): ${reason}. ` +
        "Check the path and build it first (e.g. `npm run build`); it must be an ES module or CommonJS file.",
    );
  }
}
