/**
 * The periodic schedules in Redis, tsq's (stored by the cron leader, src/features/cron/CronStore.ts) and
 * sidekiq-cron's (`cron_jobs`, src/features/cron/SidekiqCronStore.ts), side by side: list them, push one's job
 * now, disable and enable one. `tsqctl cron` and the dashboard's Cron page share this.
 *
 * For tsq's schedules `disable`/`enable` survive restarts; a later change of the schedule's `enabled:`
 * in the config wins. sidekiq-cron's are switched through their `status`, as its Web UI does. The next
 * run is computed from the expression and zone when listing (null while disabled), so it is right even
 * while no leader runs.
 */
import { Client, type PushItem } from "../../client/Client.js";
// The package's Client: a push runs every built-in feature, whatever else the process imported.
import { packagePlugins } from "../../packagePlugins.js";
import { CronStore, type StoredSchedule } from "../../features/cron/CronStore.js";
import { SidekiqCronStore, type SidekiqCronSchedule } from "../../features/cron/SidekiqCronStore.js";
import { localTimeZone, nextTick } from "../../features/cron/expression.js";
import { pushSidekiqCron } from "../../features/cron/sidekiqCronPush.js";
import { sidekiqCronTimes, splitZone } from "../../features/cron/sidekiqCronTimes.js";
import { ArgumentError } from "../../wire/errors.js";
import type { Redis } from "ioredis";
import { nowSeconds } from "../../wire/timestamps.js";

export type Scheduler = "tsq" | "sidekiq-cron";

/** One schedule as listed. Times are epoch seconds with an ISO 8601 twin, or null. */
export interface CronJson {
  /** Which scheduler owns it: tsq's leader, or sidekiq-cron (Ruby, and tsq processes that opt in). */
  scheduler: Scheduler;
  name: string;
  cron: string;
  tz: string;
  class: string;
  queue: string;
  args: unknown[];
  description: string | null;
  enabled: boolean;
  catch_up: boolean;
  /** Where it is declared: the config file, `static cron of <Class>`, or sidekiq-cron. */
  source: string;
  /** When its job was last pushed (by a tick or an enqueue now). */
  last_run: number | null;
  last_run_at: string | null;
  last_jid: string | null;
  /** The next tick, computed when listing; null while disabled. */
  next_run: number | null;
  next_run_at: string | null;
}

type Found =
  { scheduler: "tsq"; schedule: StoredSchedule } | { scheduler: "sidekiq-cron"; schedule: SidekiqCronSchedule };

function iso(seconds: number | undefined): string | null {
  return seconds === undefined ? null : new Date(seconds * 1000).toISOString();
}

/** One of tsq's schedules as listed. */
export function cronJson(schedule: StoredSchedule, now: number): CronJson {
  let next: number | undefined;
  try {
    next = schedule.enabled ? nextTick(schedule, Math.floor(now)) : undefined;
  } catch {
    next = undefined; // a hand-edited expression: show no next run rather than fail the listing
  }
  return {
    scheduler: "tsq",
    name: schedule.name,
    cron: schedule.cron,
    tz: schedule.tz,
    class: schedule.class,
    queue: schedule.queue ?? "default",
    args: schedule.args,
    description: schedule.description ?? null,
    enabled: schedule.enabled,
    catch_up: schedule.catchUp,
    source: schedule.source,
    last_run: schedule.lastRun ?? null,
    last_run_at: iso(schedule.lastRun),
    last_jid: schedule.lastJid ?? null,
    next_run: next ?? null,
    next_run_at: iso(next),
  };
}

/** One sidekiq-cron schedule as listed. */
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

export class CronSchedules {
  constructor(private readonly redis: Redis) {}

  /** tsq's schedules, then sidekiq-cron's, each with its last and next run. */
  async list(now = Date.now() / 1000): Promise<CronJson[]> {
    const theirs = new SidekiqCronStore(this.redis);
    const [own, schedules] = await Promise.all([new CronStore(this.redis).list(), theirs.list()]);
    const jids = await Promise.all(schedules.map((schedule) => theirs.lastJid(schedule.name)));
    return [
      ...own.map((s) => cronJson(s, now)),
      ...schedules.map((schedule, i) => sidekiqCronJson(schedule, jids[i], now)),
    ];
  }

  /** Pushes the schedule's job now (its ticks go on as before) and records the run; resolves to the jid. */
  async enqueue(name: string, scheduler?: Scheduler): Promise<string | null> {
    const found = await this.find(name, scheduler);
    const client = new Client({ redis: this.redis, plugins: packagePlugins() });
    if (found.scheduler === "sidekiq-cron") {
      const now = Date.now() / 1000;
      const jid = await pushSidekiqCron(found.schedule, client, undefined, now);
      await new SidekiqCronStore(this.redis).recordEnqueue(name, jid, now);
      return jid;
    }
    const { schedule } = found;
    // The schedule's fields over the class's options, as the leader pushes it (without a tick time).
    const item: PushItem = { ...schedule.jobOptions, class: schedule.class, args: schedule.args, cron: schedule.name };
    if (schedule.queue !== undefined) item.queue = schedule.queue;
    const jid = await client.push(item);
    if (jid !== null) await new CronStore(this.redis).recordRun(schedule.name, { jid, at: nowSeconds() });
    return jid;
  }

  /** The leader (or sidekiq-cron's poller) skips a disabled schedule's ticks until it is enabled again. */
  async setEnabled(name: string, enabled: boolean, scheduler?: Scheduler): Promise<Scheduler> {
    const found = await this.find(name, scheduler);
    if (found.scheduler === "sidekiq-cron") await new SidekiqCronStore(this.redis).setEnabled(name, enabled);
    else await new CronStore(this.redis).setEnabled(name, enabled);
    return found.scheduler;
  }

  /** The schedule named `name`, in `scheduler` or the only one that has it. */
  private async find(name: string, scheduler: Scheduler | undefined): Promise<Found> {
    const own = scheduler === "sidekiq-cron" ? undefined : await new CronStore(this.redis).get(name);
    const theirs = scheduler === "tsq" ? undefined : await new SidekiqCronStore(this.redis).get(name);
    if (own && theirs) {
      throw new ArgumentError(
        `both tsq and sidekiq-cron have a schedule named "${name}"; choose one with --scheduler tsq|sidekiq-cron`,
      );
    }
    if (own) return { scheduler: "tsq", schedule: own };
    if (theirs) return { scheduler: "sidekiq-cron", schedule: theirs };
    const names = (await this.list()).map((s) => (s.scheduler === "tsq" ? s.name : `${s.name} (sidekiq-cron)`));
    throw new ArgumentError(`no periodic schedule named "${name}" (known: ${names.join(", ") || "none"})`);
  }
}
