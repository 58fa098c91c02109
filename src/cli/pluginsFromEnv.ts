/**
 * The plug-ins a CLI worker runs: every built-in one, or none with TSQ_PLUGINS=none (plain Sidekiq OSS
 * behaviour, as `plugins: []` from code). Any other value is refused, naming what is accepted.
 */
import { ConfigError } from "../wire/errors.js";
import type { Plugin } from "../server/plugin.js";

export function pluginsFromEnv(builtins: Plugin[], env: NodeJS.ProcessEnv = process.env): Plugin[] {
  const value = env.TSQ_PLUGINS?.trim();
  if (value === undefined || value === "" || value === "all") return builtins;
  if (value === "none") return [];
  throw new ConfigError(`TSQ_PLUGINS must be "all" (the default) or "none", got ${JSON.stringify(value)}`);
}
