/**
 * luaScript: a script is declared by the module that runs it, read when it first runs and defined on a
 * connection the first time it runs there. Every `.lua` command file of src/ is declared, the core's
 * beside their callers and each feature's by its plug-in, so no list in the core names a feature's.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readdirSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { useRedis } from "../../helpers/redis.js";
import { connect } from "../../../src/platform/redis/connection.js";
import { luaScript, type LuaSource } from "../../../src/platform/redis/luaScript.js";
import { builtinPlugins } from "../../../src/plugins.js";
import * as clientScripts from "../../../src/client/scripts.js";
import * as serverScripts from "../../../src/server/scripts.js";
import * as fetchScripts from "../../../src/server/fetch/scripts.js";
import { zpopbyscoreLua } from "../../../src/server/scripts.js";
import { pushJobsLua } from "../../../src/client/scripts.js";

const handle = useRedis();

/**
 * The source tree, and the compiled one the scripts are read from (the build copies every .lua beside its
 * module; a stale copy of a moved file may stay there, so the files are listed from src/).
 */
const SOURCE_ROOT = fileURLToPath(new URL("../../../../src/", import.meta.url));
const BUILT_ROOT = fileURLToPath(new URL("../../../src/", import.meta.url));

function luaFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === "lib" || entry.name === "assets" ? [] : luaFiles(path);
    return entry.name.endsWith(".lua") ? [path] : [];
  });
}

/** How many times Redis ran `command` since its stats were reset (INFO commandstats). */
async function calls(command: string): Promise<number> {
  const info = await handle.redis.info("commandstats");
  return Number(new RegExp(`^cmdstat_${command}:calls=(\\d+)`, "m").exec(info)?.[1] ?? 0);
}

test("every .lua command under src/ is declared: the core's by their callers, a feature's by its plug-in", () => {
  const core: LuaSource[] = [clientScripts, serverScripts, fetchScripts].flatMap((module) => Object.values(module));
  const byPlugins = builtinPlugins().flatMap((plugin) => plugin.scripts ?? []);
  const declared = new Set([...core, ...byPlugins].map((script) => relative(BUILT_ROOT, script.file)));
  const onDisk = luaFiles(SOURCE_ROOT).map((file) => relative(SOURCE_ROOT, file));
  assert.ok(onDisk.length >= 25, `found the scripts under ${SOURCE_ROOT}`);
  for (const file of onDisk) assert.ok(declared.has(file), `${file} is declared by no core module or plug-in`);
  for (const script of byPlugins)
    assert.ok(
      relative(BUILT_ROOT, script.file).startsWith("features") || core.includes(script),
      `${script.file}: a plug-in declares its own scripts or the core's`,
    );
  // Each reads, with its includes pasted in, and opens with its KEYS/ARGV header.
  for (const script of [...core, ...byPlugins]) {
    assert.match(script.source(), /^-- [\w-]+\.lua/, `${script.file} opens with its header`);
    assert.doesNotMatch(script.source(), /^-- include:/m, `${script.file}'s includes are pasted in`);
  }
});

test("a connection's first run of a script sends its text, every later run its SHA-1", async (t) => {
  const [one, two] = [connect(handle.url), connect(handle.url)];
  t.after(() => [one, two].forEach((redis) => redis.disconnect()));
  await handle.redis.script("FLUSH");
  await handle.redis.config("RESETSTAT");
  await handle.redis.zadd("schedule", 1, "a", 1, "b", 1, "c");
  assert.equal(await zpopbyscoreLua.run(one, "schedule", "2"), "a", "EVAL");
  assert.equal(await zpopbyscoreLua.run(two, "schedule", "2"), "b", "another connection: EVAL");
  assert.equal(await zpopbyscoreLua.run(one, "schedule", "2"), "c", "EVALSHA");
  assert.equal(await zpopbyscoreLua.run(two, "schedule", "2"), null, "EVALSHA");
  assert.equal(await calls("eval"), 2, "the text once per connection");
  assert.equal(await calls("evalsha"), 2, "no EVALSHA refused: none ran out of its turn");
  assert.deepEqual(await handle.redis.script("EXISTS", zpopbyscoreLua.sha()), [1]);
});

test("on a fresh Redis, calls of four connections run in the order they arrived (a refused EVALSHA would reorder them)", async (t) => {
  const connections = Array.from({ length: 4 }, () => connect(handle.url));
  t.after(() => connections.forEach((redis) => redis.disconnect()));
  await handle.redis.script("FLUSH");
  await handle.redis.del("queue:order");
  const monitor = await handle.redis.monitor();
  t.after(() => monitor.disconnect());
  const arrived: string[] = [];
  monitor.on("monitor", (_time: string, args: string[]) => {
    if (args[0]?.toLowerCase().startsWith("eval") && args.includes("queue:order")) arrived.push(args.at(-1)!);
  });
  await Promise.all(
    connections.flatMap((redis, c) =>
      Array.from({ length: 5 }, (_, i) => pushJobsLua.run(redis, "queues", "queue:order", "order", `${c}-${i}`)),
    ),
  );
  await handle.redis.ping(); // MONITOR has reported every command before this answer
  const ran = (await handle.redis.lrange("queue:order", 0, -1)).reverse();
  assert.deepEqual(ran, arrived, "run in the order the calls reached Redis, none twice");
});

test("a script runs again after Redis forgot it (SCRIPT FLUSH, as on a failed-over primary)", async (t) => {
  const redis = connect(handle.url);
  t.after(() => redis.disconnect());
  assert.equal(await pushJobsLua.run(redis, "queues", "queue:a", "a", "{}"), 1);
  await handle.redis.script("FLUSH");
  assert.deepEqual(await handle.redis.script("EXISTS", pushJobsLua.sha()), [0]);
  assert.equal(await pushJobsLua.run(redis, "queues", "queue:a", "a", "{}"), 2);
});

test("scripts run inside one tick's auto-pipeline beside other commands, as bytes too", async (t) => {
  const redis = connect(handle.url);
  t.after(() => redis.disconnect());
  await handle.redis.script("FLUSH");
  const [length, , popped] = await Promise.all([
    pushJobsLua.run(redis, "queues", "queue:p", "p", "{}"),
    redis.zadd("schedule", 1, "\u00ff"),
    zpopbyscoreLua.runBuffer(redis, "schedule", "2"),
  ]);
  assert.equal(length, 1);
  assert.deepEqual(popped, Buffer.from("\u00ff"));
});

test("a script declared outside src/ runs the same way, and a misnamed file is refused at declaration", async () => {
  assert.throws(() => luaScript(new URL("file:///tmp/not a script.lua")), /<command>-<numKeys>\.lua/);
  const missing = luaScript<[string], number>(new URL("file:///nonexistent/dir/gone-1.lua"));
  assert.equal(missing.numberOfKeys, 1);
  await assert.rejects(() => missing.run(handle.redis, "k"), /ENOENT/, "a missing file is found when it first runs");
});
