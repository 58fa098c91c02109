/**
 * The plug-ins of a process that loads a job module: `tsq`, a `tsq-cluster` child, a `Cluster`'s
 * children, and the supervisor (which releases their locks when it buries a poison pill), so all of
 * them agree:
 *
 *   TSQ_PLUGINS   the module exports `plugins`   runs
 *   all / unset   no                             every built-in feature (builtinPlugins())
 *   all / unset   yes                            the module's list, as given (built-ins only if it lists them)
 *   none          either                         nothing: plain Sidekiq OSS, as `plugins: []` from code
 *
 * `none` is the operator's switch and wins over the module: it runs the jobs without any feature, the
 * app's own plug-ins included (a warning names them). Any other value is refused, naming what is accepted.
 */
import { ConfigError } from "../wire/errors.js";
import type { Logger } from "../platform/logger.js";
import { jobModulePlugins } from "../server/jobModulePlugins.js";
import { settingsOf, type Plugin, type Setting } from "../server/plugin.js";
import { builtinPlugins } from "../plugins.js";

export type PluginsSwitch = "all" | "none";

/** TSQ_PLUGINS, checked with the other options (a bad value stops the process before it connects). */
export function pluginsSwitch(env: NodeJS.ProcessEnv = process.env): PluginsSwitch {
  const value = env.TSQ_PLUGINS?.trim();
  if (value === undefined || value === "" || value === "all") return "all";
  if (value === "none") return "none";
  throw new ConfigError(`TSQ_PLUGINS must be "all" (the default) or "none", got ${JSON.stringify(value)}`);
}

/** The list to run given the module's export (undefined: it has none), per the table above. */
export function processPlugins(
  fromModule: readonly Plugin[] | undefined,
  env: NodeJS.ProcessEnv = process.env,
): Plugin[] {
  if (pluginsSwitch(env) === "none") return [];
  return fromModule === undefined ? builtinPlugins() : [...fromModule];
}

/**
 * Reads and checks the job module's `plugins` export (server/jobModulePlugins.ts) and applies TSQ_PLUGINS;
 * without a module, the built-ins (or none). Throws a ConfigError naming the module on a bad export.
 */
export async function pluginsOfJobModule(
  modulePath: string | undefined,
  log: Logger,
  env: NodeJS.ProcessEnv = process.env,
): Promise<Plugin[]> {
  const fromModule = modulePath === undefined ? undefined : await jobModulePlugins(modulePath);
  const plugins = processPlugins(fromModule, env);
  if (fromModule !== undefined && fromModule.length > 0 && plugins.length === 0)
    log.warn(
      { module: modulePath, plugins: fromModule.map((plugin) => plugin.name) },
      "TSQ_PLUGINS=none: the job module's `plugins` do not run either (plain Sidekiq OSS)",
    );
  return plugins;
}

/**
 * The settings a process that loads `modulePath` reads from its config file, environment and flags:
 * every built-in feature's and those of the module's own plug-ins, whichever run (a file stays valid
 * with TSQ_PLUGINS=none). Imports the module (its classes load once, later imports are cached); a
 * module that fails to load or exports a bad list gives the built-ins' here, and its error where the
 * module is loaded to run (pluginsOfJobModule), as it did before it was read for settings.
 */
export async function settingsOfJobModule(modulePath: string | undefined): Promise<Setting[]> {
  const fromModule = modulePath === undefined ? undefined : await jobModulePlugins(modulePath).catch(() => undefined);
  return settingsOf([...builtinPlugins(), ...(fromModule ?? [])]);
}
