/** Processor: server middleware, unknown classes, malformed payloads, stats and the job instance. */
import { test } from "node:test";
import assert from "node:assert/strict";
import { useRedis } from "../helpers/redis.js";
import { testLauncher } from "../helpers/context.js";
import type { ServerConfig } from "../../src/server/serverConfig.js";
import { Client } from "../../src/client/Client.js";
import type { JobPayload } from "../../src/wire/payload.js";

const handle = useRedis();

async function until(check: () => Promise<boolean> | boolean, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error("timed out");
    await new Promise((r) => setTimeout(r, 20));
  }
}

test("server middleware wraps perform, sees the instance, payload and queue; not calling next skips the job", async () => {
  const seen: string[] = [];
  const performed: string[] = [];
  class Guarded {
    jid = "";
    perform(tag: string) {
      performed.push(`${tag}:${this.jid}`);
    }
  }
  const configure = (config: ServerConfig) => {
    config.middleware.add(async (instance: object, job: JobPayload, queue: string, next: () => Promise<void>) => {
      seen.push(`${(instance as Guarded).constructor.name}/${job.args[0] as string}/${queue}`);
      if (job.args[0] !== "skip") await next();
    });
  };
  const launcher = testLauncher(handle.url, [Guarded], { configure });
  const client = new Client({ redis: handle.url });
  const jid = await client.push({ class: "Guarded", args: ["run"] });
  await client.push({ class: "Guarded", args: ["skip"] });
  await client.close();
  await launcher.start();
  await until(() => seen.length === 2);
  await launcher.stop();
  assert.deepEqual(seen.sort(), ["Guarded/run/default", "Guarded/skip/default"]);
  assert.deepEqual(performed, [`run:${jid}`], "the skipped job never performed");
  assert.equal(await handle.redis.zcard("retry"), 0, "a skipped job counts as done");
  assert.equal(await handle.redis.get("stat:processed"), "2");
});

test("an unknown class is retried as UnknownJobError; invalid JSON goes straight to dead; neither stops the worker", async () => {
  const died: string[] = [];
  const launcher = testLauncher(handle.url, [], {
    configure: (config) => config.deathHandlers.push((job) => void died.push(job.jid)),
  });
  const client = new Client({ redis: handle.url });
  await client.push({ class: "NobodyKnowsMe", args: [] });
  await client.push({ class: "AlsoUnknown", args: [], retry: 0 });
  await client.close();
  await handle.redis.lpush("queue:default", "{definitely not json");
  await launcher.start();
  await until(async () => (await handle.redis.zcard("retry")) === 1 && (await handle.redis.zcard("dead")) === 2);
  await launcher.stop();
  const [retried] = await handle.redis.zrange("retry", 0, -1);
  const job = JSON.parse(retried!) as JobPayload;
  assert.equal(job.error_class, "UnknownJobError");
  assert.match(job.error_message!, /no job class named "NobodyKnowsMe" is registered/);
  const dead = await handle.redis.zrange("dead", 0, -1);
  assert.ok(dead.includes("{definitely not json"), "the malformed text is kept as it was");
  assert.equal(died.length, 1, "death handlers run for the exhausted unknown job");
  assert.equal(await handle.redis.get("stat:failed"), "3");
});
