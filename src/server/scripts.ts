/** The worker's own Lua, beside the poller and the leader record it serves (fetch's is in fetch/scripts.ts). */
import { luaScript } from "../platform/redis/luaScript.js";

/** zpopbyscore-1.lua: pops one member of `set` scored <= `now` (epoch seconds as text). */
export const zpopbyscoreLua = luaScript<[set: string, now: string], string | null>(
  new URL("./zpopbyscore-1.lua", import.meta.url),
);

/** enqueue-due-2.lua: moves up to `limit` due jobs to their queues; [moved, ...jobs for the client path]. */
export const enqueueDueLua = luaScript<
  [set: string, queues: string, now: string, limit: number, enqueuedAt: string, queuePrefix: string],
  [number, ...string[]]
>(new URL("./enqueue-due-2.lua", import.meta.url));

/**
 * leader-resign-1.lua: deletes the leader record (`dear-leader`, Sidekiq Enterprise's) if it still holds
 * `identity`; 1 deleted, 0 not ours. The core's: the supervisor frees a dead child's leadership with it,
 * whichever feature elected it.
 */
export const leaderResignLua = luaScript<[key: string, identity: string], number>(
  new URL("./leader-resign-1.lua", import.meta.url),
);
