/**
 * Leader election among every process on the Redis, as Sidekiq Enterprise does it with the
 * `dear-leader` key (which OSS `ProcessSet#leader` and the Web UI's "leader" label read):
 *
 *   follower   SET dear-leader <identity> NX EX <ttl>; on failure sleep until the record is due to
 *              expire (PTTL), at most `leaderCheckInterval` s, and try again
 *   leader     every `leaderRenewInterval` s extend the record, only while it still names this process
 *              (leader-renew-1.lua); a failed renewal means someone else leads: become a follower
 *   stop       delete the record, only if it is ours (leader-resign-1.lua), so a follower takes over at
 *              its next check instead of waiting out the TTL
 *   handover   a tsq-cluster supervisor that sees a child die deletes the record if it names that
 *              child and tells the other children, which stand for election at once (`wake`): a killed
 *              leader child is replaced within about a second, and the new leader enqueues the ticks
 *              missed meanwhile (within CronScheduler's grace period)
 *
 * A leader that cannot reach Redis stops calling itself leader once its record may have expired
 * (`ttl` seconds after the last confirmed SET or renewal), so a stalled process never acts as a
 * second leader for long; the per-tick claims (cron-claim-2.lua) make a brief overlap harmless.
 */
import { LEADER } from "../../wire/keys.js";
import type { ServerContext } from "../../server/context.js";
import { ProblemLog } from "../../platform/redis/errors.js";
import { sleep } from "../../platform/util/sleep.js";
import { leaderResignLua } from "../../server/scripts.js";
import { leaderRenewLua } from "./scripts.js";

export interface LeaderTiming {
  /** Seconds, integer. */
  ttl: number;
  /** Seconds. */
  renewInterval: number;
  /** Seconds. */
  checkInterval: number;
}

/** Milliseconds to wait after the record's expiry before retrying, so the SET does not race the expiry. */
const EXPIRY_SLACK_MS = 50;

export class Leader {
  private readonly stopController = new AbortController();
  /** Aborted by `wake`, then replaced: cuts the current wait short. */
  private wakeController = new AbortController();
  private loop: Promise<void> | undefined;
  private stopping: Promise<void> | undefined;
  /** Monotonic ms (the clock's) until which the record is surely ours; 0 when following. */
  private validUntil = 0;

  private readonly problems: ProblemLog;

  constructor(
    private readonly ctx: ServerContext,
    private readonly timing: LeaderTiming,
  ) {
    this.problems = new ProblemLog("leader election", ctx.logger);
  }

  start(): void {
    if (this.stopController.signal.aborted) return;
    this.loop ??= this.run();
  }

  /** Ends the current wait: the next election round runs now (the record is known to be free). */
  wake(): void {
    this.wakeController.abort();
  }

  /** True while this process holds `dear-leader` (as far as it can know). */
  isLeader(): boolean {
    return this.ctx.clock.monotonic() < this.validUntil;
  }

  /** Idempotent. Stops electing and steps down if leading. */
  stop(): Promise<void> {
    this.stopping ??= this.shutdown();
    return this.stopping;
  }

  /** One round: acquire or renew. Resolves to the milliseconds to wait before the next round. */
  async elect(): Promise<number> {
    const { redis, identity } = this.ctx;
    const { ttl, renewInterval, checkInterval } = this.timing;
    const sentAt = this.ctx.clock.monotonic(); // the record expires no earlier than ttl after this
    if (this.validUntil > 0) {
      if ((await leaderRenewLua.run(redis, LEADER, identity, ttl)) === 1) {
        this.validUntil = sentAt + ttl * 1000;
        return renewInterval * 1000;
      }
      this.setLeader(false, "lost the leader record to another process; now a follower");
    }
    // The renewal also reclaims a record that still names us after a renewal came too late.
    const won =
      (await redis.set(LEADER, identity, "EX", ttl, "NX")) === "OK" ||
      (await leaderRenewLua.run(redis, LEADER, identity, ttl)) === 1;
    if (won) {
      this.validUntil = sentAt + ttl * 1000;
      this.setLeader(true, "elected leader");
      return renewInterval * 1000;
    }
    const remaining = await redis.pttl(LEADER); // ms; -2 gone, -1 no expiry (set by hand)
    if (remaining === -2) return EXPIRY_SLACK_MS;
    return Math.min(checkInterval * 1000, remaining > 0 ? remaining + EXPIRY_SLACK_MS : checkInterval * 1000);
  }

  private async run(): Promise<void> {
    const signal = this.stopController.signal;
    while (!signal.aborted) {
      let wait: number;
      try {
        wait = await this.elect();
        this.problems.succeeded();
      } catch (error) {
        if (signal.aborted) return;
        this.problems.failed(error, "periodic jobs wait for a leader; retrying");
        wait = Math.min(this.timing.renewInterval, this.timing.checkInterval) * 1000;
      }
      // A leader whose renewals keep failing drops out when its record may have expired.
      if (this.validUntil > 0 && !this.isLeader())
        this.setLeader(false, "could not renew the leader record in time; now a follower");
      const ms = this.isLeader() ? Math.min(wait, this.validUntil - this.ctx.clock.monotonic()) : wait;
      await sleep(ms, AbortSignal.any([signal, this.wakeController.signal]), this.ctx.clock);
      if (this.wakeController.signal.aborted) this.wakeController = new AbortController();
    }
  }

  private async shutdown(): Promise<void> {
    this.stopController.abort();
    await this.loop;
    if (this.validUntil === 0) return;
    this.validUntil = 0;
    try {
      await leaderResignLua.run(this.ctx.redis, LEADER, this.ctx.identity);
      this.ctx.logger.info({ identity: this.ctx.identity }, "stepped down as leader");
    } catch (error) {
      this.ctx.logger.warn(
        { err: error, ttl_s: this.timing.ttl },
        "could not delete the leader record; it expires on its own",
      );
    }
  }

  private setLeader(leader: boolean, message: string): void {
    if (!leader) this.validUntil = 0;
    const log = leader ? this.ctx.logger.info.bind(this.ctx.logger) : this.ctx.logger.warn.bind(this.ctx.logger);
    log({ identity: this.ctx.identity, leader }, message);
  }
}
