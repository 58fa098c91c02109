/**
 * Lua scripts, each kept as `src/lua/<name>-<numKeys>.lua` with a KEYS/ARGV header, registered once per
 * connection through ioredis `defineCommand` (EVALSHA, reloaded on NOSCRIPT) and exposed as typed
 * functions. Nothing else calls EVAL.
 */
import { readFileSync, readdirSync } from "node:fs";
import type { Redis } from "ioredis";

const LUA_DIR = new URL("../lua/", import.meta.url);

/** The typed commands added to every tsq connection. Add one line here per new `.lua` file. */
export interface ScriptCommands {
  /** zpopbyscore-1.lua: pops one member of `set` scored <= `now`. */
  zpopbyscore(set: string, now: string): Promise<string | null>;
  /** enqueue-due-2.lua: moves up to `limit` due jobs to their queues; [moved, ...jobs for the client path]. */
  enqueueDue(set: string, queues: string, now: string, limit: number, enqueuedAt: string, queuePrefix: string): Promise<[number, ...string[]]>;
  /** leader-renew-1.lua: extends `key` by `ttl` seconds if it still holds `identity`; 1 renewed, 0 not ours. */
  leaderRenew(key: string, identity: string, ttl: number): Promise<number>;
  /** leader-resign-1.lua: deletes `key` if it still holds `identity`; 1 deleted, 0 not ours. */
  leaderResign(key: string, identity: string): Promise<number>;
  /** cron-claim-2.lua: claims a periodic tick; 1 push, 0 taken, 2 disabled (skipped), -1 schedule gone. */
  cronClaim(schedule: string, tickKey: string, tick: number, identity: string, ttl: number): Promise<number>;
  /** reliable-fetch.lua: `numKeys`, the (queue, private list) pairs, then the most jobs to move; [pair index, ...jobs] or null. */
  reliableFetch(numKeys: number, ...keysThenMax: (string | number)[]): Promise<[number, ...string[]] | null>;
  /** recover-3.lua: [moved, ...poison pills]. */
  recover(
    privateList: string,
    queue: string,
    schedule: string,
    counterPrefix: string,
    windowSeconds: number,
    maxRecoveries: number,
    now: string,
    spreadSeconds: number,
    seed: number,
  ): Promise<[number, ...string[]]>;
}

export type TsqRedis = Redis & ScriptCommands;

interface Script {
  name: string;
  /** undefined: the caller passes the key count first. */
  numberOfKeys: number | undefined;
  lua: string;
}

let cached: Script[] | undefined;

function loadScripts(): Script[] {
  if (cached) return cached;
  cached = readdirSync(LUA_DIR)
    .filter((file) => file.endsWith(".lua"))
    .map((file) => {
      // <command>-<numKeys>.lua, or <command>.lua for a variable key count (passed first at call time).
      const match = /^(.+?)(?:-(\d+))?\.lua$/.exec(file)!;
      const name = match[1]!.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());
      const numberOfKeys = match[2] === undefined ? undefined : Number(match[2]);
      return { name, numberOfKeys, lua: readFileSync(new URL(file, LUA_DIR), "utf8") };
    });
  return cached;
}

export function defineScripts(redis: Redis): TsqRedis {
  for (const script of loadScripts()) {
    redis.defineCommand(script.name, script.numberOfKeys === undefined ? { lua: script.lua } : { numberOfKeys: script.numberOfKeys, lua: script.lua });
  }
  return redis as TsqRedis;
}
