/** The sidekiq-unique-jobs gem's locks in Lua, wire-compatible with the gem's own scripts. */
import { luaScript } from "../../../platform/redis/luaScript.js";

/** suj-lock-7.lua: takes a lock (keys of sujKeys + both digest indexes); [1, jid] or [0, a holder]. */
export const sujLockLua = luaScript<
  [
    digest: string,
    queued: string,
    primed: string,
    locked: string,
    info: string,
    digests: string,
    expiringDigests: string,
    jid: string,
    pttl: number,
    type: string,
    limit: number,
    nowSeconds: string,
  ],
  [0 | 1, string]
>(new URL("./suj-lock-7.lua", import.meta.url));

/** suj-unlock-6.lua: releases a jid's lock as the gem does; 1 released, 0 not its holder. */
export const sujUnlockLua = luaScript<
  [
    digest: string,
    queued: string,
    primed: string,
    locked: string,
    info: string,
    digests: string,
    jid: string,
    type: string,
    limit: number,
  ],
  number
>(new URL("./suj-unlock-6.lua", import.meta.url));

/** suj-delete-job-3.lua: removes the job whose text contains both needles from a queue, schedule, retry. */
export const sujDeleteJobLua = luaScript<
  [queue: string, schedule: string, retry: string, digestNeedle: string, jidNeedle: string],
  string | null
>(new URL("./suj-delete-job-3.lua", import.meta.url));

/** Every script of the feature, for its plug-in's `scripts`. */
export const SUJ_SCRIPTS = [sujLockLua, sujUnlockLua, sujDeleteJobLua] as const;
