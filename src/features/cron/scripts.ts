/** Cron's Lua: a periodic tick claimed and pushed at most once, and the leader's renewal. */
import { luaScript } from "../../platform/redis/luaScript.js";
import { leaderResignLua } from "../../server/scripts.js";

/**
 * cron-claim-4.lua: claims a periodic tick and pushes its job; 1 pushed, 0 taken, 2 disabled (skipped),
 * -1 schedule gone.
 */
export const cronClaimLua = luaScript<
  [
    schedule: string,
    tickKey: string,
    queues: string,
    queueKey: string,
    tick: number,
    identity: string,
    ttl: number,
    queue: string,
    job: string,
  ],
  number
>(new URL("./cron-claim-4.lua", import.meta.url));

/** leader-renew-1.lua: extends `key` by `ttl` seconds if it still holds `identity`; 1 renewed, 0 not ours. */
export const leaderRenewLua = luaScript<[key: string, identity: string, ttl: number], number>(
  new URL("./leader-renew-1.lua", import.meta.url),
);

/** Every script the feature runs (the resignation is the core's: the supervisor runs it too). */
export const CRON_SCRIPTS = [cronClaimLua, leaderRenewLua, leaderResignLua] as const;
