/** GitLab's concurrency limits in Lua: one script for a slot's enter, leave and a push's admission. */
import { luaScript } from "../../../platform/redis/luaScript.js";

/**
 * limit-slot-4.lua: takes ("enter") or gives back ("leave") a concurrency-limit slot, or admits a pushed
 * job ("admit"), parking or resuming jobs; [status, running, parked] (enter: 1 run, 0 parked, -1 parked
 * list full; admit: 1 granted, 0 parked, -1 refused; leave: jobs resumed).
 */
export const limitSlotLua = luaScript<
  [
    slots: string,
    parked: string,
    limits: string,
    queues: string,
    op: "enter" | "leave" | "admit",
    holder: string,
    ttlMs: number,
    limit: number,
    nowMs: number,
    className: string,
    queuePrefix: string,
    job: string,
    maxParked: number,
    resumed: "0" | "1",
  ],
  [number, number, number]
>(new URL("./limit-slot-4.lua", import.meta.url));
