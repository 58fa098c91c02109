/**
 * examples/plugins/auditTrail, a plug-in written outside src/ against the package root only, compiled
 * as an app compiles it (its own tsconfig, `import ... from "tsq"`), run through a real worker on a
 * private Redis. Each thing it declares is checked where it lands: its event with the entry, its
 * counter in the worker's metrics, its setting read from the worker's options (and a bad one refused),
 * its script in Redis, its hold released by the core when a job dies, its fetch order obeyed. And
 * docs/internals.md's "Writing a feature" shows these files word for word.
 */
import { test, before } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import type { EventEmitter } from "node:events";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { useRedis } from "../helpers/redis.js";
import { testLauncher } from "../helpers/context.js";
import { ROOT } from "../helpers/tsqProcess.js";
import { compileAuditTrail } from "../helpers/auditTrailExample.js";
import { Client } from "../../src/client/Client.js";
import { builtinPlugins } from "../../src/plugins.js";
import { JobMetrics } from "../../src/metrics/JobMetrics.js";
import { ConfigError } from "../../src/wire/errors.js";
import { settingsOf, type Plugin } from "../../src/server/plugin.js";
import { resolveWorkerOptions } from "../../src/options/workerOptions.js";
import type { LuaSource } from "../../src/platform/redis/luaScript.js";

const handle = useRedis();

interface AuditEntry {
  jid: string;
  class: string;
  queue: string;
  status: string;
}
type AuditTrail = Plugin & { events: EventEmitter<{ "audit:written": [entry: AuditEntry, length: number] }> };
let auditTrail: (options?: { hold?: string[]; first?: string; after?: string[] }) => AuditTrail;
let auditedWorker: (
  redis: string,
  jobs: unknown[],
  audit: AuditTrail,
) => {
  start(): Promise<void>;
  stop(): Promise<void>;
};

before(async () => {
  const dist = compileAuditTrail();
  ({ auditTrail } = (await import(pathToFileURL(join(dist, "plugin.js")).href)) as { auditTrail: typeof auditTrail });
  ({ auditedWorker } = (await import(pathToFileURL(join(dist, "worker.js")).href)) as {
    auditedWorker: typeof auditedWorker;
  });
});

async function until(check: () => Promise<boolean> | boolean, ms = 20_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error("timed out");
    await new Promise((r) => setTimeout(r, 20));
  }
}

test("the outside plug-in's event, metric, setting, script, lock and fetch order all act in a real worker", async () => {
  const ran: string[] = [];
  const heldWhileRunning: (string | null)[] = [];
  class Audited {
    jid = "";
    async perform(tag: string) {
      ran.push(tag);
      heldWhileRunning.push(await handle.redis.get(`audit:hold:${this.jid}`));
    }
  }
  class Doomed {
    jid = "";
    async perform() {
      ran.push("doomed");
      heldWhileRunning.push(await handle.redis.get(`audit:hold:${this.jid}`));
      throw new Error("no retries left");
    }
  }
  const audit = auditTrail({ hold: ["Audited", "Doomed"], first: "audit" });
  const written: [AuditEntry, number][] = [];
  audit.events.on("audit:written", (entry, length) => void written.push([entry, length]));

  // Strict order tries "default" first; the plug-in's fetch order puts "audit" before it.
  const client = new Client({ redis: handle.url, plugins: [] });
  const jids = {
    d1: await client.push({ class: "Audited", args: ["default-1"], queue: "default" }),
    d2: await client.push({ class: "Audited", args: ["default-2"], queue: "default" }),
    a1: await client.push({ class: "Audited", args: ["audit-1"], queue: "audit" }),
    a2: await client.push({ class: "Audited", args: ["audit-2"], queue: "audit" }),
  };
  await client.close();

  const settings = { auditTrailMaxLength: 3 }; // the plug-in's own worker option
  const launcher = testLauncher(handle.url, [Audited, Doomed], {
    concurrency: 1,
    queues: [
      { name: "default", weight: 0 },
      { name: "audit", weight: 0 },
    ],
    plugins: [...builtinPlugins(), audit],
    ...settings,
  });
  const metrics = new JobMetrics(launcher.ctx);
  await launcher.start();
  await until(() => written.length === 4);
  assert.deepEqual(ran, ["audit-1", "audit-2", "default-1", "default-2"], "fetch order: the audit queue first");

  const doomed = await launcher.ctx.client.push({ class: "Doomed", args: [], queue: "audit", retry: 0 });
  await until(() => written.length === 5);
  await launcher.stop();
  metrics.stop();

  // The event: one per ended job, with the entry written and the trail's length, capped by the setting.
  assert.deepEqual(
    written.map(([entry]) => entry),
    [
      { jid: jids.a1, class: "Audited", queue: "audit", status: "done" },
      { jid: jids.a2, class: "Audited", queue: "audit", status: "done" },
      { jid: jids.d1, class: "Audited", queue: "default", status: "done" },
      { jid: jids.d2, class: "Audited", queue: "default", status: "done" },
      { jid: doomed, class: "Doomed", queue: "audit", status: "dead" },
    ],
  );
  assert.deepEqual(
    written.map(([, length]) => length),
    [1, 2, 3, 3, 3],
  );

  // The script ran in this Redis (it knows the script's SHA) and the setting trimmed the trail to 3.
  const script = (audit.scripts as readonly LuaSource[])[0]!;
  assert.deepEqual(await handle.redis.script("EXISTS", script.sha()), [1]);
  const trail = (await handle.redis.lrange("audit:trail", 0, -1)).map((text) => JSON.parse(text) as AuditEntry);
  assert.deepEqual(
    trail.map((entry) => entry.jid),
    [doomed, jids.d2, jids.d1],
  );

  // The lock: held while each job ran; gone after done (the plug-in) and after dead (the core's release).
  assert.equal(heldWhileRunning.length, 5);
  for (const holder of heldWhileRunning) assert.equal(holder, launcher.ctx.identity);
  assert.deepEqual(await handle.redis.keys("audit:hold:*"), []);
  assert.equal(await handle.redis.zcard("dead"), 1);

  // The metric: counted in the worker's metrics registry, by queue and status.
  const family = (await metrics.snapshot()).find((f) => f.name === "tsq_audit_entries_total");
  assert.ok(family, "the plug-in's counter is in the worker's metrics");
  const count = (queue: string, status: string) =>
    family.values.find((s) => s.labels.queue === queue && s.labels.status === status)?.value;
  assert.equal(count("audit", "done"), 2);
  assert.equal(count("default", "done"), 2);
  assert.equal(count("audit", "dead"), 1);
});

test("an app's Worker runs the outside plug-in from the package root, its setting given as a typed worker option", async () => {
  class Noted {
    perform() {}
  }
  const audit = auditTrail();
  const lengths: number[] = [];
  audit.events.on("audit:written", (_entry, length) => void lengths.push(length));
  const worker = auditedWorker(handle.url, [Noted], audit);
  await worker.start();
  try {
    const client = new Client({ redis: handle.url, plugins: [] });
    for (let i = 0; i < 3; i++) await client.push({ class: "Noted", args: [] });
    await client.close();
    await until(() => lengths.length === 3);
  } finally {
    await worker.stop();
  }
  // examples/plugins/auditTrail/worker.ts sets auditTrailMaxLength: 2.
  assert.deepEqual(lengths, [1, 2, 2]);
  assert.equal(await handle.redis.llen("audit:trail"), 2);
});

test("the outside plug-in's setting is checked as the worker is built: a bad value is refused by name", () => {
  for (const bad of [0, 2.5, Number.NaN, 2_000_000, "10"]) {
    assert.throws(
      () => testLauncher(handle.url, [], { plugins: [auditTrail()], ...{ auditTrailMaxLength: bad } }),
      (error: unknown) => error instanceof ConfigError && /auditTrailMaxLength/.test(error.message),
      `auditTrailMaxLength: ${String(bad)}`,
    );
  }
});

test("the outside plug-in's setting is read from the config file of a process that runs it", async (t) => {
  const cwd = mkdtempSync(join(tmpdir(), "tsq-audit-config-"));
  t.after(() => rmSync(cwd, { recursive: true, force: true }));
  mkdirSync(join(cwd, "config"));
  const write = (text: string) => writeFileSync(join(cwd, "config/tsq.yml"), text);
  const audit = auditTrail();
  const plugins = [...builtinPlugins(), audit];
  // As the CLI reads a file: with the settings of the plug-ins it runs. The environment section wins.
  write("audit_trail_max_length: 5\nproduction:\n  audit_trail_max_length: 2\n");
  const { options } = resolveWorkerOptions(["-e", "production"], {}, cwd, settingsOf(plugins));
  assert.equal((options as { auditTrailMaxLength?: number }).auditTrailMaxLength, 2);

  class Filed {
    perform() {}
  }
  const lengths: number[] = [];
  audit.events.on("audit:written", (_entry, length) => void lengths.push(length));
  const launcher = testLauncher(handle.url, [Filed], { ...options, redisUrl: handle.url, plugins });
  await launcher.start();
  try {
    const client = new Client({ redis: handle.url, plugins: [] });
    for (let i = 0; i < 3; i++) await client.push({ class: "Filed", args: [] });
    await client.close();
    await until(() => lengths.length === 3);
  } finally {
    await launcher.stop();
  }
  assert.deepEqual(lengths, [1, 2, 2], "the trail is trimmed to the file's length");

  // A bad value in the file is refused by its file key, with what is expected.
  for (const bad of ["0", "-1", ".nan", "2.5", "2000000", '"10"']) {
    write(`audit_trail_max_length: ${bad}\n`);
    assert.throws(
      () => resolveWorkerOptions([], {}, cwd, settingsOf(plugins)),
      (error: unknown) =>
        error instanceof ConfigError &&
        /^config\/tsq\.yml: audit_trail_max_length must be an integer from 1 to 1000000, got /.test(error.message),
      bad,
    );
  }
  // Where the plug-in does not run, its key is unknown: refused naming the key and the fix.
  write("audit_trail_max_length: 2\n");
  assert.throws(
    () => resolveWorkerOptions([], {}, cwd, settingsOf(builtinPlugins())),
    (error: unknown) =>
      error instanceof ConfigError &&
      /unknown key "audit_trail_max_length"; fix its spelling or remove it .*a plug-in's key is known only where that plug-in runs$/.test(
        error.message,
      ),
  );
});

test("the outside plug-in's fetch order runs after the plug-ins it names", async () => {
  const ran: string[] = [];
  class Tagged {
    perform(tag: string) {
      ran.push(tag);
    }
  }
  // Another plug-in that would put "default" first; auditTrail's `after` gives it the last word.
  const defaultFirst: Plugin = {
    name: "defaultFirst",
    fetch: { order: () => (queues) => [...queues].sort((a) => (a === "default" ? -1 : 1)) },
  };
  const client = new Client({ redis: handle.url, plugins: [] });
  await client.push({ class: "Tagged", args: ["default"], queue: "default" });
  await client.push({ class: "Tagged", args: ["audit"], queue: "audit" });
  await client.close();
  const launcher = testLauncher(handle.url, [Tagged], {
    concurrency: 1,
    queues: [
      { name: "audit", weight: 0 },
      { name: "default", weight: 0 },
    ],
    plugins: [auditTrail({ first: "audit", after: ["defaultFirst"] }), defaultFirst],
  });
  await launcher.start();
  await until(() => ran.length === 2);
  await launcher.stop();
  assert.deepEqual(ran, ["audit", "default"]);
});

test("docs/internals.md's \"Writing a feature\" shows the plug-in's files word for word", () => {
  const doc = readFileSync(join(ROOT, "docs/internals.md"), "utf8");
  const blocks = [...doc.matchAll(/<!-- example: (\S+) -->\n```\w+\n([\s\S]*?)```\n<!-- \/example -->/g)];
  assert.deepEqual(
    blocks.map((block) => block[1]),
    [
      "examples/plugins/auditTrail/plugin.ts",
      "examples/plugins/auditTrail/audit-append-1.lua",
      "examples/plugins/auditTrail/keys.ts",
      "examples/plugins/auditTrail/jobs.ts",
    ],
  );
  for (const [, path, text] of blocks) assert.equal(text, readFileSync(join(ROOT, path!), "utf8"), `${path} differs`);
});
