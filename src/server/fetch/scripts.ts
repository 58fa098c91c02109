/** Reliable fetch's Lua: the fetch itself, acknowledgements, reconciliation and recovery of private lists. */
import { luaScript } from "../../platform/redis/luaScript.js";

/** ack-jobs-1.lua: removes finished jobs from a private list, by their marks (ackMark.ts); how many were removed. */
export const ackJobsLua = luaScript<[privateList: string, marks: string, ...whole: (string | Buffer)[]], number>(
  new URL("./ack-jobs-1.lua", import.meta.url),
);

/**
 * reliable-fetch.lua: `numKeys`, the (queue, private list) pairs, the most jobs to move, then the marks
 * of finished jobs to acknowledge first, one string per pair; [pair index, ...jobs] or null (runBuffer:
 * the jobs as their exact bytes).
 */
export const reliableFetchLua = luaScript<
  [numKeys: number, ...keysThenArgs: (string | number | Buffer)[]],
  [number, ...string[]] | null,
  [number, ...Buffer[]] | null
>(new URL("./reliable-fetch.lua", import.meta.url));

/** reconcile-2.lua: moves private-list jobs not in `held` back to the queue; how many moved. */
export const reconcileLua = luaScript<[privateList: string, queue: string, ...held: Buffer[]], number>(
  new URL("./reconcile-2.lua", import.meta.url),
);

/** recover-3.lua: [moved, ...poison pills] (runBuffer: the pills as their exact bytes). */
export const recoverLua = luaScript<
  [
    privateList: string,
    queue: string,
    schedule: string,
    counterPrefix: string,
    windowSeconds: number,
    maxRecoveries: number,
    now: string,
    spreadSeconds: number,
    seed: number,
  ],
  [number, ...string[]],
  [number, ...Buffer[]]
>(new URL("./recover-3.lua", import.meta.url));
