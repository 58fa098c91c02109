/** Durable jobs' Lua: parking a wait, and a signal waking the jobs parked on it. */
import { luaScript } from "../../platform/redis/luaScript.js";

/** durable-park-5.lua: parks a waitFor() unless its signal is there; see the script's header. */
export const durableParkLua = luaScript<
  [
    journal: string,
    signal: string,
    waiters: string,
    schedule: string,
    waitingIndex: string,
    jid: string,
    stepName: string,
    position: number,
    payload: string,
    deadline: number,
    now: number,
    ttl: number,
    event: string,
  ],
  [string, string?]
>(new URL("./durable-park-5.lua", import.meta.url));

/**
 * durable-signal-5.lua: stores a signal and enqueues the jobs parked on it (`enqueuedAt` "": leaves them
 * due in `schedule` for the poller); how many woke.
 */
export const durableSignalLua = luaScript<
  [
    signal: string,
    waiters: string,
    schedule: string,
    queues: string,
    waitingIndex: string,
    data: string,
    retention: number,
    journalPrefix: string,
    event: string,
    enqueuedAt: string,
    queuePrefix: string,
  ],
  number
>(new URL("./durable-signal-5.lua", import.meta.url));

/** Every script of the feature, for its plug-in's `scripts`. */
export const DURABLE_SCRIPTS = [durableParkLua, durableSignalLua] as const;
