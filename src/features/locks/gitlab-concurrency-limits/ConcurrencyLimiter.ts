/**
 * ConcurrencyLimiter: one per worker process, the process's side of concurrency limits. It takes and
 * gives back slots (limit-slot-4.lua) for the server middleware, keeps the slots of its running jobs
 * alive, and sweeps slots left by dead processes:
 *
 *   - a slot lasts `heartbeatTtl` seconds (60, Sidekiq's process TTL) and is refreshed every
 *     `heartbeatInterval` seconds (10) while its job runs, so a SIGKILLed process's slots expire about
 *     `heartbeatTtl` after its last refresh;
 *   - an expired slot is dropped and handed to the oldest parked job by the next job of the class that
 *     finds the slots full, or by the sweep each process runs at the same interval (a class whose jobs
 *     all wait would otherwise have nobody to notice).
 *
 * Redis layout (keys.ts), e.g. for `IndexJob` with limit 3, two running and one parked:
 *
 *   > HGETALL tsq:lock:limit:IndexJob        > LRANGE tsq:limit-parked:IndexJob 0 -1
 *   1) "b1946ac92492d2347c6235b4"            1) "{\"class\":\"IndexJob\",...,\"concurrency_limit_resume\":true,...}"
 *   2) "1795425540123"                       > HGET tsq:limits IndexJob
 *   3) "591785b794601e212b260e25"            "3"
 *   4) "1795425538907"
 */
import type { Logger } from "../../../platform/logger.js";
import { LIMITS, limitParkedKey, limitSlotsKey } from "../../../wire/keys.js";
import { limitSlot, type LimitSlotReply } from "./limitSlot.js";
import { refreshLock } from "../Lock.js";
import type { TsqRedis } from "../../../platform/redis/connection.js";

export type EnterResult = "run" | "parked" | "refused";

export interface LimiterSettings {
  /** Seconds a slot lives without a refresh (the heartbeat TTL). */
  slotTtl: number;
  /** Seconds between refreshes of running jobs' slots and sweeps of stale ones. */
  refreshInterval: number;
  /** Most jobs a class may have parked. */
  maxParked: number;
}

export class ConcurrencyLimiter {
  /** jid -> its slot's lock key, for the jobs holding a slot or lease this process is running. */
  private readonly held = new Map<string, string>();
  /** Limits last read in this process, by class: the sweep uses them for classes it knows. */
  private readonly limits = new Map<string, number>();
  private timer: NodeJS.Timeout | undefined;
  private sweeping: Promise<void> | undefined;

  constructor(
    private readonly redis: TsqRedis,
    private readonly settings: LimiterSettings,
    private readonly logger: Logger,
  ) {}

  /**
   * Takes a slot for `jid`, or parks `parkedJson` (the job marked for resume). "refused": the parked list
   * is full and the job was not parked.
   */
  async enter(
    className: string,
    jid: string,
    limit: number,
    parkedJson: string,
    resumed: boolean,
  ): Promise<EnterResult> {
    this.limits.set(className, limit);
    const { status } = await this.call(className, "enter", jid, limit, parkedJson, resumed);
    if (status === 1) this.held.set(jid, limitSlotsKey(className));
    return status === 1 ? "run" : status === 0 ? "parked" : "refused";
  }

  /** Gives back `jid`'s slot; the oldest parked job of the class takes it in the same step. */
  async leave(className: string, jid: string, limit: number): Promise<void> {
    this.held.delete(jid);
    await this.call(className, "leave", jid, limit, "", false);
  }

  /**
   * Keeps `jid`'s hold of the lock `key` alive while it runs, as for a slot (keyed class limits'
   * leases, src/features/locks/enterprise-rate-limits): one refresh loop per process for every lease of the lock core.
   */
  track(jid: string, key: string): void {
    this.held.set(jid, key);
  }

  /**
   * Stops refreshing `jid`'s slot without giving it back: a job abandoned by a hard shutdown was requeued
   * with its jid, and the copy that runs next takes the slot over (or it expires after the slot ttl).
   */
  forget(jid: string): void {
    this.held.delete(jid);
  }

  /** Idempotent. */
  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => void this.tick(), this.settings.refreshInterval * 1000);
    this.timer.unref();
  }

  /** Idempotent. Waits for a sweep in progress, so no Redis call is left running. */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.sweeping;
  }

  private tick(): void {
    if (this.sweeping) return;
    this.sweeping = this.refreshAndSweep()
      .catch((error: unknown) =>
        this.logger.warn({ err: error }, "could not refresh concurrency-limit slots; retrying at the next interval"),
      )
      .finally(() => (this.sweeping = undefined));
  }

  /** Keeps this process's slots alive, then hands expired slots of every limited class to parked jobs. */
  private async refreshAndSweep(): Promise<void> {
    const ttlMs = this.settings.slotTtl * 1000;
    await Promise.all([...this.held].map(([jid, key]) => refreshLock(this.redis, key, jid, ttlMs)));
    const known = await this.redis.hgetall(LIMITS);
    for (const [name, stored] of Object.entries(known)) {
      if ((await this.redis.llen(limitParkedKey(name))) === 0) continue;
      // A limit read here wins over the stored one: the stored value may come from an older deploy.
      const limit = this.limits.get(name) ?? Number(stored);
      if (Number.isInteger(limit)) await this.call(name, "leave", "", limit, "", false);
    }
  }

  private call(
    className: string,
    op: "enter" | "leave",
    jid: string,
    limit: number,
    job: string,
    resumed: boolean,
  ): Promise<LimitSlotReply> {
    const { slotTtl, maxParked } = this.settings;
    return limitSlot(this.redis, { op, className, jid, slotTtl, limit, nowMs: Date.now(), job, maxParked, resumed });
  }
}
