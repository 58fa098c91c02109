import { describe, test, afterEach } from "node:test";
import assert from "node:assert/strict";
import { verifyStrictArgs } from "../../src/client/strictArgs.js";
import { Client } from "../../src/client/Client.js";
import { ArgumentError, PayloadTooLargeError } from "../../src/wire/errors.js";
import { useRedis } from "../helpers/redis.js";

const HINT =
  "job arguments must be JSON-native: string, finite number, boolean, null, or arrays and plain objects of those";

/** Asserts that verifyStrictArgs rejects `args` with exactly `<problem>; <HINT>`. */
function rejects(args: unknown, problem: string): void {
  assert.throws(
    () => verifyStrictArgs(args),
    (error: unknown) => {
      assert.ok(error instanceof ArgumentError, `expected ArgumentError, got ${String(error)}`);
      assert.equal(error.message, `${problem}; ${HINT}`);
      return true;
    },
  );
}

class Foo {
  x = 1;
}

describe("verifyStrictArgs rejects", () => {
  test("undefined", () => rejects([undefined], "args[0] is undefined"));
  test("NaN", () => rejects([1, NaN], "args[1] is NaN"));
  test("Infinity and -Infinity", () => {
    rejects([Infinity], "args[0] is Infinity");
    rejects([{ n: -Infinity }], "args[0].n is -Infinity");
  });
  test("BigInt", () => rejects([10n], "args[0] is a BigInt (pass it as a string)"));
  test("Symbol", () => rejects([Symbol("s")], "args[0] is a Symbol"));
  test("function", () => rejects([() => 1], "args[0] is a function"));
  test("Date, naming the path", () => {
    rejects(["x", { when: new Date(0) }], "args[1].when is a Date (pass date.toISOString() or epoch seconds)");
    assert.throws(() => verifyStrictArgs(["x", { when: new Date() }]), /args\[1\]\.when is a Date/);
  });
  test("Map", () => rejects([new Map([["a", 1]])], "args[0] is a Map (pass Object.fromEntries(map))"));
  test("Set", () => rejects([new Set([1])], "args[0] is a Set (pass an array)"));
  test("RegExp", () => rejects([/x/], "args[0] is a RegExp"));
  test("Buffer, typed arrays and ArrayBuffer", () => {
    rejects([Buffer.from("hi")], "args[0] is binary data (pass base64 text)");
    rejects([new Uint8Array(2)], "args[0] is binary data (pass base64 text)");
    rejects([new ArrayBuffer(2)], "args[0] is binary data (pass base64 text)");
  });
  test("class instance", () => {
    rejects([new Foo()], "args[0] is an instance of Foo (pass a plain object)");
    rejects([new Error("boom")], "args[0] is an instance of Error (pass a plain object)");
  });
  test("circular reference", () => {
    const a: Record<string, unknown> = { x: 1 };
    a.self = a;
    rejects([a], "args[0].self is a circular reference");
    const list: unknown[] = [1];
    list.push(list);
    rejects([list], "args[0][1] is a circular reference");
  });
  test("sparse array hole", () => {
    // eslint-disable-next-line no-sparse-arrays
    rejects([[1, , 3]], "args[0][1] is a hole in a sparse array (undefined)");
    rejects(new Array<unknown>(2), "args[0] is a hole in a sparse array (undefined)");
  });
  test("symbol keys", () => rejects([{ a: 1, [Symbol("k")]: 2 }], "args[0] has Symbol keys"));
  test("nested path with a quoted key", () => {
    rejects([{ items: [{}, {}, { "a b": undefined }] }], 'args[0].items[2]["a b"] is undefined');
  });
  test("a custom root path", () => {
    assert.throws(
      () => verifyStrictArgs(new Date(), "tags"),
      new ArgumentError(`tags is a Date (pass date.toISOString() or epoch seconds); ${HINT}`),
    );
  });
});

describe("verifyStrictArgs accepts", () => {
  test("JSON-native values", () => {
    verifyStrictArgs([]);
    verifyStrictArgs(["s", "", 0, -1.5, 1e300, Number.MAX_SAFE_INTEGER, true, false, null]);
    verifyStrictArgs([[], {}, [[["deep"]]], { a: { b: [1, { c: null }] } }]);
  });
  test("objects without a prototype", () => {
    const bare = Object.create(null) as Record<string, unknown>;
    bare.k = "v";
    bare.nested = Object.create(null) as object;
    verifyStrictArgs([bare]);
  });
  test("the same object twice (shared, not circular)", () => {
    const shared = { x: 1 };
    verifyStrictArgs([shared, shared, [shared], { a: shared, b: shared }]);
  });
  test("keys that need quoting", () => {
    verifyStrictArgs([{ "a b": 1, "": 2, "1": 3, ü: 4 }]);
  });
});

describe("Client.push and strict args", () => {
  const redis = useRedis();
  let client: Client | undefined;
  const useClient = (): Client => (client ??= new Client({ redis: redis.url }));
  // Closed after each test, while the private Redis is surely up: useRedis()'s `after` stops it first.
  afterEach(async () => {
    await client?.close();
    client = undefined;
  });

  const bad: [string, unknown, RegExp][] = [
    ["undefined", undefined, /^args\[0\] is undefined;/],
    ["NaN", NaN, /^args\[0\] is NaN;/],
    ["Infinity", Infinity, /^args\[0\] is Infinity;/],
    ["BigInt", 1n, /^args\[0\] is a BigInt/],
    ["Symbol", Symbol("x"), /^args\[0\] is a Symbol;/],
    ["function", () => 1, /^args\[0\] is a function;/],
    ["Date", new Date(), /^args\[0\] is a Date/],
    ["Map", new Map(), /^args\[0\] is a Map/],
    ["Set", new Set(), /^args\[0\] is a Set/],
    ["RegExp", /x/, /^args\[0\] is a RegExp;/],
    ["Buffer", Buffer.from("x"), /^args\[0\] is binary data/],
    ["class instance", new Foo(), /^args\[0\] is an instance of Foo/],
  ];

  test("rejects every non-JSON-native argument before anything reaches Redis", async () => {
    const client = useClient();
    for (const [label, value, message] of bad) {
      await assert.rejects(client.push({ class: "StrictJob", args: [value] }), (error: unknown) => {
        assert.ok(error instanceof ArgumentError, label);
        assert.match(error.message, message, label);
        return true;
      });
      await assert.rejects(
        client.push({ class: "StrictJob", args: [value], at: Date.now() / 1000 + 60 }),
        ArgumentError,
        label,
      );
      await assert.rejects(client.pushBulk({ class: "StrictJob", args: [[1], [value]] }), ArgumentError, label);
    }
    assert.equal(await redis.redis.dbsize(), 0);
  });

  test("checks option fields too, naming the field", async () => {
    const client = useClient();
    await assert.rejects(
      client.push({ class: "StrictJob", args: [], tags: [new Date()] }),
      /^ArgumentError: tags\[0\] is a Date/,
    );
    await assert.rejects(
      client.push({ class: "StrictJob", args: [], custom: { when: 1n } }),
      /^ArgumentError: custom\.when is a BigInt/,
    );
    assert.equal(await redis.redis.dbsize(), 0);
  });

  test("runs after client middleware, so middleware may make arguments JSON-native", async () => {
    const client = useClient();
    const fixer = (
      _class: string,
      job: { args: unknown[] },
      _queue: string,
      _redis: unknown,
      next: () => Promise<void>,
    ) => {
      job.args = job.args.map((a) => (a instanceof Date ? a.toISOString() : a));
      return next();
    };
    client.middleware.add(fixer);
    const jid = await client.push({ class: "StrictJob", args: [new Date(0)] });
    assert.ok(jid);
    const [raw] = await redis.redis.lrange("queue:default", 0, -1);
    assert.deepEqual((JSON.parse(raw!) as { args: unknown[] }).args, ["1970-01-01T00:00:00.000Z"]);
  });

  test("a payload over maxPayloadBytes throws PayloadTooLargeError and writes nothing", async () => {
    const small = new Client({ redis: redis.redis, maxPayloadBytes: 1024 });
    const big = "x".repeat(2048);
    await assert.rejects(
      small.push({ class: "BigJob", args: [big], jid: "0123456789abcdef01234567" }),
      (error: unknown) => {
        assert.ok(error instanceof PayloadTooLargeError);
        assert.equal(error.name, "PayloadTooLargeError");
        assert.match(
          error.message,
          /^job BigJob \(jid 0123456789abcdef01234567\) is 2\d{3} bytes, over the limit of 1024 bytes \(maxPayloadBytes\);/,
        );
        assert.match(error.message, /store large data elsewhere and pass a reference/);
        return true;
      },
    );
    await assert.rejects(
      small.push({ class: "BigJob", args: [big], at: Date.now() / 1000 + 60 }),
      PayloadTooLargeError,
    );
    // One oversized job in a bulk push: nothing of that slice is written.
    await assert.rejects(small.pushBulk({ class: "BigJob", args: [["ok"], [big]] }), PayloadTooLargeError);
    assert.equal(await redis.redis.dbsize(), 0);
    // Just under the limit is fine.
    assert.ok(await small.push({ class: "BigJob", args: ["x".repeat(700)] }));
    await small.close();
  });

  test("the default limit is 5 MB and the message gives exact bytes and MB", async (t) => {
    // Compression off: 5 MB of "x" would deflate to a few KB (test/payloadSize covers the compressed case).
    const client = new Client({ redis: redis.url, compressThresholdBytes: 0 });
    t.after(() => client.close());
    const big = "x".repeat(5 * 1024 * 1024);
    await assert.rejects(
      client.push({ class: "BigJob", args: [big] }),
      /is 524\d{4} bytes \(5\.00 MB\), over the limit of 5242880 bytes \(5\.00 MB\) \(maxPayloadBytes\)/,
    );
    assert.equal(await redis.redis.dbsize(), 0);
  });
});
