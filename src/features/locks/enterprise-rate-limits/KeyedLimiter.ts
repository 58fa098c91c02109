/**
 * KeyedLimiter: one per worker process, the process's side of classes' `static limit` (keyedPolicy.ts).
 * Before a job of such a class starts, one Lua step (keyed-limit-6.lua) either admits it or parks it on
 * its key; the job never waits in a worker slot. When its key has room, the job is handed back to its
 * queue once, already admitted: by the job that frees a concurrency slot (in its leave step), or by the
 * resumer every process runs (`resumeInterval`), which serves the keys that have been due the longest
 * first, a few jobs each: round robin across keys.
 *
 * Redis layout (keys.ts), e.g. `ChargeJob` with `{ key: tenant, concurrency: 1 }`, tenant 42 busy:
 *
 *   > HGETALL tsq:lock:rate:k:ChargeJob:42       > ZRANGE tsq:rl-ready:ChargeJob 0 -1 WITHSCORES
 *   1) "b1946ac92492d2347c6235b4"                1) "42"
 *   2) "1795425540123"                           2) "1795425540123"
 *   > LRANGE tsq:rl-parked:ChargeJob:42 0 -1     > HGETALL tsq:rl-waiting
 *   1) "{\"class\":\"ChargeJob\",...,\"limit_parked\":1}"   1) "ChargeJob"  2) "1"
 *
 * Running jobs' leases are kept alive by the ConcurrencyLimiter's refresh, the one lease keeper.
 */
import type { Logger } from "../../../platform/logger.js";
import { keyedHoldersKey, keyedReadyKey } from "../../../wire/keys.js";
import { keyedLimit, type KeyedLimitReply } from "./keyedLimit.js";
import type { ConcurrencyLimiter } from "../gitlab-concurrency-limits/ConcurrencyLimiter.js";
import type { TsqRedis } from "../../../platform/redis/connection.js";
import type { KeyedLimitPolicy } from "./keyedPolicy.js";

export type GateResult = "run" | "parked" | "refused";

export interface KeyedSettings {
  /** Seconds a running job's lease lives without a refresh (the heartbeat TTL). */
  leaseTtl: number;
  /** Ms between resumer passes. */
  resumeIntervalMs: number;
  /** Most jobs one key may have parked. */
  maxParked: number;
}

/** Keys served per resumer pass, and jobs handed back per key per turn: the round robin's slice. */
const KEYS_PER_PASS = 200;
const JOBS_PER_TURN = 10;

export class KeyedLimiter {
  private timer: NodeJS.Timeout | undefined;
  private resuming: Promise<void> | undefined;

  constructor(
    private readonly redis: TsqRedis,
    /** The classes this process runs that declare a limit, by job name (the resumer serves only those). */
    private readonly policies: ReadonlyMap<string, KeyedLimitPolicy>,
    private readonly leases: ConcurrencyLimiter,
    private readonly settings: KeyedSettings,
    private readonly logger: Logger,
  ) {}

  async enter(
    className: string,
    key: string,
    policy: KeyedLimitPolicy,
    jid: string,
    parkedJson: string,
  ): Promise<GateResult> {
    const { status } = await this.call(className, key, policy, "enter", jid, parkedJson);
    if (status === 1 && policy.concurrency > 0) this.leases.track(jid, keyedHoldersKey(className, key));
    return status === 1 ? "run" : status === 0 ? "parked" : "refused";
  }

  /** Gives back `jid`'s lease (concurrency only); its key's oldest parked job takes it in the same step. */
  async leave(className: string, key: string, policy: KeyedLimitPolicy, jid: string): Promise<void> {
    this.leases.forget(jid);
    await this.call(className, key, policy, "leave", jid, "");
  }

  /** Stops refreshing `jid`'s lease without giving it back (it lapses after the lease ttl). */
  forget(jid: string): void {
    this.leases.forget(jid);
  }

  /** Idempotent. */
  start(): void {
    if (this.timer || this.policies.size === 0) return;
    this.timer = setInterval(() => this.tick(), this.settings.resumeIntervalMs);
    this.timer.unref();
  }

  /** Idempotent. Waits for a pass in progress, so no Redis call is left running. */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.resuming;
  }

  private tick(): void {
    if (this.resuming) return;
    this.resuming = this.resumeDue()
      .then(() => undefined)
      .catch((error: unknown) =>
        this.logger.warn({ err: error }, "could not resume jobs parked on keyed limits; retrying at the next pass"),
      )
      .finally(() => (this.resuming = undefined));
  }

  /**
   * One pass over the classes this process runs (others' keys are left to processes that run them): per
   * class, the keys due longest ago first, each handing back up to JOBS_PER_TURN jobs.
   */
  async resumeDue(): Promise<number> {
    const now = Date.now();
    const turns: Promise<KeyedLimitReply>[] = [];
    for (const [className, policy] of this.policies) {
      const due = await this.redis.zrangebyscore(keyedReadyKey(className), "-inf", now, "LIMIT", 0, KEYS_PER_PASS);
      for (const key of due) turns.push(this.call(className, key, policy, "resume", "", ""));
    }
    const handed = await Promise.all(turns);
    return handed.reduce((sum, { status }) => sum + status, 0);
  }

  private call(
    className: string,
    key: string,
    policy: KeyedLimitPolicy,
    op: "enter" | "leave" | "resume",
    jid: string,
    job: string,
  ): Promise<KeyedLimitReply> {
    const { leaseTtl, maxParked } = this.settings;
    const { concurrency, rate, windowMs } = policy;
    return keyedLimit(this.redis, {
      op,
      className,
      key,
      jid,
      leaseTtl,
      concurrency,
      rate,
      windowMs,
      job,
      maxParked,
      perTurn: JOBS_PER_TURN,
    });
  }
}
