/** Outcomes' Lua: a job's end stored under its jid and appended to the capped stream, in one step. */
import { luaScript } from "../../platform/redis/luaScript.js";

/** record-outcome-2.lua: SET the result key with its TTL (seconds), XADD the capped stream; the entry id. */
export const recordOutcomeLua = luaScript<
  [resultKey: string, stream: string, record: string, ttl: number, cap: number, ...fields: string[]],
  string
>(new URL("./record-outcome-2.lua", import.meta.url));
