/**
 * The job module's `plugins` export: the whole plug-in list the processes that load the module run, as
 * `new Worker({ plugins })` takes it:
 *
 *   export const plugins = [...builtinPlugins(), auditTrail()];
 *
 * Children of a cluster are separate processes, so plug-in objects cannot be handed to them: each one
 * imports the module and reads the export itself, and the supervisor reads it first, to refuse a bad
 * list before forking. What the list becomes with TSQ_PLUGINS: src/library/processPlugins.ts.
 */
import { resolve } from "node:path";
import { ConfigError } from "../wire/errors.js";
import { importJobModule } from "./jobModule.js";
import type { Plugin } from "./plugin.js";

const FIX =
  "export the whole list its workers run, e.g. `export const plugins = [...builtinPlugins(), myPlugin()]`, " +
  "or remove the export to run every built-in feature";

/**
 * The module's `plugins` export, checked; undefined when it has none. Refuses, naming the module and
 * the fix: a value that is not an array, an element that is not a plug-in (no non-empty `name`; a
 * factory not called), two plug-ins of one name (each would run twice or one would shadow the other).
 */
export async function jobModulePlugins(modulePath: string): Promise<readonly Plugin[] | undefined> {
  const exports = await importJobModule(modulePath);
  if (!Object.hasOwn(exports, "plugins") || exports.plugins === undefined) return undefined;
  const where = `the job module ${resolve(modulePath)} exports \`plugins\``;
  const list: unknown = exports.plugins;
  if (!Array.isArray(list)) throw new ConfigError(`${where} as ${describe(list)}, not an array: ${FIX}`);
  const seen = new Map<string, number>();
  list.forEach((plugin: unknown, index) => {
    if (typeof plugin === "function")
      throw new ConfigError(
        `${where}: plugins[${index}] is a function, not a plug-in: call it ` +
          `(\`${plugin.name || "myPlugin"}()\`, not \`${plugin.name || "myPlugin"}\`)`,
      );
    const name = typeof plugin === "object" && plugin !== null ? (plugin as { name?: unknown }).name : undefined;
    if (typeof name !== "string" || name === "")
      throw new ConfigError(
        `${where}: plugins[${index}] is ${describe(plugin)}, not a plug-in: each element needs a non-empty ` +
          "string `name` (build it with definePlugin); " +
          FIX,
      );
    const first = seen.get(name);
    if (first !== undefined)
      throw new ConfigError(
        `${where}: plugins[${first}] and plugins[${index}] are both named "${name}": list each plug-in once ` +
          "(builtinPlugins() already holds every built-in feature)",
      );
    seen.set(name, index);
  });
  return list as Plugin[];
}

function describe(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  switch (typeof value) {
    case "object":
      return "an object without a `name`";
    case "function":
      return "a function";
    case "string":
      return `the string ${JSON.stringify(value.slice(0, 40))}`;
    case "number":
    case "boolean":
    case "bigint":
      return `${typeof value} ${value}`;
    default:
      return typeof value;
  }
}
