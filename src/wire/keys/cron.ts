/**
 * Periodic jobs: tsq's own schedules, prefixed (sidekiq-cron's `cron_job:*` keys are read by its own
 * poller, which would enqueue our schedules a second time in a mixed fleet), and sidekiq-cron's, read
 * and written in its layout. Reached through src/wire/keys.ts, whose header maps every key.
 */

export const CRON_SCHEDULES = "tsq:cron";

export function cronScheduleKey(name: string): string {
  return `tsq:cron:${name}`;
}

/** Claim of one tick (epoch seconds): the process that sets it first enqueues the job. */
export function cronTickKey(name: string, tick: number): string {
  return `tsq:cron-tick:${name}:${tick}`;
}

/** sidekiq-cron's set of schedules; its members are the hash keys (`cron_job:<name>`), not names. */
export const SIDEKIQ_CRON_JOBS = "cron_jobs";

/** sidekiq-cron's hash of one schedule. */
export function sidekiqCronJobKey(name: string): string {
  return `cron_job:${name}`;
}

/** sidekiq-cron's record of enqueued ticks: whoever ZADDs a tick first enqueues it. */
export function sidekiqCronEnqueuedKey(name: string): string {
  return `cron_job:${name}:enqueued`;
}

/** sidekiq-cron's list of the latest pushes (jid and time), newest first. */
export function sidekiqCronHistoryKey(name: string): string {
  return `cron_job:${name}:jid_history`;
}
