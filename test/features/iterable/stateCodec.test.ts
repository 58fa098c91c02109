/**
 * The iterable state codec against a real Redis: every state it writes reads back equal, and what it
 * cannot keep exactly (1e21 executions, NaN cursors, integers past 2^53) is refused where it is
 * written or read, naming the field, never written in a form its own reader refuses.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { useRedis } from "../../helpers/redis.js";
import { flushState, loadState } from "../../../src/features/iterable/state.js";
import { MAX_CURSOR_BYTES } from "../../../src/features/iterable/stateCodec.js";
import { IterationStateError } from "../../../src/features/iterable/errors.js";
import type { JsonValue } from "../../../src/wire/payload.js";

const handle = useRedis();

function refused(pattern: RegExp): (error: Error) => boolean {
  return (error) => {
    assert.ok(error instanceof IterationStateError, `${error.name}: ${error.message}`);
    assert.match(error.message, pattern);
    return true;
  };
}

test("extreme values that can be kept round-trip through Redis unchanged", async () => {
  const cursors: JsonValue[] = [
    null,
    0,
    -0,
    Number.MAX_SAFE_INTEGER,
    -Number.MAX_SAFE_INTEGER,
    1.5e-300,
    0.1,
    5e-324,
    "",
    "x".repeat(MAX_CURSOR_BYTES - 2),
    "héllo ✓ 𝄞 \u0000 \ud800 \u2028",
    JSON.parse(`{"__proto__":1,"constructor":[1,{"toString":"a"}]}`) as JsonValue,
    [[[[["deep"]]]]],
  ];
  const runtimes = [0, -0, 1e-9, 1e21, 123456.789];
  for (const [i, cursor] of cursors.entries()) {
    const jid = `round${i}`;
    const state = {
      executions: i === 0 ? Number.MAX_SAFE_INTEGER : i,
      cursor,
      runtime: runtimes[i % runtimes.length]!,
    };
    await flushState(handle.redis, jid, state);
    const loaded = await loadState(handle.redis, jid);
    assert.ok(loaded, jid);
    assert.equal(loaded.executions, state.executions);
    assert.deepEqual(loaded.cursor, typeof cursor === "number" && Object.is(cursor, -0) ? 0 : cursor);
    assert.equal(loaded.runtime, Object.is(state.runtime, -0) ? 0 : state.runtime);
  }
});

test("an executions count of 1e21 in Redis is refused on load, naming the field", async () => {
  await handle.redis.hset("it-big", { ex: "1000000000000000000000", c: "null", rt: "1" });
  await assert.rejects(loadState(handle.redis, "big"), refused(/field "ex" of it-big is beyond 9007199254740991/));
  await handle.redis.hset("it-big2", { ex: String(Number.MAX_SAFE_INTEGER + 2), c: "null", rt: "1" });
  await assert.rejects(loadState(handle.redis, "big2"), refused(/field "ex"/));
});

test("a state the reader would refuse is never written", async () => {
  const write = (executions: number, cursor: unknown, runtime = 1) =>
    flushState(handle.redis, "w", { executions, cursor: cursor as JsonValue, runtime });
  await assert.rejects(write(1e21, null), refused(/cannot save field "ex" of it-w/));
  await assert.rejects(write(Number.MAX_SAFE_INTEGER + 2, null), refused(/"ex"/));
  await assert.rejects(write(-1, null), refused(/"ex"/));
  await assert.rejects(write(1, null, Number.NaN), refused(/"rt"/));
  await assert.rejects(write(1, Number.NaN), refused(/NaN at cursor, which JSON cannot keep/));
  await assert.rejects(write(1, [1, Infinity]), refused(/Infinity at cursor\[1\]/));
  await assert.rejects(write(1, { id: 1e21 }), refused(/1e\+21 at cursor\.id, an integer beyond/));
  await assert.rejects(write(1, Number.MAX_SAFE_INTEGER + 2), refused(/an integer beyond/));
  await assert.rejects(write(1, new Date(0)), refused(/holds a Date at cursor/));
  await assert.rejects(write(1, [undefined]), refused(/holds undefined at cursor\[0\]/));
  await assert.rejects(write(1, 10n), refused(/holds bigint/));
  await assert.rejects(write(1, "x".repeat(MAX_CURSOR_BYTES)), refused(/bytes of JSON; at most 1048576/));
  assert.equal(await handle.redis.exists("it-w"), 0, "nothing was written");
});

test("a cursor in Redis that JavaScript cannot keep exactly is refused on load", async () => {
  await handle.redis.hset("it-c", { ex: "1", c: "[1, 12345678901234567890]", rt: "1" });
  await assert.rejects(loadState(handle.redis, "c"), refused(/field "c" of it-c holds .* an integer beyond/));
});
