/** The lock core's Lua: taking and refreshing a lock (Lock.ts). */
import { luaScript } from "../../platform/redis/luaScript.js";

/**
 * lock-acquire-2.lua: takes `lock` for `holder` (ms ttl, up to `limit` holders); [1, holder] or
 * [0, a current holder].
 */
export const lockAcquireLua = luaScript<
  [lock: string, flag: string, holder: string, ttlMs: number, limit: number, nowMs: number, useFlag: "0" | "1"],
  [0 | 1, string]
>(new URL("./lock-acquire-2.lua", import.meta.url));

/** lock-refresh-1.lua: extends `holder`'s expiry to now + `ttlMs` if it still holds `lock`; 1 or 0. */
export const lockRefreshLua = luaScript<[lock: string, holder: string, ttlMs: number, nowMs: number], number>(
  new URL("./lock-refresh-1.lua", import.meta.url),
);

/** The lock core's scripts, declared by every plug-in built on Lock.ts. */
export const LOCK_SCRIPTS = [lockAcquireLua, lockRefreshLua] as const;
