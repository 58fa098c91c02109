/**
 * What a process that loads a job module runs (src/library/processPlugins.ts): its `plugins` export,
 * else every built-in feature; nothing with TSQ_PLUGINS=none, the module's list included.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { builtinPlugins } from "../../src/plugins.js";
import { pluginsSwitch, processPlugins } from "../../src/library/processPlugins.js";
import { ConfigError } from "../../src/wire/errors.js";
import type { Plugin } from "../../src/server/plugin.js";

const names = (plugins: readonly Plugin[]) => plugins.map((plugin) => plugin.name);
const app: Plugin[] = [builtinPlugins()[0]!, { name: "auditTrail" }];

test("the module's list as given, else the built-ins; TSQ_PLUGINS=none runs nothing either way", () => {
  for (const value of [undefined, "", "all", " all "]) {
    const env = value === undefined ? {} : { TSQ_PLUGINS: value };
    assert.deepEqual(names(processPlugins(undefined, env)), names(builtinPlugins()), `TSQ_PLUGINS=${value}`);
    assert.deepEqual(names(processPlugins(app, env)), ["tracing", "auditTrail"], `TSQ_PLUGINS=${value}`);
    assert.deepEqual(processPlugins([], env), [], "an empty export is plain Sidekiq OSS too");
  }
  assert.deepEqual(processPlugins(undefined, { TSQ_PLUGINS: "none" }), []);
  assert.deepEqual(processPlugins(app, { TSQ_PLUGINS: "none" }), []);
  // A copy: the caller may not change the module's own array through it.
  const given = processPlugins(app, {});
  given.pop();
  assert.equal(app.length, 2);
});

test("any other TSQ_PLUGINS value is refused, naming what is accepted", () => {
  for (const value of ["some", "auditTrail", "NONE"])
    assert.throws(
      () => pluginsSwitch({ TSQ_PLUGINS: value }),
      (error: unknown) =>
        error instanceof ConfigError &&
        error.message === `TSQ_PLUGINS must be "all" (the default) or "none", got ${JSON.stringify(value)}`,
    );
});
