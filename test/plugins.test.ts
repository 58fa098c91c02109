/**
 * The plug-in seam: the built-in list's order is the chain order docs/internals.md states; plug-ins'
 * hooks run in list order on the worker and in reverse on the client; `plugins: []` is plain Sidekiq
 * OSS; two workers with different settings in one process stay apart.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { useRedis } from "./helpers/redis.js";
import { testLauncher } from "./helpers/context.js";
import type { ServerConfig } from "../src/server/serverConfig.js";
import { Client } from "../src/client/Client.js";
import { builtinPlugins } from "../src/plugins.js";
import { definePlugin, type Plugin } from "../src/server/plugin.js";
import type { JobPayload } from "../src/wire/payload.js";
import type { Next } from "../src/platform/Chain.js";
import { KeyedLimitServerMiddleware } from "../src/features/locks/enterprise-rate-limits/KeyedServerMiddleware.js";
import { ConcurrencyLimitServerMiddleware } from "../src/features/locks/gitlab-concurrency-limits/ServerMiddleware.js";
import { SujServerMiddleware } from "../src/features/locks/sidekiq-unique-jobs/ServerMiddleware.js";
import { UniqueServerMiddleware } from "../src/features/locks/enterprise-unique-jobs/ServerMiddleware.js";
import { DeduplicationServerMiddleware } from "../src/features/locks/gitlab-deduplication/ServerMiddleware.js";

const handle = useRedis();

async function until(check: () => Promise<boolean> | boolean, ms = 20_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error("timed out");
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** The list between the markers in docs/internals.md, one `name` per numbered line. */
function documentedOrder(): string[] {
  const doc = readFileSync(new URL("../../docs/internals.md", import.meta.url), "utf8");
  const block = /<!-- plugin-order -->([\s\S]*?)<!-- \/plugin-order -->/.exec(doc);
  assert.ok(block, "docs/internals.md has the plug-in order between <!-- plugin-order --> markers");
  return [...block[1]!.matchAll(/^\d+\. `([\w-]+)`/gm)].map((m) => m[1]!);
}

test("the built-in list is the order docs/internals.md states", () => {
  assert.deepEqual(
    builtinPlugins().map((p) => p.name),
    documentedOrder(),
  );
});

test("a worker's server chain is built from the list: plug-ins in list order, then the app's middleware", () => {
  const appMiddleware = async (_i: object, _j: JobPayload, _q: string, next: Next) => next();
  let registered: ServerConfig | undefined;
  const configure = (config: ServerConfig) => {
    registered = config;
    config.middleware.add(appMiddleware);
  };
  class Everything {
    static concurrencyLimit = 2;
    static limit = { key: () => "k", concurrency: 1 };
    static options = { uniqueFor: 60 };
    perform() {}
  }
  // A class is either unique or deduplicated, never both: a second class turns deduplication on.
  class Deduplicated {
    static idempotent = true;
    perform() {}
  }
  const launcher = testLauncher(handle.url, [Everything, Deduplicated], { configure });
  assert.deepEqual(launcher.ctx.serverMiddleware.list(), [
    KeyedLimitServerMiddleware,
    ConcurrencyLimitServerMiddleware,
    SujServerMiddleware,
    UniqueServerMiddleware,
    DeduplicationServerMiddleware,
    appMiddleware,
  ]);
  assert.equal(registered?.middleware.size, 1, "the app's registration is copied, never modified");
});

/** Three plug-ins that record where each hook ran. */
function recorders(log: string[]): Plugin[] {
  return ["A", "B", "C"].map((name) =>
    definePlugin({
      name,
      client: () => ({
        stamp: () => void log.push(`stamp ${name}`),
        middleware: async (_c: string, _j: JobPayload, _q: string, _r: unknown, next: Next) => {
          log.push(`push ${name}`);
          await next();
        },
      }),
      server: () => ({
        intercept: () => (log.push(`intercept ${name}`), false),
        around: async (run) => {
          log.push(`around ${name}`);
          await run();
        },
        middleware: {
          use: async (_i: object, _j: JobPayload, _q: string, next: Next) => {
            log.push(`run ${name}`);
            await next();
          },
        },
        aroundPerform: async (perform) => {
          log.push(`perform ${name}`);
          return perform();
        },
      }),
    }),
  );
}

test("hooks run in list order on the worker and in reverse on the client, with the app's middleware at both ends", async () => {
  const log: string[] = [];
  const plugins = recorders(log);
  const configure = (config: ServerConfig) =>
    config.middleware.add(async (_i: object, _j: JobPayload, _q: string, next: Next) => {
      log.push("run app");
      await next();
    });
  class Recorded {
    perform() {
      log.push("perform");
    }
  }
  const client = new Client({ redis: handle.url, plugins });
  client.middleware.add(async (_c: string, _j: JobPayload, _q: string, _r: unknown, next: Next) => {
    log.push("push app");
    await next();
  });
  await client.push({ class: "Recorded", args: [] });
  await client.close();
  assert.deepEqual(log.splice(0), ["stamp A", "stamp B", "stamp C", "push app", "push C", "push B", "push A"]);
  const launcher = testLauncher(handle.url, [Recorded], { plugins, configure });
  await launcher.start();
  await until(() => log.includes("perform"));
  await launcher.stop();
  assert.deepEqual(log, [
    "intercept A",
    "intercept B",
    "intercept C",
    "around A",
    "around B",
    "around C",
    "run A",
    "run B",
    "run C",
    "run app",
    "perform A",
    "perform B",
    "perform C",
    "perform",
  ]);
});

test("plugins: [] pushes and runs as plain Sidekiq OSS: no dedup drop, no correlation id, no batch hooks", async () => {
  class Idempotent {
    static idempotent = true;
    perform() {}
  }
  const plain = new Client({ redis: handle.url, plugins: [] });
  const featured = new Client({ redis: handle.url, plugins: builtinPlugins() });
  try {
    await plain.push({ class: Idempotent, args: [1] });
    await plain.push({ class: Idempotent, args: [1] });
    assert.equal(await handle.redis.llen("queue:default"), 2, "both pushed: no deduplication without the plug-in");
    const [raw] = await handle.redis.lrange("queue:default", 0, 0);
    assert.equal((JSON.parse(raw!) as JobPayload).idempotency_key, undefined);
    await handle.redis.del("queue:default");
    await featured.push({ class: Idempotent, args: [1] });
    await featured.push({ class: Idempotent, args: [1] });
    assert.equal(await handle.redis.llen("queue:default"), 1, "the built-ins drop the duplicate");
  } finally {
    await plain.close();
    await featured.close();
  }
  const launcher = testLauncher(handle.url, [Idempotent], { plugins: [] });
  assert.deepEqual(launcher.ctx.serverMiddleware.list(), []);
  assert.deepEqual(launcher.ctx.hooks, []);
});

test("two workers in one process with different settings and plug-ins do not affect each other", async () => {
  const ran: string[] = [];
  class Alpha {
    perform(tag: string) {
      ran.push(`alpha:${tag}`);
    }
  }
  class Beta {
    perform(tag: string) {
      ran.push(`beta:${tag}`);
    }
  }
  const log: string[] = [];
  const a = testLauncher(handle.url, [Alpha], { concurrency: 1, queues: [{ name: "a", weight: 1 }], plugins: [] });
  const b = testLauncher(handle.url, [Beta], {
    concurrency: 3,
    queues: [{ name: "b", weight: 1 }],
    plugins: recorders(log).slice(0, 1),
  });
  assert.notEqual(a.ctx.serverMiddleware, b.ctx.serverMiddleware);
  assert.notEqual(a.ctx.client, b.ctx.client);
  assert.equal(a.concurrency, 1);
  assert.equal(b.concurrency, 3);
  const client = new Client({ redis: handle.url, plugins: [] });
  await client.push({ class: "Alpha", args: ["1"], queue: "a" });
  await client.push({ class: "Beta", args: ["2"], queue: "b" });
  await client.close();
  await Promise.all([a.start(), b.start()]);
  await until(() => ran.length === 2);
  await a.stop();
  // The other worker goes on after the first stopped.
  const more = new Client({ redis: handle.url, plugins: [] });
  await more.push({ class: "Beta", args: ["3"], queue: "b" });
  await more.close();
  await until(() => ran.includes("beta:3"));
  await b.stop();
  assert.deepEqual(ran.sort(), ["alpha:1", "beta:2", "beta:3"]);
  assert.equal(log.filter((l) => l === "run A").length, 2, "only the worker given the plug-in ran its hooks");
});

test("a plug-in's services start after the first heartbeat and stop at shutdown; an intercept can take a job", async () => {
  const events: string[] = [];
  const plugin = definePlugin({
    name: "custom",
    server: (ctx) => ({
      services: [
        {
          name: "ticker",
          start: () => void events.push(`start ${ctx.identity === "" ? "?" : "identity"}`),
          stop: async () => void events.push("stop"),
        },
      ],
      intercept: (job, unit) =>
        job.args[0] === "take" ? (unit.acknowledge()?.then(() => true) ?? Promise.resolve(true)) : false,
    }),
  });
  const performed: unknown[] = [];
  class Taken {
    perform(arg: string) {
      performed.push(arg);
    }
  }
  const client = new Client({ redis: handle.url, plugins: [] });
  await client.push({ class: "Taken", args: ["take"] });
  await client.push({ class: "Taken", args: ["run"] });
  await client.close();
  const launcher = testLauncher(handle.url, [Taken], { plugins: [plugin] });
  await launcher.start();
  await until(() => performed.length === 1);
  await until(async () => (await handle.redis.llen("queue:default")) === 0);
  await launcher.stop();
  assert.deepEqual(performed, ["run"], "the intercepted job never performed");
  assert.deepEqual(events, ["start identity", "stop"]);
});
