/**
 * The job module and routing rules as `tsq` would see them, for the tsqctl commands that need a class's
 * attributes (`workers`, `push`): `-r <module>` and `-C <file>` as for `tsq`, else `require:` and
 * `routing_rules:` of config/tsq.yml when present.
 */
import type { Command } from "commander";
import { WorkerRouter } from "../../platform/attributes/WorkerRouter.js";
import { Registry } from "../../server/Registry.js";
import { resolveWorkerFlags } from "../../options/workerOptions.js";
import { packagePlugins } from "../../packagePlugins.js";
import { settingsOf } from "../../server/plugin.js";
import type { CliIO } from "./common.js";

export interface ModuleFlags {
  require?: string;
  config?: string;
}

export interface JobModule {
  /** Empty when no module was given. */
  registry: Registry;
  router: WorkerRouter;
  /** The module's absolute path, if one was given. */
  path: string | undefined;
}

export function addModuleOptions(command: Command): Command {
  return command
    .option("-r, --require <path>", "the job module, as for tsq (default: config require:)")
    .option("-C, --config <file>", "config file for routing_rules and require (default: config/tsq.yml when present)");
}

/**
 * Reads the config file and loads the job module; a bad rule, module or class attribute is a ConfigError.
 * `whenRouting`: load the config's `require:` module only if there are routing rules to apply (loading
 * runs the module's top-level code, which a plain push by name should not do); `-r` always loads.
 */
export async function loadJobModule(flags: ModuleFlags, io: CliIO, whenRouting = false): Promise<JobModule> {
  const { options } = resolveWorkerFlags(
    { require: flags.require, config: flags.config },
    io.env,
    process.cwd(),
    settingsOf(packagePlugins()),
  );
  const registry = new Registry();
  const wanted = !whenRouting || flags.require !== undefined || options.routingRules.length > 0;
  if (options.require !== undefined && wanted) await registry.load(options.require);
  return { registry, router: new WorkerRouter(options.routingRules), path: options.require };
}
