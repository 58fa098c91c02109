/**
 * An app's own plug-in in processes tsq forks: examples/plugins/auditTrail/jobs.ts exports its job class
 * and `plugins` (the built-ins, then the audit trail), and every process that loads it runs that list:
 * each `tsq-cluster` child (the trail's counter summed on the supervisor's /metrics), each child of a
 * library `Cluster`, `tsq` itself. A bad export stops `tsq-cluster` and `Cluster.start()` before anything
 * forks, naming the module and the fix; TSQ_PLUGINS=none still runs plain Sidekiq OSS, the app's list
 * included.
 */
import { test, before, type TestContext } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { freePort, useRedis } from "../helpers/redis.js";
import { ROOT, eventually, startTsq } from "../helpers/tsqProcess.js";
import { pushJobs, scratchDir } from "../helpers/fixtures.js";
import { giveUpAfter } from "../helpers/timing.js";
import { compileAuditTrail } from "../helpers/auditTrailExample.js";
import { request } from "../metrics/http.js";
import { Cluster } from "../../src/library/Cluster.js";
import { jobModulePlugins } from "../../src/server/jobModulePlugins.js";
import { builtinPlugins } from "../../src/plugins.js";
import { ConfigError, TsqError } from "../../src/wire/errors.js";

const handle = useRedis();
let jobs = "";

before(() => {
  jobs = join(compileAuditTrail(), "jobs.js");
});

/**
 * A config file with a 1 s heartbeat (children report ready, and flush their stats, fast) and the
 * plug-in's own key: the trail keeps 5 entries.
 */
function fastConfig(extra = "audit_trail_max_length: 5\n"): string {
  const path = join(scratchDir("audit-cluster"), "tsq.yml");
  writeFileSync(path, `heartbeat_interval: 1\n${extra}`);
  return path;
}
const KEPT = 5;

const trailLength = () => handle.redis.llen("audit:trail");
const BUILTIN_NAMES = builtinPlugins().map((plugin) => plugin.name);

/** A job module whose `plugins` export is `source` (JavaScript). */
function badModule(source: string): string {
  const path = join(scratchDir("audit-bad"), "jobs.mjs");
  writeFileSync(path, `export class Noop { perform() {} }\nexport const plugins = ${source};\n`);
  return path;
}

test("every tsq-cluster child runs the job module's plug-ins: the trail's counter on the supervisor's /metrics", async (t) => {
  const port = await freePort();
  const cluster = startTsq(
    ["-r", jobs, "--processes", "2", "-c", "1", "-C", fastConfig(), "--metrics-port", String(port)],
    { REDIS_URL: handle.url },
    "bin/tsq-cluster.js",
  );
  t.after(() => cluster.stop(15_000));
  // Each child read the export itself: its start line names the built-ins, then the app's plug-in.
  for (const child of [0, 1]) {
    const started = await cluster.waitForLine((line) => line.msg === "tsq worker started" && line.child === child);
    assert.deepEqual(started.plugins, [...BUILTIN_NAMES, "auditTrail"], `child ${child}'s plug-ins`);
  }
  const N = 8;
  await pushJobs(
    handle.url,
    "ChargeCard",
    Array.from({ length: N }, (_, i) => [`order-${i}`]),
  );
  // The counter exists only in the children (the plug-in's metrics hook); the supervisor sums them.
  await eventually(
    async () => {
      const reply = await request(port, "/metrics");
      return reply.body.includes(`tsq_audit_entries_total{queue="default",status="done"} ${N}\n`);
    },
    15_000,
    `tsq_audit_entries_total of ${N} on /metrics`,
    250,
  );
  // The children read the plug-in's key from the config file: the trail keeps its last 5.
  assert.equal(await trailLength(), KEPT);
  const entries = (await handle.redis.lrange("audit:trail", 0, -1)).map((text) => JSON.parse(text));
  assert.deepEqual(
    new Set(entries.map((entry) => `${entry.class} ${entry.queue} ${entry.status}`)),
    new Set(["ChargeCard default done"]),
  );
  assert.deepEqual(await handle.redis.keys("audit:hold:*"), [], "each hold released when its job was done");
});

test("the job module's plug-ins' config keys: a bad value stops tsq-cluster and tsq naming the key; unknown without the module", () => {
  const bad = fastConfig("audit_trail_max_length: 0\n");
  for (const bin of ["bin/tsq-cluster.js", "bin/tsq.js"]) {
    const run = runBin(bin, ["-r", jobs, "-C", bad, ...(bin.includes("cluster") ? ["--processes", "2"] : [])]);
    assert.equal(run.status, 2, `${bin}: ${run.stderr}`);
    assert.match(run.stderr, /audit_trail_max_length must be an integer from 1 to 1000000, got 0/, bin);
  }
  // A module whose plug-ins do not declare the key: refused as unknown, naming it.
  const run = runBin("bin/tsq.js", ["-r", badModule("undefined"), "-C", fastConfig()]);
  assert.equal(run.status, 2, run.stderr);
  assert.match(
    run.stderr,
    /unknown key "audit_trail_max_length".*a plug-in's key is known only where that plug-in runs/,
  );
});

test("a library Cluster's children run the job module's plug-ins", async (t) => {
  const cluster = new Cluster({
    redis: handle.url,
    require: jobs,
    processes: 2,
    concurrency: 1,
    timeout: 5,
    options: { heartbeatInterval: 1 },
  });
  t.after(() => cluster.stop({ timeout: 1 }));
  await cluster.start();
  assert.equal(cluster.children().length, 2);
  await pushJobs(handle.url, "ChargeCard", [["a"], ["b"], ["c"], ["d"]]);
  await eventually(async () => (await trailLength()) === 4, 30_000, "4 audit entries");
  await cluster.stop({ timeout: 2 });
  assert.equal(await cluster.finished, 0);
});

test("a bad `plugins` export is refused by name, with the fix", async () => {
  const refused = async (source: string, message: RegExp) => {
    const path = badModule(source);
    await assert.rejects(
      jobModulePlugins(path),
      (error: unknown) =>
        error instanceof ConfigError &&
        error.message.includes(`the job module ${path} exports \`plugins\``) &&
        message.test(error.message),
      source,
    );
  };
  await refused(
    `{ name: "one" }`,
    /as an object without a `name`, not an array: export the whole list .*builtinPlugins\(\)/,
  );
  await refused(`"all"`, /as the string "all", not an array/);
  await refused(
    `[{ name: "ok" }, {}]`,
    /plugins\[1\] is an object without a `name`, not a plug-in: .*non-empty string `name`/,
  );
  await refused(`[{ name: "" }]`, /plugins\[0\] is an object without a `name`, not a plug-in/);
  await refused(`[null]`, /plugins\[0\] is null, not a plug-in/);
  await refused(
    `[function auditTrail() {}]`,
    /plugins\[0\] is a function, not a plug-in: call it \(`auditTrail\(\)`, not `auditTrail`\)/,
  );
  await refused(`[{ name: "a" }, { name: "b" }, { name: "a" }]`, /plugins\[0\] and plugins\[2\] are both named "a"/);
  // No export (or `undefined`): the caller runs the built-ins; an empty list is a list (none).
  assert.equal(await jobModulePlugins(badModule("undefined")), undefined);
  assert.deepEqual(await jobModulePlugins(badModule("[]")), []);
});

function runBin(bin: string, args: string[], env: Record<string, string> = {}) {
  return spawnSync(process.execPath, [join(ROOT, bin), ...args], {
    cwd: ROOT,
    env: { ...process.env, REDIS_URL: handle.url, ...env },
    encoding: "utf8",
    timeout: giveUpAfter(30_000),
  });
}

test("tsq-cluster with a bad export exits 2 before forking; tsq exits 1; Cluster.start() rejects", async (t: TestContext) => {
  const path = badModule(`[{ name: "tracing" }, {}]`);
  const expected = `the job module ${path} exports \`plugins\`: plugins[1] is an object without a \`name\``;

  const cluster = runBin("bin/tsq-cluster.js", ["-r", path, "--processes", "2", "--metrics-port", "0"]);
  assert.equal(cluster.status, 2, cluster.stderr);
  assert.ok(cluster.stderr.includes(`tsq-cluster: ${expected}`), cluster.stderr);
  assert.doesNotMatch(cluster.stdout + cluster.stderr, /"child":|starting tsq-cluster/, "nothing was forked");

  const tsq = runBin("bin/tsq.js", ["-r", path]);
  assert.equal(tsq.status, 1, tsq.stderr);
  assert.ok((tsq.stdout + tsq.stderr).includes(expected), tsq.stdout + tsq.stderr);

  const library = new Cluster({ redis: handle.url, require: path, processes: 2 });
  t.after(() => library.stop());
  await assert.rejects(
    library.start(),
    (error: unknown) => error instanceof TsqError && error.message.includes(expected),
  );
  assert.deepEqual(library.children(), []);
  assert.equal(await library.finished, 1);
});

test("TSQ_PLUGINS=none runs plain Sidekiq OSS: the job module's plug-ins do not run either, and a warning names them", async (t) => {
  const tsq = startTsq(["-r", jobs, "-C", fastConfig()], { REDIS_URL: handle.url, TSQ_PLUGINS: "none" });
  t.after(() => tsq.stop());
  const warning = await tsq.waitForLine(
    (line) => typeof line.msg === "string" && line.msg.startsWith("TSQ_PLUGINS=none"),
  );
  assert.deepEqual(warning.plugins, [...BUILTIN_NAMES, "auditTrail"]);
  const started = await tsq.waitForLine((line) => line.msg === "tsq worker started");
  assert.deepEqual(started.plugins, []);
  await pushJobs(handle.url, "ChargeCard", [["a"], ["b"]]);
  await eventually(async () => (await handle.redis.get("stat:processed")) === "2", 15_000, "2 jobs processed");
  assert.equal(await trailLength(), 0);
});
