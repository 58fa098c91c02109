/**
 * Unblocker ends a fetch waiting in Redis from another connection, and the fetch's connection stays
 * usable: a job pushed afterwards waits in its queue instead of being handed to a fetch nobody reads.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { performance } from "node:perf_hooks";
import { useRedis } from "../../helpers/redis.js";
import { connect } from "../../../src/platform/redis/connection.js";
import { Unblocker } from "../../../src/platform/redis/Unblocker.js";
import { eventually } from "../../helpers/tsqProcess.js";

const handle = useRedis();

test("a BLMPOP waiting 30 s returns empty at once when unblocked, and the next push stays queued", async (t) => {
  const blocking = connect(handle.url, { blocking: true });
  const control = connect(handle.url);
  t.after(() => {
    blocking.disconnect();
    control.disconnect();
  });
  const unblocker = new Unblocker(blocking, control);
  await eventually(() => Promise.resolve(unblocker.ready), 5000, "the blocking connection's id is known");
  assert.equal(await unblocker.unblock(), false, "nothing waits yet: nothing is unblocked");

  const started = performance.now();
  const waiting = blocking.blmpop(30, 1, "queue:unblock", "RIGHT", "COUNT", 5);
  await eventually(async () => (await unblocker.unblock()) || false, 5000, "the wait was ended");
  assert.equal(await waiting, null, "the fetch returned as if timed out");
  assert.ok(performance.now() - started < 5000, "well before its 30 s timeout");

  await control.rpush("queue:unblock", "job");
  assert.deepEqual(await control.lrange("queue:unblock", 0, -1), ["job"], "the pushed job waits in its queue");
  assert.equal(await blocking.ping(), "PONG", "the unblocked connection is still open");
});

test("without a known id (connection not up) unblock does nothing and says so", async () => {
  const control = connect(handle.url);
  const blocking = connect("redis://127.0.0.1:1", { blocking: true });
  try {
    const unblocker = new Unblocker(blocking, control);
    assert.equal(unblocker.ready, false);
    assert.equal(await unblocker.unblock(), false);
  } finally {
    blocking.disconnect();
    control.disconnect();
  }
});
