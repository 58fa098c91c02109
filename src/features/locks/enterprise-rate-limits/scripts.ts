/** Sidekiq Enterprise's rate limiters in Lua: bucket, window and leaky limiters, and `static limit`'s gate. */
import { luaScript } from "../../../platform/redis/luaScript.js";

/** rate-bucket-1.lua: takes `cost` from a bucket limiter; [1, now ms] or [0, ms until the interval ends]. */
export const rateBucketLua = luaScript<
  [bucket: string, limit: number, intervalMs: number, cost: number],
  [0 | 1, number]
>(new URL("./rate-bucket-1.lua", import.meta.url));

/** rate-window-1.lua: takes `cost` from a sliding window; [1, now ms] or [0, ms until room]. */
export const rateWindowLua = luaScript<
  [window: string, limit: number, windowMs: number, id: string, cost: number],
  [0 | 1, number]
>(new URL("./rate-window-1.lua", import.meta.url));

/** rate-leaky-1.lua: pours `cost` into a leaky bucket; [1, now ms] or [0, ms until it fits]. */
export const rateLeakyLua = luaScript<
  [bucket: string, capacity: number, periodMs: number, cost: number],
  [0 | 1, number]
>(new URL("./rate-leaky-1.lua", import.meta.url));

/**
 * keyed-limit-6.lua: the gate of one key of a class's `static limit`; [status, parked] (enter: 1 run,
 * 0 parked, -1 refused; leave/resume: jobs handed back).
 */
export const keyedLimitLua = luaScript<
  [
    holders: string,
    window: string,
    parked: string,
    ready: string,
    waiting: string,
    queues: string,
    op: "enter" | "leave" | "resume",
    jid: string,
    leaseMs: number,
    concurrency: number,
    rate: number,
    windowMs: number,
    limitKey: string,
    className: string,
    queuePrefix: string,
    job: string,
    maxParked: number,
    batch: number,
  ],
  [number, number]
>(new URL("./keyed-limit-6.lua", import.meta.url));

/** The limiters' scripts (app objects: any plug-in of the family may be the one that runs them). */
export const RATE_SCRIPTS = [rateBucketLua, rateWindowLua, rateLeakyLua, keyedLimitLua] as const;
