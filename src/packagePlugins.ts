/**
 * The plug-ins of a Client or Worker built from the package without `plugins`: the list the
 * process set at boot (client/defaultPlugins.ts), else every built-in feature (src/plugins.ts). Read
 * when each is built, so importing the package changes nothing. (A Cluster's children and supervisor
 * run the job module's list instead: library/processPlugins.ts.)
 */
import { defaultPlugins } from "./client/defaultPlugins.js";
import { builtinPlugins } from "./plugins.js";
import type { Plugin } from "./server/plugin.js";

export function packagePlugins(given?: readonly Plugin[]): readonly Plugin[] {
  return given ?? defaultPlugins<Plugin>() ?? builtinPlugins();
}
