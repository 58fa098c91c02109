/**
 * sidekiq-cron's schedules (`cron_jobs`, see src/cron/SidekiqCronStore.ts) as `tsqctl cron` shows and
 * acts on them beside tsq's own: listed with `scheduler: "sidekiq-cron"`, disabled and enabled through
 * their `status` (as the sidekiq-cron Web UI does), and enqueued now as its "Enqueue Now" does.
 */
import { Client } from "../../client/Client.js";
import { SidekiqCronStore, type SidekiqCronSchedule } from "../../cron/SidekiqCronStore.js";
import { pushSidekiqCron } from "../../cron/sidekiqCronPush.js";
import { nextTick, localTimeZone } from "../../cron/expression.js";
import { sidekiqCronTimes, splitZone } from "../../cron/sidekiqCronTimes.js";
import type { TsqRedis } from "../../redis/connection.js";
import type { CronJson } from "./cron.js";

function iso(seconds: number | undefined): string | null {
  return seconds === undefined ? null : new Date(seconds * 1000).toISOString();
}

/** One sidekiq-cron schedule as `cron list --json` prints it. */
export function sidekiqCronJson(schedule: SidekiqCronSchedule, lastJid: string | undefined, now: number): CronJson {
  const { expression, tz } = splitZone(schedule.cron);
  const readable = sidekiqCronTimes(schedule.name, schedule.cron);
  const next = schedule.enabled && "times" in readable ? nextTick(readable.times, Math.floor(now)) : undefined;
  return {
    scheduler: "sidekiq-cron",
    name: schedule.name,
    cron: expression,
    tz: tz ?? localTimeZone(),
    class: schedule.klass,
    queue: schedule.queue,
    args: schedule.args,
    description: schedule.description ?? null,
    enabled: schedule.enabled,
    catch_up: false,
    source: `sidekiq-cron (${schedule.activeJob ? "ActiveJob" : "Sidekiq job"})`,
    last_run: schedule.lastEnqueueTime ?? null,
    last_run_at: iso(schedule.lastEnqueueTime),
    last_jid: lastJid ?? null,
    next_run: next ?? null,
    next_run_at: iso(next),
  };
}

/** Every sidekiq-cron schedule with its latest jid. */
export async function listSidekiqCron(redis: TsqRedis, now: number): Promise<CronJson[]> {
  const store = new SidekiqCronStore(redis);
  const schedules = await store.list();
  const jids = await Promise.all(schedules.map((schedule) => store.lastJid(schedule.name)));
  return schedules.map((schedule, i) => sidekiqCronJson(schedule, jids[i], now));
}

/** Pushes the schedule's job now and records it as sidekiq-cron does; resolves to the jid. */
export async function enqueueSidekiqCron(redis: TsqRedis, schedule: SidekiqCronSchedule): Promise<string | null> {
  const now = Date.now() / 1000;
  const jid = await pushSidekiqCron(schedule, new Client({ redis }), undefined, now);
  await new SidekiqCronStore(redis).recordEnqueue(schedule.name, jid, now);
  return jid;
}
