/**
 * A Redis that is not there: a push fails after the client's connectTimeout with the host and the
 * reason (never a password) and writes nothing; a Redis that comes up within it takes the push; a
 * worker whose first connection never succeeded says "cannot reach", not "connection lost".
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { Client } from "../../src/client/Client.js";
import { RedisUnreachableError } from "../../src/wire/errors.js";
import { freePort, startRedisServer } from "../helpers/redis.js";
import { startTsq, TEST_JOBS } from "../helpers/tsqProcess.js";
import { connect } from "../../src/platform/redis/connection.js";

test("a push to a Redis nobody answers fails after connectTimeout, naming the host, without the password", async () => {
  const port = await freePort();
  const client = new Client({ redis: `redis://:s3cret-pass@127.0.0.1:${port}/0`, connectTimeout: 1, plugins: [] });
  const started = performance.now();
  const failure = await client.push({ class: "HardJob", args: [1] }).then(
    () => assert.fail("the push must not succeed"),
    (error: unknown) => error,
  );
  const waited = performance.now() - started;
  await client.close();
  assert.ok(failure instanceof RedisUnreachableError, String(failure));
  assert.match(failure.message, new RegExp(`cannot reach Redis at 127\\.0\\.0\\.1:${port}: .*ECONNREFUSED`));
  assert.match(failure.message, /nothing was written/);
  assert.ok(!failure.message.includes("s3cret-pass"));
  // At least the timeout; well before ioredis's own retries would have ended (never, by design).
  assert.ok(waited >= 950 && waited < 30_000, `waited ${Math.round(waited)} ms`);
  // A lazy client (the default one is) connects at its first push and gets the same answer.
  const lazy = new Client({ redis: `redis://127.0.0.1:${port}/0`, connectTimeout: 1, lazyConnect: true, plugins: [] });
  await assert.rejects(lazy.push({ class: "HardJob", args: [1] }), RedisUnreachableError);
  await lazy.close();
});

test("a Redis that comes up within connectTimeout takes the push; bad TSQ_CONNECT_TIMEOUT is named", async () => {
  const port = await freePort();
  const client = new Client({ redis: `redis://127.0.0.1:${port}/0`, connectTimeout: 60, plugins: [] });
  const pushed = client.push({ class: "HardJob", args: [2], queue: "late" });
  const server = await startRedisServer(port);
  try {
    const jid = await pushed;
    const check = connect(`redis://127.0.0.1:${port}/0`);
    const stored = await check.lrange("queue:late", 0, -1);
    await check.quit();
    assert.equal(stored.length, 1);
    assert.ok(stored[0]!.includes(jid!));
  } finally {
    await client.close();
    server.child.kill("SIGKILL");
  }
  const saved = process.env.TSQ_CONNECT_TIMEOUT;
  process.env.TSQ_CONNECT_TIMEOUT = "soon";
  try {
    assert.throws(
      () => new Client({ redis: "redis://127.0.0.1:1/0" }),
      /TSQ_CONNECT_TIMEOUT \("soon"\) must be seconds/,
    );
  } finally {
    if (saved === undefined) delete process.env.TSQ_CONNECT_TIMEOUT;
    else process.env.TSQ_CONNECT_TIMEOUT = saved;
  }
});

test("a worker whose first connection never succeeds says where it cannot reach, not that it was lost", async () => {
  const port = await freePort();
  const worker = startTsq(["-r", TEST_JOBS], { REDIS_URL: `redis://:s3cret-pass@127.0.0.1:${port}/0` });
  try {
    const line = await worker.waitForLine((l) => String(l.msg).startsWith("cannot reach Redis"), 30_000);
    assert.match(String(line.msg), new RegExp(`cannot reach Redis at 127\\.0\\.0\\.1:${port}: .*ECONNREFUSED`));
    assert.doesNotMatch(worker.output(), /connection lost/);
    assert.ok(!worker.output().includes("s3cret-pass"));
  } finally {
    await worker.stop(2000);
  }
});
