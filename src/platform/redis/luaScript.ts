/**
 * A Lua script as one typed function, declared by the module that runs it (the core's or a feature's;
 * the core lists no feature's scripts). The script is kept as `<name>-<numKeys>.lua` with a KEYS/ARGV
 * header beside that module (`<name>.lua` when the caller passes the key count first). Nothing else
 * calls EVAL.
 *
 * Nothing happens until the script first runs: its text is read then, once per process (it cannot
 * differ between connections). A connection's first run of a script is an EVAL, which runs it and
 * teaches Redis the script; every later run an EVALSHA. A Redis that forgot it (a failed-over primary:
 * Redis 7 replicates a script's effects, not the script; a restart, SCRIPT FLUSH) answers NOSCRIPT, and
 * that run is sent again as EVAL. Why not EVALSHA first everywhere: a refused EVALSHA reaches Redis
 * and runs nothing, and its EVAL comes a round trip later, behind what other clients sent meanwhile, so
 * on a fresh Redis the first calls would run out of the order they arrived in (a concurrency limit's
 * slots are handed out in that order). No command is defined on a connection, so one an app made
 * itself serves as well, and a new connection costs nothing for the scripts it never runs (before, every
 * connection defined all thirty, a SHA-1 and two closures each, and the first scanned the source tree).
 *
 * Why EVALSHA rather than ioredis `defineCommand`: a command defined on a connection after it opened is
 * missing from the auto-pipeline already gathering that tick's commands (ioredis copies the defined
 * commands into a pipeline when it makes it), while EVALSHA is a built-in every pipeline has. A
 * connection to a slot group of a Redis Cluster puts its `{group}` tag before a script's KEYS as before
 * every command's (clusterConnection.ts); keys a script builds from ARGV take the tag from `keyTag(redis)`.
 */
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { Redis } from "ioredis";

/** What every script shows whatever its arguments: for a plug-in's `scripts` list and for tests. */
export interface LuaSource {
  /** Absolute path of the `.lua` file. */
  readonly file: string;
  /** KEYS count from the file name; undefined when the caller passes it first. */
  readonly numberOfKeys: number | undefined;
  /** The text Redis runs: the file with its `-- include:` lines pasted in. */
  source(): string;
  /** SHA-1 of `source()`, as EVALSHA and SCRIPT EXISTS name it. */
  sha(): string;
}

/**
 * `Args` are the positional KEYS then ARGV, as the script's header lists them; `Reply` what it returns
 * with bulk strings as text, `BufferReply` with them as their exact bytes (`runBuffer`).
 */
export interface LuaScript<Args extends unknown[], Reply, BufferReply = Reply> extends LuaSource {
  run(redis: Redis, ...args: Args): Promise<Reply>;
  runBuffer(redis: Redis, ...args: Args): Promise<BufferReply>;
}

type Eval = (script: string, ...args: unknown[]) => Promise<unknown>;

/** EVAL and EVALSHA with their `<name>Buffer` forms (ioredis has them for every built-in; its types leave these out). */
interface Evals {
  eval: Eval;
  evalsha: Eval;
  evalBuffer: Eval;
  evalshaBuffer: Eval;
}

/**
 * Declares the script at `url` (`new URL("./lock-acquire-2.lua", import.meta.url)`). Reads nothing:
 * a missing file is found when the script first runs, or by the test that loads every plug-in's scripts.
 */
export function luaScript<Args extends unknown[], Reply, BufferReply = Reply>(
  url: URL,
): LuaScript<Args, Reply, BufferReply> {
  const file = fileURLToPath(url);
  // <command>-<numKeys>.lua, or <command>.lua for a variable key count (passed first at call time).
  const match = /^[\w-]+?(?:-(\d+))?\.lua$/.exec(basename(file));
  if (!match) throw new Error(`a Lua script is named <command>-<numKeys>.lua or <command>.lua, got ${file}`);
  const numberOfKeys = match[1] === undefined ? undefined : Number(match[1]);
  const keyCount: unknown[] = numberOfKeys === undefined ? [] : [numberOfKeys];
  let loaded: { lua: string; sha: string } | undefined;
  const load = (): { lua: string; sha: string } => {
    if (loaded) return loaded;
    const lua = readLua(file);
    loaded = { lua, sha: createHash("sha1").update(lua).digest("hex") };
    return loaded;
  };
  // The connections that sent this script's text (a cache: a connection gone is dropped with it).
  const taught = new WeakSet<Redis>();
  const run = (redis: Redis, buffer: boolean, args: unknown[]): Promise<unknown> => {
    let script: { lua: string; sha: string };
    try {
      script = load();
    } catch (error) {
      // A missing or unreadable file fails the call as a rejection, as a Redis error would.
      return Promise.reject(error instanceof Error ? error : new Error(String(error)));
    }
    const evals = redis as unknown as Evals;
    if (!taught.has(redis)) {
      taught.add(redis);
      return buffer ? evals.evalBuffer(script.lua, ...keyCount, ...args) : evals.eval(script.lua, ...keyCount, ...args);
    }
    const sent = buffer
      ? evals.evalshaBuffer(script.sha, ...keyCount, ...args)
      : evals.evalsha(script.sha, ...keyCount, ...args);
    return sent.catch((error: unknown) => {
      if (!(error instanceof Error) || !error.message.startsWith("NOSCRIPT")) throw error;
      return buffer ? evals.evalBuffer(script.lua, ...keyCount, ...args) : evals.eval(script.lua, ...keyCount, ...args);
    });
  };
  return {
    file,
    numberOfKeys,
    source: () => load().lua,
    sha: () => load().sha,
    run: (redis, ...args) => run(redis, false, args) as Promise<Reply>,
    runBuffer: (redis, ...args) => run(redis, true, args) as Promise<BufferReply>,
  };
}

/**
 * The file's text with its includes pasted in. Lua shared by several scripts lives in a `lib/` folder
 * and is pasted in where a script says `-- include: lib/<name>.lua`, relative to the script's own folder
 * (`../lib/<name>.lua` for a family's shared lib one folder up, `../../server/lib/<name>.lua` for a
 * feature reusing the core's; Redis runs each script alone: there is no `require`).
 */
function readLua(file: string): string {
  return readFileSync(file, "utf8").replace(
    /^-- include: ((?:\.\.\/)*(?:[\w-]+\/)*lib\/[\w-]+\.lua)$/gm,
    (_, lib: string) => readFileSync(join(dirname(file), lib), "utf8"),
  );
}
