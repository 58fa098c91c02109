/**
 * A worker with `sidekiq_version: auto` follows the Ruby processes in `processes` from beat to beat:
 * it logs what it writes at start and when that changes, files its execution metrics in the layout
 * read, and writes timestamps (retries' `failed_at` here) in the format read. Ruby's records are
 * written as their heartbeats write them (the live tests in test/interop run real Ruby 7.3 and 8.0).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { Writable } from "node:stream";
import { pino } from "pino";
import { Client } from "../../src/client/Client.js";
import { Launcher } from "../../src/server/Launcher.js";
import { Registry } from "../../src/server/Registry.js";
import { sidekiq7MinuteBucket } from "../../src/wire/executionLayout.js";
import { PROCESSES, RETRY } from "../../src/wire/keys.js";
import { useRedis } from "../helpers/redis.js";
import { testOptions } from "../helpers/options.js";

const handle = useRedis();

class Quick {
  perform() {}
}
class Fails {
  static retryIn(): number {
    return 3600;
  }
  perform() {
    throw new Error("fails on purpose");
  }
}

async function until<T>(check: () => Promise<T | undefined> | T | undefined, what: string, ms = 10_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out: ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

async function rubyProcess(identity: string, version: string): Promise<void> {
  const info = JSON.stringify({ hostname: "rb", started_at: 1.5, pid: 9, identity, version, embedded: false });
  await handle.redis.multi().sadd(PROCESSES, identity).hset(identity, "info", info, "beat", "1.5").exec();
}

test("auto: logged at start and at each change; metrics keys and timestamps follow Ruby 7.3, then Ruby 8.0", async (t) => {
  const lines: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const text of chunk.toString().split("\n"))
        if (text) lines.push(JSON.parse(text) as Record<string, unknown>);
      done();
    },
  });
  const registry = new Registry();
  registry.register(Quick);
  registry.register(Fails);
  await rubyProcess("rb:9:seven", "7.3.10");
  const launcher = new Launcher(testOptions(handle.url, { heartbeatInterval: 0.2 }), registry, {
    logger: pino({ level: "info" }, sink),
    plugins: [],
  });
  const client = new Client({ redis: handle.url, plugins: [] });
  t.after(async () => {
    await launcher.stop();
    await client.close();
  });
  await launcher.start();
  const decisions = () => lines.filter((line) => line.sidekiq_version === "auto");
  assert.deepEqual(
    decisions().map((line) => [line.ruby_sidekiq, line.timestamps, line.metrics_layout]),
    [[{ "7.3.10": 1 }, "seconds", "sidekiq7"]],
    "logged once at start, before the first fetch",
  );
  await client.push({ class: "Quick", args: [] });
  await client.push({ class: "Fails", args: [] });
  const sevenKey = await until(async () => {
    const keys = await handle.redis.keys("j|*");
    return keys.length > 0 ? keys : undefined;
  }, "the first metrics flush");
  const now = new Date();
  assert.ok(
    sevenKey.every((key) => /^j\|\d{8}\|\d{1,2}:\d{1,2}$/.test(key)),
    `only Sidekiq 7's minute keys (no rollup): ${sevenKey.join(", ")} (now ${sidekiq7MinuteBucket(now)})`,
  );
  const [retry] = await until(async () => {
    const entries = await handle.redis.zrange(RETRY, 0, -1);
    return entries.length === 1 ? entries : undefined;
  }, "the retry");
  assert.match(retry!, /"failed_at":\d{10}\.\d+[,}]/, "7.3 reads float seconds");

  // The Ruby fleet is upgraded: the 7.3 process leaves, an 8.0 one arrives.
  await handle.redis.multi().srem(PROCESSES, "rb:9:seven").del("rb:9:seven").del(RETRY).exec();
  await rubyProcess("rb:10:eight", "8.0.10");
  await until(() => (decisions().length === 2 ? true : undefined), "the change logged");
  assert.deepEqual(
    [decisions()[1]!.ruby_sidekiq, decisions()[1]!.timestamps, decisions()[1]!.metrics_layout],
    [{ "8.0.10": 1 }, "milliseconds", "sidekiq8"],
  );
  assert.match(String(decisions()[1]!.msg), /^writing integer-millisecond timestamps and Sidekiq 8's/);
  await client.push({ class: "Fails", args: [] });
  const [retry8] = await until(async () => {
    const entries = await handle.redis.zrange(RETRY, 0, -1);
    return entries.length === 1 ? entries : undefined;
  }, "the retry after the change");
  assert.match(retry8!, /"failed_at":\d{13}[,}]/, "8.0 reads integer milliseconds");
  const eight = await until(async () => {
    const keys = (await handle.redis.keys("j|*")).filter((key) => /^j\|\d{6}\|/.test(key));
    return keys.length >= 2 ? keys.sort() : undefined;
  }, "a flush in Sidekiq 8's layout");
  // A flush writes the minute `j|yymmdd|H:MM` and its 10-minute rollup `j|yymmdd|H:M`.
  assert.ok(
    eight.some((key) => /^j\|\d{6}\|\d{1,2}:\d\d$/.test(key)),
    eight.join(", "),
  );
  assert.ok(
    eight.some((key) => /^j\|\d{6}\|\d{1,2}:\d$/.test(key)),
    eight.join(", "),
  );
  assert.equal(decisions().length, 2, "no other change logged");
});
