/**
 * Importing the package changes nothing: in a fresh process, importing the root (and tsq/testing,
 * tsq/api, tsq/web) sets no default plug-in list, no default client, no routing rules, no server
 * registrations, adds no global and no process listener, and leaves nothing that keeps the process
 * alive. What is process-wide is only what an app sets at boot through an explicit call.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";

/** dist/, where the compiled package is (this file runs from dist/test/). */
const dist = fileURLToPath(new URL("../", import.meta.url));

/** Run in a fresh node: looks at the process, imports `entries`, looks again, then reads tsq's own state. */
const PROBE = `
const dist = process.argv[1];
const entries = JSON.parse(process.argv[2]);
const listeners = () => Object.fromEntries(process.eventNames().map((name) => [String(name), process.listenerCount(name)]));
// The probe's own output streams exist before the first look (reading them opens their pipes).
const resources = () => (process.stdout, process.stderr, process.getActiveResourcesInfo().sort());
const before = { globals: Object.getOwnPropertyNames(globalThis).sort(), listeners: listeners(), resources: resources() };
for (const entry of entries) await import(dist + entry);
// A turn for the loader's own file reads to settle.
await new Promise((resolve) => setImmediate(resolve));
const after = { globals: Object.getOwnPropertyNames(globalThis).sort(), listeners: listeners(), resources: resources() };
const { defaultPlugins } = await import(dist + "src/client/defaultPlugins.js");
const { hasDefaultClient } = await import(dist + "src/client/defaultClient.js");
const { currentRouter } = await import(dist + "src/platform/attributes/WorkerRouter.js");
const { serverConfig } = await import(dist + "src/server/serverConfig.js");
const config = serverConfig();
const state = {
  defaultPlugins: defaultPlugins() ?? null,
  defaultClient: hasDefaultClient(),
  routingRules: !currentRouter().empty,
  serverMiddleware: config.middleware.size,
  clientMiddleware: config.clientMiddleware.size,
  deathHandlers: config.deathHandlers.length,
  lifecycleHandlers: Object.values(config.handlers).flat().length,
};
console.log(JSON.stringify({ before, after, state }));
`;

function probe(entries: string[]): {
  before: { globals: string[]; listeners: Record<string, number>; resources: string[] };
  after: { globals: string[]; listeners: Record<string, number>; resources: string[] };
  state: Record<string, unknown>;
} {
  const run = spawnSync(process.execPath, ["--input-type=module", "-e", PROBE, dist, JSON.stringify(entries)], {
    encoding: "utf8",
    timeout: 30_000,
    env: { ...process.env, TSQ_LOG_LEVEL: "silent" },
  });
  assert.equal(run.status, 0, `the probe failed: ${run.stderr}`);
  return JSON.parse(run.stdout.trim().split("\n").pop()!) as ReturnType<typeof probe>;
}

for (const entries of [
  ["src/index.js"],
  ["src/index.js", "src/testing/index.js", "src/admin/api/index.js", "src/admin/web/index.js"],
]) {
  test(`importing ${entries.join(", ")} in a fresh process changes no process-wide state`, () => {
    const { before, after, state } = probe(entries);
    assert.deepEqual(state, {
      defaultPlugins: null,
      defaultClient: false,
      routingRules: false,
      serverMiddleware: 0,
      clientMiddleware: 0,
      deathHandlers: 0,
      lifecycleHandlers: 0,
    });
    assert.deepEqual(after.globals, before.globals, "no global added");
    assert.deepEqual(after.listeners, before.listeners, "no process listener added");
    assert.deepEqual(after.resources, before.resources, "no handle, timer or connection left");
  });
}
