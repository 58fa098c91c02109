/**
 * The periodic jobs' worker settings: leader election timings, the tick grace period and sidekiq-cron's
 * protocol, declared here rather than in the core's defaults. The `cron:` schedules section stays in
 * the core's config schema (platform/config/cronSection.ts): it is a nested section, not one value.
 */
import { MAX_INTERVAL } from "../../platform/config/bounds.js";
import { defineSetting } from "../../platform/config/settings.js";
import { ConfigError } from "../../wire/errors.js";

declare module "../../platform/config/options.js" {
  interface WorkerOptions {
    /** Seconds the leader record lives without renewal (config `leader_ttl`, default 60, integer). */
    leaderTtl?: number;
    /** Seconds between the leader's renewals (config `leader_renew_interval`, default 15 or a quarter of the TTL). */
    leaderRenewInterval?: number;
    /** Most seconds between a follower's election attempts (config `leader_check_interval`, default 60). */
    leaderCheckInterval?: number;
    /** Seconds a late periodic tick is still enqueued (config `cron_grace_period`, default 60). */
    cronGracePeriod?: number;
    /** Take part in sidekiq-cron's enqueue protocol (config `sidekiq_cron`, default false). */
    sidekiqCron?: boolean;
    /** Most seconds between reads of sidekiq-cron's schedules (config `sidekiq_cron_poll_interval`, default 10). */
    sidekiqCronPollInterval?: number;
  }
}

const seconds = { min: 0, above: true, max: MAX_INTERVAL, unit: "seconds" } as const;

/**
 * Seconds the leader record (`dear-leader`) lives without renewal: how long a killed leader blocks a
 * successor. Integer (SET ... EX). Longer rides out Redis hiccups; shorter fails over faster.
 */
export const leaderTtl = defineSetting({
  key: "leaderTtl",
  default: 60,
  min: 1,
  max: MAX_INTERVAL,
  integer: true,
  unit: "seconds",
});

/** Sidekiq Enterprise renews every 15 s; with a short TTL, four renewals fit in one. */
const DEFAULT_RENEW_INTERVAL = 15;

/**
 * Seconds between the leader's renewals (Sidekiq Enterprise: 15, or a quarter of `leaderTtl` when that
 * is shorter). Must be below `leaderTtl`, or the record expires between renewals.
 */
export const leaderRenewInterval = defineSetting({
  key: "leaderRenewInterval",
  default: DEFAULT_RENEW_INTERVAL,
  ...seconds,
  check: (renew, options) => {
    const ttl = leaderTtl.read(options);
    return renew < ttl
      ? undefined
      : `leader_renew_interval (${renew} s) must be below leader_ttl (${ttl} s), or the leader's record expires between renewals`;
  },
});

/**
 * Most seconds between a follower's election attempts (Sidekiq Enterprise: 60). A follower also wakes
 * when the current record is due to expire, so failover takes about `leaderTtl`, not TTL + this.
 */
export const leaderCheckInterval = defineSetting({ key: "leaderCheckInterval", default: 60, ...seconds });

/**
 * Seconds after its time during which a periodic tick is still enqueued (late, e.g. across a leader
 * change); an older tick counts as missed and is dropped unless the schedule has `catch_up`.
 * sidekiq-cron's `reschedule_grace_period` is also 60.
 */
export const cronGracePeriod = defineSetting({ key: "cronGracePeriod", default: 60, ...seconds });

/**
 * Take part in sidekiq-cron's own enqueue protocol (its `cron_jobs` schedules), so Ruby processes
 * running sidekiq-cron and tsq processes together enqueue each tick once. Off unless opted in.
 */
export const sidekiqCron = defineSetting({ key: "sidekiqCron", default: false });

/**
 * Most seconds between reads of sidekiq-cron's schedules (how soon a new or changed schedule is
 * noticed); each due tick also wakes the poller, one second after the tick.
 */
export const sidekiqCronPollInterval = defineSetting({ key: "sidekiqCronPollInterval", default: 10, ...seconds });

export const CRON_SETTINGS = [
  leaderTtl,
  leaderRenewInterval,
  leaderCheckInterval,
  cronGracePeriod,
  sidekiqCron,
  sidekiqCronPollInterval,
] as const;

/** A worker's cron settings, read once (a bad one throws ConfigError naming its key). */
export interface CronSettings {
  leaderTtl: number;
  leaderRenewInterval: number;
  leaderCheckInterval: number;
  cronGracePeriod: number;
  sidekiqCron: boolean;
  sidekiqCronPollInterval: number;
}

/** The worker's values; a renewal not given is 15 s or a quarter of the TTL, whichever is shorter. */
export function cronSettings(options: object): CronSettings {
  const ttl = leaderTtl.read(options);
  const given = (options as { leaderRenewInterval?: unknown }).leaderRenewInterval;
  const renew = given === undefined ? Math.min(DEFAULT_RENEW_INTERVAL, ttl / 4) : leaderRenewInterval.read(options);
  const problem = leaderRenewInterval.check?.(renew, options);
  if (problem !== undefined) throw new ConfigError(problem);
  return {
    leaderTtl: ttl,
    leaderRenewInterval: renew,
    leaderCheckInterval: leaderCheckInterval.read(options),
    cronGracePeriod: cronGracePeriod.read(options),
    sidekiqCron: sidekiqCron.read(options),
    sidekiqCronPollInterval: sidekiqCronPollInterval.read(options),
  };
}
