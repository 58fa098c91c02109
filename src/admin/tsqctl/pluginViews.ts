/**
 * `tsqctl <view> [--json]` for every view the plug-ins declare (server/pluginViews.ts): the concurrency
 * limits' `limits`, the rate limits' `ratelimits`, an app's own. The state as JSON, or the view's text.
 */
import type { Command } from "commander";
import type { PluginView } from "../../server/pluginViews.js";
import type { Plugin } from "../../server/plugin.js";
import { addJsonOption, addRedisUrlOption, printJson, resolveRedisUrl, withRedis, type CliIO } from "./common.js";
import { tableLines } from "./format.js";

interface Flags {
  json?: boolean;
  redisUrl?: string;
}

/** The views of `plugins`, in list order; one named like a command already registered is refused. */
export function registerPluginViews(program: Command, io: CliIO, plugins: readonly Plugin[]): void {
  const views: PluginView[] = plugins.flatMap((plugin) => plugin.views ?? []);
  for (const view of views) {
    const taken = program.commands.find((command) => command.name() === view.name);
    if (taken) throw new TypeError(`a plug-in's view is named "${view.name}", a tsqctl command already; rename it`);
    const command = program.command(view.name).description(view.description);
    addRedisUrlOption(addJsonOption(command)).action(async (flags: Flags) => {
      const state = await withRedis(resolveRedisUrl(flags.redisUrl, io), (redis) => view.read(redis));
      if (flags.json) return printJson(io, state);
      io.out(`${view.text(state, tableLines)}\n`);
    });
  }
}
