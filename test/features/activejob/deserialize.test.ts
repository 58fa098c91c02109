/**
 * Hostile ActiveJob payloads: serializer names that are Object.prototype members, and arguments nested
 * thousands deep. Each is a clear ActiveJobDeserializationError (or an unknown serializer), and a worker
 * records it as the job's failure.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { useRedis } from "../../helpers/redis.js";
import { testLauncher } from "../../helpers/context.js";
import { Job } from "../../../src/client/Job.js";
import {
  ActiveJobDeserializationError,
  MAX_DEPTH,
  deserializeArguments,
} from "../../../src/features/activejob/deserialize.js";
import { serializeArguments } from "../../../src/features/activejob/serialize.js";
import { LEGACY_WRAPPER } from "../../../src/features/activejob/wrapper.js";
import { RubyObject, RubyTime } from "../../../src/features/activejob/values.js";
import { ArgumentError } from "../../../src/wire/errors.js";
import { builtinPlugins } from "../../../src/plugins.js";

const redis = useRedis();

/** `[[[…"x"…]]]`, `depth` arrays deep, built as text (JSON.parse has no depth limit). */
function nested(depth: number): unknown {
  return JSON.parse(`${"[".repeat(depth)}"x"${"]".repeat(depth)}`) as unknown;
}

test("serializer names that are Object.prototype members are unknown serializers, not prototype lookups", () => {
  for (const name of ["constructor", "toString", "__proto__", "hasOwnProperty", "valueOf", "isPrototypeOf"]) {
    const payload = JSON.parse(`[{"_aj_serialized":${JSON.stringify(name)},"value":"2024-01-02T00:00:00Z"}]`);
    const [value] = deserializeArguments(payload).args;
    assert.ok(!(value instanceof RubyTime), `${name} must not read as a time`);
    assert.ok(value instanceof RubyObject, `${name} is an app serializer tsq does not know`);
    assert.equal(value.serializer, name);
    assert.deepEqual({ ...value.fields }, { value: "2024-01-02T00:00:00Z" });
  }
});

test("arguments nested deeper than MAX_DEPTH are a clear error, at 3,000 and 5,000 levels too", () => {
  assert.equal(MAX_DEPTH, 100);
  assert.deepEqual(deserializeArguments([nested(MAX_DEPTH)]).args, [nested(MAX_DEPTH)]);
  for (const depth of [MAX_DEPTH + 1, 3_000, 5_000, 100_000]) {
    assert.throws(
      () => deserializeArguments([nested(depth)]),
      (error: Error) => {
        assert.ok(error instanceof ActiveJobDeserializationError, `${depth}: ${error.name}: ${error.message}`);
        assert.match(error.message, /nested more than 100 arrays or hashes deep/);
        assert.ok(error.message.length < 400, "the message stays short");
        return true;
      },
    );
  }
});

test("performLater's serializer refuses what the reader would refuse, before the stack runs out", () => {
  let deep: unknown = "x";
  for (let i = 0; i < 5_000; i++) deep = { inner: deep };
  assert.throws(
    () => serializeArguments([deep], false, "DeepJob"),
    (error: Error) =>
      error instanceof ArgumentError && /nested more than 100 arrays or objects deep/.test(error.message),
  );
});

test("a worker records a 5,000-deep ActiveJob as a failure with ActiveJobDeserializationError", async () => {
  let ran = 0;
  class DeepJob extends Job {
    perform(): void {
      ran++;
    }
  }
  for (const depth of [3_000, 5_000]) {
    const jid = `deep${depth}`;
    const job = {
      class: LEGACY_WRAPPER,
      wrapped: "DeepJob",
      queue: "default",
      jid,
      retry: true,
      created_at: Date.now() / 1000,
      enqueued_at: Date.now() / 1000,
      args: [{ job_class: "DeepJob", job_id: jid, arguments: "DEEP" }],
    };
    // Written as text: the nesting is made by hand, as a hostile writer would.
    const text = JSON.stringify(job).replace('"DEEP"', () => `[${"[".repeat(depth)}"x"${"]".repeat(depth)}]`);
    await redis.redis.lpush("queue:default", text);
  }
  await redis.redis.sadd("queues", "default");
  const launcher = testLauncher(redis.url, [DeepJob], { concurrency: 2, plugins: builtinPlugins() });
  await launcher.start();
  try {
    const deadline = Date.now() + 30_000;
    while ((await redis.redis.zcard("retry")) < 2) {
      if (Date.now() > deadline) throw new Error("the jobs' failures were not recorded in the retry set");
      await new Promise((r) => setTimeout(r, 50));
    }
  } finally {
    await launcher.stop();
  }
  assert.equal(ran, 0);
  const retries = (await redis.redis.zrange("retry", 0, -1)).map((text) => JSON.parse(text) as Record<string, unknown>);
  for (const retry of retries) {
    assert.equal(retry.error_class, "ActiveJobDeserializationError");
    assert.match(String(retry.error_message), /nested more than 100/);
  }
});
