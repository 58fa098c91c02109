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
}

export type TsqRedis = Redis & ScriptCommands;

interface Script {
  name: string;
  numberOfKeys: number;
  lua: string;
}

let cached: Script[] | undefined;

function loadScripts(): Script[] {
  if (cached) return cached;
  cached = readdirSync(LUA_DIR)
    .filter((file) => file.endsWith(".lua"))
    .map((file) => {
      const match = /^(.+)-(\d+)\.lua$/.exec(file);
      if (!match) throw new Error(`Lua file ${file} must be named <command>-<numKeys>.lua`);
      const name = match[1]!.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());
      return { name, numberOfKeys: Number(match[2]), lua: readFileSync(new URL(file, LUA_DIR), "utf8") };
    });
  return cached;
}

export function defineScripts(redis: Redis): TsqRedis {
  for (const script of loadScripts()) {
    redis.defineCommand(script.name, { numberOfKeys: script.numberOfKeys, lua: script.lua });
  }
  return redis as TsqRedis;
}
