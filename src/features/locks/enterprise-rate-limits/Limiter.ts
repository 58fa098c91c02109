/**
 * Rate limiters with Sidekiq Enterprise's model and names (`Sidekiq::Limiter`, docs/rate-limits.md),
 * shared by every process on the Redis, each algorithm one atomic Lua script on the Redis clock:
 *
 *   const erp = Limiter.concurrent("erp", 5, { lockTimeout: 30 });     // 5 at once (the lock core)
 *   const api = Limiter.bucket(`stripe-${userId}`, 100, "second");     // 100 per calendar second
 *   const win = Limiter.window("mailer", 100, 1);                      // 100 in any sliding second
 *   const drip = Limiter.leaky("sms", 10, "minute");                   // 10 burst, drains 10/minute
 *   const pts = Limiter.points("graphql", 1000, "minute");             // 1000 points a minute
 *   await win.withinLimit(async () => callTheApi());
 *   await pts.withinLimit(25, async () => query());                    // estimated cost 25 points
 *
 * Building a limiter touches no Redis (Enterprise's costs a round trip, #3767), so dynamic names are
 * free; every key expires once idle, so 1,000s of names leave nothing behind. Over the limit, a call
 * waits up to `waitTimeout` seconds (default 0: a job never holds a worker slot waiting), then throws
 * OverLimitError; thrown out of a job, the server reschedules the job (reschedule.ts).
 */
import { randomBytes } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import { defaultClient, jobClient } from "../../../client/defaultClient.js";
import { ConfigError } from "../../../wire/errors.js";
import { rateBucketKey, rateLeakyKey, ratePointsKey, rateLeaseKey, rateWindowKey } from "../../../wire/keys.js";
import { acquireLock, releaseLock } from "../Lock.js";
import type { TsqRedis } from "../../../platform/redis/connection.js";
import { OverLimitError, type Backoff } from "./OverLimitError.js";
import {
  checkName,
  configureLimiters,
  count,
  limiterDefaults,
  periodMs,
  seconds,
  INTERVAL_MS,
  type Interval,
} from "./settings.js";
import { rateBucketLua, rateLeakyLua, rateWindowLua } from "./scripts.js";

export interface LimiterOptions {
  /** Seconds a call may wait for room before OverLimitError (default 0). Polled, at most every 100 ms. */
  waitTimeout?: number;
  /** Most reschedules of one job for this limiter (default 20; 0: straight to ordinary retries). */
  reschedule?: number;
  /** Seconds before a job's `overrated`-th reschedule (default: see settings.ts). */
  backoff?: Backoff;
  /** The connection to use (default: the default client's). */
  redis?: TsqRedis;
}

export interface ConcurrentOptions extends LimiterOptions {
  /**
   * Seconds a lease lasts (default 30): a holder killed with SIGKILL frees its slot after this; a call
   * running longer loses its lease, as Enterprise's `lock_timeout`.
   */
  lockTimeout?: number;
}

/** What a call was admitted with. */
export interface Grant {
  /** When it was admitted, epoch ms on the Redis clock. */
  at: number;
}

type Attempt = { ok: true; at: number; release?: () => Promise<unknown> } | { ok: false; retryAfterMs: number };

export abstract class Limiter {
  private readonly waitMs: number;
  readonly reschedule: number;
  private readonly backoff: Backoff | undefined;
  private readonly connection: TsqRedis | undefined;

  protected constructor(
    readonly kind: string,
    readonly name: string,
    options: LimiterOptions,
  ) {
    const where = `Limiter.${kind}("${name}")`;
    this.waitMs = seconds(where, "waitTimeout", options.waitTimeout ?? 0, false) * 1000;
    this.reschedule = count(where, "reschedule", options.reschedule ?? limiterDefaults().reschedule, 0);
    if (options.backoff !== undefined && typeof options.backoff !== "function")
      throw new ConfigError(`${where}: backoff must be a function (overrated, error) => seconds`);
    this.backoff = options.backoff;
    this.connection = options.redis;
  }

  static concurrent(name: string, limit: number, options: ConcurrentOptions = {}): ConcurrentLimiter {
    return new ConcurrentLimiter(checkName("concurrent", name), limit, options);
  }
  static bucket(name: string, limit: number, interval: Interval, options: LimiterOptions = {}): CountingLimiter {
    if (!(interval in INTERVAL_MS)) periodMs(`Limiter.bucket("${name}")`, String(interval));
    return new CountingLimiter("bucket", checkName("bucket", name), limit, INTERVAL_MS[interval], options);
  }
  static window(name: string, limit: number, period: number | Interval, options: LimiterOptions = {}): CountingLimiter {
    const ms = periodMs(`Limiter.window("${String(name)}")`, period);
    return new CountingLimiter("window", checkName("window", name), limit, ms, options);
  }
  static leaky(name: string, size: number, period: number | Interval, options: LimiterOptions = {}): CountingLimiter {
    const ms = periodMs(`Limiter.leaky("${String(name)}")`, period);
    return new CountingLimiter("leaky", checkName("leaky", name), size, ms, options);
  }
  static points(name: string, points: number, period: number | Interval, options: LimiterOptions = {}): PointsLimiter {
    const ms = periodMs(`Limiter.points("${String(name)}")`, period);
    return new PointsLimiter(checkName("points", name), points, ms, options);
  }
  /** A limiter that admits every call, for tests and to switch a limit off (Enterprise's `unlimited`). */
  static unlimited(): UnlimitedLimiter {
    return new UnlimitedLimiter();
  }
  /** Process-wide back-off and reschedule cap (Enterprise's `Sidekiq::Limiter.configure`). */
  static configure = configureLimiters;

  protected get redis(): TsqRedis {
    return this.connection ?? defaultClient().redis;
  }

  protected abstract attempt(cost: number): Promise<Attempt>;

  /** Runs `fn` if `cost` fits, waiting up to waitTimeout; else OverLimitError. */
  protected async run<T>(cost: number, fn: (grant: Grant) => T | Promise<T>): Promise<T> {
    const deadline = performance.now() + this.waitMs;
    let attempt = await this.attempt(cost);
    if (!attempt.ok && this.waitMs > 0) {
      // A worker slot waits: announced on its worker's client (tsq_limit_slots_waiting); a call outside
      // a job holds no slot and is not counted.
      const events = jobClient()?.events;
      events?.emit("limiterWait", 1);
      try {
        while (!attempt.ok && performance.now() < deadline) {
          const left = deadline - performance.now();
          await sleep(Math.max(5, Math.min(attempt.retryAfterMs, left, 100)));
          attempt = await this.attempt(cost);
        }
      } finally {
        events?.emit("limiterWait", -1);
      }
    }
    if (!attempt.ok)
      throw new OverLimitError(`${this.kind} ${this.name}`, attempt.retryAfterMs, this.reschedule, this.backoff);
    try {
      return await fn({ at: attempt.at });
    } finally {
      await attempt.release?.();
    }
  }
}

/** `concurrent`: at most `limit` calls at once, as leases on the lock core (a HASH of holder -> expiry). */
export class ConcurrentLimiter extends Limiter {
  private readonly leaseMs: number;

  constructor(
    name: string,
    readonly limit: number,
    options: ConcurrentOptions,
  ) {
    super("concurrent", name, options);
    count(`Limiter.concurrent("${name}")`, "the limit", limit);
    this.leaseMs = seconds(`Limiter.concurrent("${name}")`, "lockTimeout", options.lockTimeout ?? 30, true) * 1000;
  }

  withinLimit<T>(fn: (grant: Grant) => T | Promise<T>): Promise<T> {
    return this.run(1, fn);
  }

  protected async attempt(): Promise<Attempt> {
    const key = rateLeaseKey(this.name);
    const holder = randomBytes(12).toString("hex");
    const redis = this.redis;
    const taken = await acquireLock(redis, key, holder, { ttlMs: this.leaseMs, limit: this.limit });
    // A lease may free at any moment: poll again soon; reschedules back off from 1 s.
    if (!taken.acquired) return { ok: false, retryAfterMs: 1000 };
    return { ok: true, at: Date.now(), release: () => releaseLock(redis, key, holder) };
  }
}

/** `bucket`, `window` and `leaky`: one call (or `used` calls) taken from a counter. */
export class CountingLimiter extends Limiter {
  constructor(
    kind: "bucket" | "window" | "leaky",
    name: string,
    readonly limit: number,
    readonly periodMs: number,
    options: LimiterOptions,
  ) {
    super(kind, name, options);
    count(`Limiter.${kind}("${name}")`, kind === "leaky" ? "the size" : "the limit", limit);
  }

  /** `withinLimit(fn)`, or `withinLimit({ used: n }, fn)` for a call that counts as n (Enterprise 7.2.1). */
  withinLimit<T>(fn: (grant: Grant) => T | Promise<T>): Promise<T>;
  withinLimit<T>(options: { used: number }, fn: (grant: Grant) => T | Promise<T>): Promise<T>;
  withinLimit<T>(
    first: { used: number } | ((grant: Grant) => T | Promise<T>),
    second?: (grant: Grant) => T | Promise<T>,
  ): Promise<T> {
    if (typeof first === "function") return this.run(1, first);
    const used = count(`${this.kind} ${this.name}: withinLimit`, "used", first.used);
    if (used > this.limit)
      return Promise.reject(
        new ConfigError(`${this.kind} ${this.name}: a call using ${used} can never fit a limit of ${this.limit}`),
      );
    if (second === undefined) return Promise.reject(new ConfigError(`${this.kind} ${this.name}: no function given`));
    return this.run(used, second);
  }

  protected async attempt(cost: number): Promise<Attempt> {
    const [ok, value] =
      this.kind === "bucket"
        ? await rateBucketLua.run(this.redis, rateBucketKey(this.name), this.limit, this.periodMs, cost)
        : this.kind === "window"
          ? await rateWindowLua.run(
              this.redis,
              rateWindowKey(this.name),
              this.limit,
              this.periodMs,
              randomBytes(8).toString("hex"),
              cost,
            )
          : await rateLeakyLua.run(this.redis, rateLeakyKey(this.name), this.limit, this.periodMs, cost);
    return ok === 1 ? { ok: true, at: value } : { ok: false, retryAfterMs: value };
  }
}

/** `points`: `limit` points per period, refilled continuously; each call spends its estimated points. */
export class PointsLimiter extends Limiter {
  constructor(
    name: string,
    readonly limit: number,
    readonly periodMs: number,
    options: LimiterOptions,
  ) {
    super("points", name, options);
    count(`Limiter.points("${name}")`, "the points", limit);
  }

  /** Runs `fn` if `points` (the call's estimated cost) are left. */
  withinLimit<T>(points: number, fn: (grant: Grant) => T | Promise<T>): Promise<T> {
    const cost = count(`points ${this.name}: withinLimit`, "points", points);
    if (cost > this.limit)
      return Promise.reject(
        new ConfigError(`points ${this.name}: a call of ${cost} points can never fit ${this.limit}; raise the limit`),
      );
    return this.run(cost, fn);
  }

  protected async attempt(cost: number): Promise<Attempt> {
    const [ok, value] = await rateLeakyLua.run(this.redis, ratePointsKey(this.name), this.limit, this.periodMs, cost);
    return ok === 1 ? { ok: true, at: value } : { ok: false, retryAfterMs: value };
  }
}

/** `unlimited`: admits every call without touching Redis. */
export class UnlimitedLimiter extends Limiter {
  constructor() {
    super("unlimited", "unlimited", {});
  }

  withinLimit<T>(fn: (grant: Grant) => T | Promise<T>): Promise<T> {
    return this.run(1, fn);
  }

  protected attempt(): Promise<Attempt> {
    return Promise.resolve({ ok: true, at: Date.now() });
  }
}
