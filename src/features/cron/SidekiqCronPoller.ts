/**
 * SidekiqCronPoller: takes part in sidekiq-cron's (1.8.0) own enqueue protocol, so a fleet of Ruby
 * processes running sidekiq-cron and tsq processes enqueues each tick of a schedule once, whichever
 * side is running. Opt-in (`sidekiq_cron: true`); every tsq process that opts in runs one, as every
 * Ruby process runs sidekiq-cron's poller. For each schedule, as `test_and_enque_for_time!`:
 *
 *   1. status is "enabled" and the expression is one tsq can read (else skipped, logged once)
 *   2. the due tick is fugit's previous_time(now), at most 60 s old (sidekiqCronTimes.ts)
 *   3. `last_enqueue_time` is not after that tick's earliest push time (no older tick after a newer one)
 *   4. ZADD cron_job:<name>:enqueued <tick> <tick ISO 8601> adds the member: only one process of the
 *      fleet, Ruby or TypeScript, wins it (Redis runs one ZADD at a time)
 *   5. push the job (sidekiqCronPush.ts), then record last_enqueue_time and jid_history as Ruby does
 *
 * Unlike sidekiq-cron, which wakes every 15–45 s and so enqueues only the latest of the ticks in
 * between, it wakes one second after each due tick (at most `pollInterval` s apart, to notice new or
 * changed schedules), so a sub-minute schedule fires on every tick while a tsq process runs. A process
 * killed between the ZADD and the push loses that one tick, as a Ruby process would.
 */
import type { ServerContext } from "../../server/context.js";
import { PassLoop } from "../../platform/util/PassLoop.js";
import type { CronTimes } from "./expression.js";
import { SidekiqCronStore, type SidekiqCronSchedule } from "./SidekiqCronStore.js";
import { pushSidekiqCron } from "./sidekiqCronPush.js";
import { dueTick, nextDueAt, sidekiqCronTimes } from "./sidekiqCronTimes.js";

/** Milliseconds past a due time before reading, so a timer firing a hair early does not miss it. */
const WAKE_SLACK_MS = 5;

export class SidekiqCronPoller extends PassLoop {
  private readonly store: SidekiqCronStore;
  /** Schedules whose expression tsq cannot read, by name and expression, logged once each. */
  private readonly unreadable = new Set<string>();

  constructor(
    private readonly ctx: ServerContext,
    /** Seconds between reads of the schedules when no tick is due sooner. */
    private readonly pollInterval: number,
  ) {
    super("sidekiq-cron pass", ctx.logger, () => pollInterval * 1000, ctx.clock);
    this.store = new SidekiqCronStore(ctx.redis);
  }

  /** One pass over every schedule; resolves to the milliseconds until the next one is due. */
  override async pass(): Promise<number> {
    const schedules = await this.store.list();
    const now = this.ctx.clock.now() / 1000;
    let wake = now + this.pollInterval;
    for (const schedule of schedules) {
      if (this.stopController.signal.aborted) break;
      const times = this.timesOf(schedule);
      if (times === undefined) continue;
      if (schedule.enabled) await this.consider(schedule, times, now);
      wake = Math.min(wake, nextDueAt(times, now) ?? wake);
    }
    return Math.max(0, (wake - this.ctx.clock.now() / 1000) * 1000 + WAKE_SLACK_MS);
  }

  /** Steps 2–5 for one enabled schedule; an error is logged and the others go on (as sidekiq-cron does). */
  private async consider(schedule: SidekiqCronSchedule, times: CronTimes, now: number): Promise<void> {
    const tick = dueTick(times, now);
    if (tick === undefined) return;
    // Ruby skips when the last push (whole seconds) is at or after the tick, which drops every other
    // tick of a per-second schedule (tick T is pushed at T+1 s at the earliest). Skipping only when it
    // is after T+1 still keeps an older tick from following a newer one; the ZADD keeps each tick once.
    if (schedule.lastEnqueueTime !== undefined && Math.floor(schedule.lastEnqueueTime) > tick + 1) return;
    try {
      if (!(await this.store.claim(schedule.name, tick))) return;
      const pushedAt = this.ctx.clock.now() / 1000;
      const jid = await pushSidekiqCron(schedule, this.ctx.client, this.ctx.registry, pushedAt);
      await this.store.recordEnqueue(schedule.name, jid, pushedAt);
      this.ctx.logger.debug({ schedule: schedule.name, tick, jid }, "sidekiq-cron job enqueued");
    } catch (error) {
      this.ctx.logger.error(
        { err: error, schedule: schedule.name, tick },
        "could not enqueue a sidekiq-cron job; this tick is lost",
      );
    }
  }

  private timesOf(schedule: SidekiqCronSchedule): CronTimes | undefined {
    const result = sidekiqCronTimes(schedule.name, schedule.cron);
    if ("times" in result) return result.times;
    const key = `${schedule.name}\n${schedule.cron}`;
    if (!this.unreadable.has(key)) {
      this.unreadable.add(key);
      this.ctx.logger.warn(
        { schedule: schedule.name, cron: schedule.cron, problem: result.problem },
        "sidekiq-cron schedule not followed by tsq (Ruby processes still run it)",
      );
    }
    return undefined;
  }
}
