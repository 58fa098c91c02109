/**
 * CronScheduler: while this process is the leader, enqueues each periodic schedule's ticks, once per
 * tick cluster-wide.
 *
 * - On becoming leader it writes its schedules to Redis (CronStore#sync) and resumes each one after
 *   its stored cursor, so a new leader carries on where the old one stopped.
 * - A tick is still enqueued up to `grace` seconds late (after a leader change, a stall, a restart);
 *   an older one is missed: logged, and dropped unless the schedule has `catch_up`, which enqueues the
 *   most recent missed tick only.
 * - Each tick is claimed in Redis and its job pushed in one atomic step (cron-claim-4.lua; the job is
 *   built first, through the client's middleware), so two leaders that briefly overlap never both push
 *   it, and a leader killed mid-tick has either claimed and pushed it or done neither.
 * - It sleeps until the next tick, at most 1 s, so leadership changes and stop are noticed promptly.
 */
import { wireOptions, type JobClassLike } from "../../client/options.js";
import type { ServerContext } from "../../server/context.js";
import { PassLoop } from "../../platform/util/PassLoop.js";
import type { CronEntry } from "../../platform/config/cronEntry.js";
import { CronStore } from "./CronStore.js";
import { lastTickAtOrBefore, localTimeZone, nextTick, ticksBetween, type CronTimes } from "./expression.js";

export interface LeaderView {
  isLeader(): boolean;
}

export interface SchedulerTiming {
  /** Seconds a tick may be late and still be enqueued. */
  grace: number;
  /** Seconds a tick's claim key lives; must outlast `grace` plus a leader change. */
  claimTtl: number;
}

interface Tracked {
  entry: CronEntry;
  times: CronTimes;
  /** Latest tick (epoch s) this leader has dealt with. */
  cursor: number;
  next: number | undefined;
  /** The registered class, so its `static options` (queue, retry) apply as with `performAsync`. */
  klass: JobClassLike | undefined;
  gone: boolean;
}

/** Milliseconds; bounds how late a leadership change or a newly due schedule is noticed. */
const MAX_SLEEP_MS = 1000;
/** Milliseconds past a tick before waking, so a timer firing a hair early does not miss it. */
const WAKE_SLACK_MS = 5;
/** Ticks enqueued per schedule per pass, so a long grace with a per-second schedule cannot stall others. */
const MAX_TICKS_PER_PASS = 1000;

export class CronScheduler extends PassLoop {
  private readonly store: CronStore;
  /** The schedules with their cursors while leading; undefined while following. */
  private tracked: Tracked[] | undefined;

  constructor(
    private readonly ctx: ServerContext,
    private readonly schedules: readonly CronEntry[],
    private readonly leader: LeaderView,
    private readonly timing: SchedulerTiming,
  ) {
    super("periodic job pass", ctx.logger, () => MAX_SLEEP_MS, ctx.clock);
    this.store = new CronStore(ctx.redis);
  }

  /** One pass; resolves to the milliseconds until the next one is due. */
  override async pass(): Promise<number> {
    if (!this.leader.isLeader()) {
      this.tracked = undefined;
      return MAX_SLEEP_MS;
    }
    this.tracked ??= await this.takeOver();
    const now = this.ctx.clock.now() / 1000;
    let backlog = false;
    for (const schedule of this.tracked) {
      if (this.stopController.signal.aborted || !this.leader.isLeader()) break;
      backlog = (await this.runDue(schedule, now)) || backlog;
    }
    const next = Math.min(...this.tracked.map((s) => s.next ?? Infinity));
    if (backlog) return 0;
    return Math.max(0, Math.min(next * 1000 - this.ctx.clock.now() + WAKE_SLACK_MS, MAX_SLEEP_MS));
  }

  private async takeOver(): Promise<Tracked[]> {
    const now = Math.floor(this.ctx.clock.now() / 1000);
    const synced = this.schedules.map((entry) => {
      const jobOptions = wireOptions(this.ctx.registry.get(entry.class)?.options);
      const queue = entry.queue ?? (typeof jobOptions.queue === "string" ? jobOptions.queue : undefined);
      return { ...entry, jobOptions, ...(queue === undefined ? {} : { queue }) };
    });
    const resume = await this.store.sync(synced, now);
    const tracked = this.schedules.map((entry) => {
      const times = { name: entry.name, cron: entry.cron, tz: entry.tz ?? localTimeZone() };
      const cursor = resume.get(entry.name) ?? now;
      const klass = this.ctx.registry.get(entry.class);
      return { entry, times, cursor, next: nextTick(times, cursor), klass, gone: false };
    });
    for (const schedule of tracked) await this.store.setNextRun(schedule.entry.name, nextTick(schedule.times, now));
    this.ctx.logger.info({ schedules: this.schedules.map((s) => s.name) }, "leader: running periodic jobs");
    return tracked;
  }

  /** Enqueues what is due for one schedule. Resolves true when ticks were left for the next pass. */
  private async runDue(schedule: Tracked, now: number): Promise<boolean> {
    const nowS = Math.floor(now);
    if (schedule.next === undefined || schedule.next > nowS) return false;
    const oldestFresh = nowS - this.timing.grace; // ticks at or after this are still enqueued
    const due = ticksBetween(schedule.times, Math.max(schedule.cursor, oldestFresh - 1), nowS, MAX_TICKS_PER_PASS);
    const missed = schedule.cursor < oldestFresh - 1 ? lastTickAtOrBefore(schedule.times, oldestFresh - 1) : undefined;
    if (missed !== undefined && missed > schedule.cursor) {
      const { name, catchUp } = schedule.entry;
      this.ctx.logger.warn(
        {
          schedule: name,
          last_missed: new Date(missed * 1000).toISOString(),
          grace_s: this.timing.grace,
          catch_up: catchUp,
        },
        catchUp
          ? "periodic job missed ticks; enqueueing the most recent one (catch_up)"
          : "periodic job missed ticks; not replayed",
      );
      if (catchUp) due.unshift(missed);
    }
    for (const tick of due) {
      if (this.stopController.signal.aborted || !this.leader.isLeader()) return false;
      await this.fire(schedule, tick);
      schedule.cursor = tick;
    }
    const truncated = due.length >= MAX_TICKS_PER_PASS;
    if (!truncated) schedule.cursor = Math.max(schedule.cursor, nowS);
    schedule.next = nextTick(schedule.times, schedule.cursor);
    return truncated;
  }

  /** Claims `tick` and, if this process won it, pushes the job. */
  private async fire(schedule: Tracked, tick: number): Promise<void> {
    const { ctx, store } = this;
    const { entry, times } = schedule;
    let built: Awaited<ReturnType<typeof ctx.client.build>>;
    try {
      built = await ctx.client.build({
        class: schedule.klass ?? entry.class,
        args: entry.args,
        ...(entry.queue === undefined ? {} : { queue: entry.queue }),
        // The schedule and the tick (epoch s) the job was enqueued for, for the job and for debugging.
        cron: entry.name,
        cron_at: tick,
      });
    } catch (error) {
      ctx.logger.error(
        { err: error, schedule: entry.name, tick },
        "could not build a periodic job; this tick is skipped",
      );
      return;
    }
    if (built === null) {
      ctx.logger.info({ schedule: entry.name, tick }, "a client middleware stopped a periodic job");
      return;
    }
    // The claim and the push are one atomic step: a leader killed mid-tick has either done both or neither.
    // A queue on another shard (src/platform/shards) cannot share the step: claim, then push (at most once).
    const { job, json } = built;
    const local = ctx.client.ownsQueue(job.queue);
    let claim: Awaited<ReturnType<CronStore["claim"]>>;
    try {
      claim = await store.claim({
        name: entry.name,
        tick,
        identity: ctx.identity,
        ttlSeconds: this.timing.claimTtl,
        job: local ? { queue: job.queue, json } : undefined,
      });
      if (claim === "push" && !local) await ctx.client.sendBuilt(built);
    } catch (error) {
      ctx.logger.error(
        { err: error, schedule: entry.name, tick },
        "could not enqueue a periodic job; this tick is lost",
      );
      return;
    }
    if (claim === "gone" && !schedule.gone) {
      schedule.gone = true;
      ctx.logger.warn(
        { schedule: entry.name },
        "periodic schedule was removed from Redis by another leader; not enqueueing it",
      );
    }
    if (claim !== "push") return;
    const jid = job.jid;
    try {
      await store.recordRun(entry.name, { jid, at: ctx.clock.now() / 1000, tick, nextRun: nextTick(times, tick) });
      ctx.logger.debug({ schedule: entry.name, tick, jid }, "periodic job enqueued");
    } catch (error) {
      ctx.logger.warn(
        { err: error, schedule: entry.name, tick, jid },
        "periodic job enqueued, but its run was not recorded",
      );
    }
  }
}
