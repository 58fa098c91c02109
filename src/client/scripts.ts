/** The client's Lua: the atomic push of a batch of jobs onto one queue. */
import { luaScript } from "../platform/redis/luaScript.js";

/** push-jobs-2.lua: SADD queues + LPUSH of `jobs` in one atomic command; the queue's new length. */
export const pushJobsLua = luaScript<[queues: string, queueKey: string, queue: string, ...jobs: string[]], number>(
  new URL("./push-jobs-2.lua", import.meta.url),
);
