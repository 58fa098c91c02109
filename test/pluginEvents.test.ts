/**
 * A feature's events are its own: every event a feature's code emits, on a worker's `ctx.events` or on
 * a Client's `events`, is named in the `emits` of a plug-in of that feature's folder (the folder of its
 * plugin.ts), and every name there is emitted by that folder. The core's JobEvents and ClientEvents
 * name no feature's event: each is declared by the feature's own `declare module`, which the compiler
 * checks against `emits`.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative, sep } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { builtinPlugins } from "../src/plugins.js";
import type { Plugin, PluginEvents } from "../src/server/plugin.js";

/** The source tree (events are read from it) and the compiled one (plug-ins are imported from it). */
const SOURCE_FEATURES = fileURLToPath(new URL("../../src/features/", import.meta.url));
const BUILT_FEATURES = fileURLToPath(new URL("../src/features/", import.meta.url));

type Emitter = keyof PluginEvents;
/** A plug-in as far as this check reads it (names as strings, so a made-up feature can declare its own). */
type Declaring = { emits?: { readonly [E in Emitter]?: readonly string[] } };

/** `emit("name"` on `ctx.events` (a worker's) or on another `events` (a Client's). */
const EMIT = /([\w.?]*?)\??\.emit\(\s*"([^"]+)"/g;

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sources(path);
    return entry.name.endsWith(".ts") && !entry.name.endsWith(".d.ts") ? [path] : [];
  });
}

/** The feature folder a file belongs to: the nearest one with a plugin.ts ("" for none). */
function featureOf(root: string, file: string): string {
  for (let dir = dirname(file); dir.startsWith(root); dir = dirname(dir)) {
    if (existsSync(join(dir, "plugin.ts"))) return relative(root, dir).split(sep).join("/");
  }
  return "";
}

/** "folder: job|client name" for every emit under `root`. */
function emitted(root: string): Set<string> {
  const found = new Set<string>();
  for (const file of sources(root)) {
    for (const [, receiver, name] of readFileSync(file, "utf8").matchAll(EMIT)) {
      const emitter: Emitter | undefined = /ctx\.events$/.test(receiver!)
        ? "job"
        : /events$/.test(receiver!)
          ? "client"
          : undefined; // another emitter of the feature's own (an OutcomeWatcher's): not a seam event
      if (emitter) found.add(`${featureOf(root, file)}: ${emitter} ${name}`);
    }
  }
  return found;
}

/** "folder: job|client name" for every name in `emits` of the plug-ins each folder's plugin.ts exports. */
function declared(byFolder: Map<string, Declaring[]>): Set<string> {
  const found = new Set<string>();
  for (const [folder, plugins] of byFolder)
    for (const plugin of plugins)
      for (const emitter of ["job", "client"] as const)
        for (const name of plugin.emits?.[emitter] ?? []) found.add(`${folder}: ${emitter} ${name}`);
  return found;
}

/** What is emitted and not declared, and what is declared and never emitted. */
function mismatches(root: string, byFolder: Map<string, Declaring[]>): { undeclared: string[]; unused: string[] } {
  const emits = emitted(root);
  const names = declared(byFolder);
  return {
    undeclared: [...emits].filter((e) => !names.has(e)).sort(),
    unused: [...names].filter((d) => !emits.has(d)).sort(),
  };
}

/** The built-in plug-ins by the folder of the plugin.ts that exports them. */
async function builtinsByFolder(): Promise<Map<string, Plugin[]>> {
  const builtins = new Set<unknown>(builtinPlugins());
  const byFolder = new Map<string, Plugin[]>();
  for (const file of sources(SOURCE_FEATURES).filter((f) => f.endsWith(`${sep}plugin.ts`))) {
    const folder = relative(SOURCE_FEATURES, dirname(file)).split(sep).join("/");
    const module = (await import(pathToFileURL(join(BUILT_FEATURES, folder, "plugin.js")).href)) as Record<
      string,
      unknown
    >;
    const plugins = Object.values(module).filter((value): value is Plugin => builtins.has(value));
    byFolder.set(folder, [...(byFolder.get(folder) ?? []), ...plugins]);
  }
  return byFolder;
}

test("every event a feature emits is declared by a plug-in of its folder, and every declared one is emitted", async () => {
  const byFolder = await builtinsByFolder();
  assert.equal(
    [...byFolder.values()].flat().length,
    builtinPlugins().length,
    "each built-in plug-in is exported by a plugin.ts",
  );
  const all = emitted(SOURCE_FEATURES);
  assert.ok(all.size >= 10, `found the features' emits (${[...all].join(", ")})`);
  assert.deepEqual(mismatches(SOURCE_FEATURES, byFolder), { undeclared: [], unused: [] });
});

test("the check fails on a feature that emits an event its plug-in does not declare", () => {
  const root = mkdtempSync(join(tmpdir(), "tsq-events-"));
  try {
    const files: Record<string, string> = {
      "flow/gate/plugin.ts": "export const gate = {};\n",
      "flow/gate/intercept.ts": `ctx.events.emit("gated", job, queue);\nthis.ctx.events.emit("opened", job);\n`,
      "flow/gate/push.ts": `client.events?.emit("gatedPush", job);\nwatcher.emit("ignored");\n`,
    };
    for (const [path, text] of Object.entries(files)) {
      mkdirSync(dirname(join(root, path)), { recursive: true });
      writeFileSync(join(root, path), text);
    }
    const gate = (emits: Declaring["emits"]) => new Map([["flow/gate", [{ emits }]]]);
    assert.deepEqual(mismatches(root, gate({ job: ["gated", "opened"], client: ["gatedPush"] })), {
      undeclared: [],
      unused: [],
    });
    assert.deepEqual(mismatches(root, gate({ job: ["gated", "never"] })), {
      undeclared: ["flow/gate: client gatedPush", "flow/gate: job opened"],
      unused: ["flow/gate: job never"],
    });
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});
