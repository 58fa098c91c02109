/**
 * Periodic jobs as a plug-in (docs/cron.md): the schedules of config `cron:` and classes' `static cron`,
 * enqueued by one leader fleet-wide, and sidekiq-cron's schedules when `sidekiq_cron` is on. The leader
 * is elected on the default shard only (a leader per shard would enqueue every tick once per shard),
 * and steps down when the process quiets.
 */
import { DEFAULT_SHARD } from "../../platform/shards/ShardMap.js";
import { definePlugin, type Service } from "../../server/plugin.js";
import { refuseOnCluster } from "../../server/clusterRefusal.js";
import { startCron, type CronHandle } from "./index.js";
import { CRON_SCRIPTS } from "./scripts.js";
import { CRON_SETTINGS, cronSettings } from "./settings.js";

export const cron = definePlugin({
  name: "cron",
  scripts: CRON_SCRIPTS,
  settings: CRON_SETTINGS,
  server(ctx) {
    // Read once as the worker is built: a bad value stops it here, naming the key.
    const settings = cronSettings(ctx.options);
    if (settings.sidekiqCron)
      refuseOnCluster(
        ctx,
        "sidekiq_cron",
        "its schedules are sidekiq-cron's own keys, kept for Ruby processes, and Ruby Sidekiq cannot join a Redis " +
          "Cluster; move the schedules to tsq's cron: config",
      );
    if ((ctx.options.shard ?? DEFAULT_SHARD) !== DEFAULT_SHARD) return undefined;
    let handle: CronHandle | undefined;
    const service: Service & { electNow(): void } = {
      name: "cron",
      stopOnQuiet: true,
      start: () => void (handle = startCron(ctx, settings)),
      stop: async () => {
        await handle?.stop();
      },
      electNow: () => handle?.electNow(),
    };
    return { services: [service] };
  },
});
