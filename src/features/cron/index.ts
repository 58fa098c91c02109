/**
 * Periodic (cron) jobs: leader election on `dear-leader` plus the leader's scheduler, and, when opted
 * in (`sidekiq_cron: true`), the poller that takes part in sidekiq-cron's protocol. The Launcher
 * starts them after the poller and stops them on quiet (the leader steps down at once):
 *
 *   this.cron = startCron(this.ctx);   // start()
 *   await this.cron?.stop();           // quiet()
 */
import type { ServerContext } from "../../server/context.js";
import { CronScheduler } from "./CronScheduler.js";
import { Leader } from "./Leader.js";
import { validateCron } from "./schedules.js";
import { SidekiqCronPoller } from "./SidekiqCronPoller.js";
import { cronSettings, type CronSettings } from "./settings.js";

export type { CronEntry, CronDeclaration, CronClassEntry } from "../../platform/config/cronEntry.js";
export { validateCron, classSchedules } from "./schedules.js";
export { CronStore, type StoredSchedule } from "./CronStore.js";
export { cronProblem } from "./expression.js";
export { Leader } from "./Leader.js";
export { CronScheduler } from "./CronScheduler.js";
export { SidekiqCronStore, type SidekiqCronSchedule } from "./SidekiqCronStore.js";
export { SidekiqCronPoller } from "./SidekiqCronPoller.js";

export interface CronHandle {
  /** True while this process is the elected leader. */
  isLeader(): boolean;
  /** Idempotent: stops scheduling, then steps down (deletes `dear-leader` if it is ours). */
  stop(): Promise<void>;
  /** Wakes the election loop now: the leader record was released by a supervisor that saw its holder die. */
  electNow(): void;
}

/** Extra seconds a tick's claim key outlives the grace period and a leader change. */
const CLAIM_MARGIN = 60;

/**
 * tsq's own schedules (see startOwnCron) and, when opted in, the sidekiq-cron poller. `settings`: the
 * worker's, read by the plug-in as the worker was built.
 */
export function startCron(
  ctx: ServerContext,
  settings: CronSettings = cronSettings(ctx.options),
): CronHandle | undefined {
  const own = startOwnCron(ctx, settings);
  if (!settings.sidekiqCron) return own;
  const poller = new SidekiqCronPoller(ctx, settings.sidekiqCronPollInterval);
  poller.start();
  let stopping: Promise<void> | undefined;
  return {
    isLeader: () => own?.isLeader() ?? false,
    electNow: () => own?.electNow(),
    stop: () => (stopping ??= Promise.all([poller.stop(), own?.stop()]).then(() => undefined)),
  };
}

/**
 * Validates the schedules (config `cron:` plus classes' `static cron`; throws a ConfigError naming a
 * bad one), then starts electing and, while leader, enqueueing. A process that declares no schedule
 * stays out of the election: `dear-leader` is also Sidekiq Enterprise's, and a tsq process holding it
 * for nothing would stop a Ruby fleet's periodic jobs.
 */
function startOwnCron(ctx: ServerContext, settings: CronSettings): CronHandle | undefined {
  const schedules = validateCron(ctx.options.cron, ctx.registry);
  if (schedules.length === 0) return undefined;
  const leader = new Leader(ctx, {
    ttl: settings.leaderTtl,
    renewInterval: settings.leaderRenewInterval,
    checkInterval: settings.leaderCheckInterval,
  });
  const scheduler = new CronScheduler(ctx, schedules, leader, {
    grace: settings.cronGracePeriod,
    claimTtl: Math.ceil(settings.cronGracePeriod + settings.leaderTtl + CLAIM_MARGIN),
  });
  leader.start();
  scheduler.start();
  let stopping: Promise<void> | undefined;
  return {
    isLeader: () => leader.isLeader(),
    electNow: () => leader.wake(),
    stop: () => {
      // The scheduler stops first, so nothing is enqueued after the record is deleted.
      stopping ??= scheduler.stop().then(() => leader.stop());
      return stopping;
    },
  };
}
