/**
 * ActiveJob argument (de)serialization beyond what Rails 6.1 itself writes: the Rails >= 7.1 forms
 * (BigDecimal, Range, TimeWithZone's time_zone), GlobalIDs, app serializers, and hostile input.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { deserializeArguments, ActiveJobDeserializationError } from "../../../src/features/activejob/deserialize.js";
import { serializeArguments } from "../../../src/features/activejob/serialize.js";
import {
  GlobalId,
  RubyBigDecimal,
  RubyObject,
  RubyRange,
  RubySymbol,
  RubyTime,
} from "../../../src/features/activejob/values.js";

/** Arguments as Rails 7.1+ writes them (see activejob/lib/active_job/serializers/*.rb). */
const RAILS_71 = [
  { _aj_serialized: "ActiveJob::Serializers::BigDecimalSerializer", value: "1.5" },
  { _aj_serialized: "ActiveJob::Serializers::RangeSerializer", begin: 1, end: 5, exclude_end: true },
  {
    _aj_serialized: "ActiveJob::Serializers::TimeWithZoneSerializer",
    value: "2024-01-02T12:00:00.000000000+09:00",
    time_zone: "Asia/Tokyo",
  },
  { _aj_globalid: "gid://shop/Admin%3A%3AUser/42" },
  { _aj_serialized: "MoneySerializer", amount: 250, currency: "EUR" },
  {
    _aj_serialized: "ActiveJob::Serializers::RangeSerializer",
    begin: { _aj_serialized: "ActiveJob::Serializers::SymbolSerializer", value: "a" },
    end: null,
    exclude_end: false,
  },
];

test("Rails 7.1 forms, GlobalIDs and unknown serializers read as documented and write back unchanged", () => {
  const { args, keywords } = deserializeArguments(RAILS_71);
  assert.equal(keywords, false);
  const [decimal, range, zoned, gid, money, open] = args;
  assert.deepEqual(decimal, new RubyBigDecimal("1.5"));
  assert.deepEqual(range, new RubyRange(1, 5, true));
  assert.deepEqual(
    zoned,
    new RubyTime("2024-01-02T12:00:00.000000000+09:00", "ActiveSupport::TimeWithZone", "Asia/Tokyo"),
  );
  assert.ok(gid instanceof GlobalId);
  assert.equal(gid.app, "shop");
  assert.equal(gid.modelName, "Admin::User");
  assert.equal(gid.modelId, "42");
  assert.deepEqual(money, new RubyObject("MoneySerializer", { amount: 250, currency: "EUR" }));
  assert.deepEqual(open, new RubyRange(new RubySymbol("a"), null, false));
  assert.deepEqual(serializeArguments(args, false, "test"), RAILS_71, "a value read from Rails writes back as it was");
});

test("a payload's keys never reach a prototype, and markers are dropped at every depth", () => {
  const hostile = JSON.parse(
    '[{"__proto__":{"polluted":true},"constructor":1,"inner":{"k":1,"_aj_symbol_keys":["k"]},"_aj_symbol_keys":[]}]',
  ) as unknown[];
  const { args } = deserializeArguments(hostile);
  const [hash] = args as Record<string, unknown>[];
  assert.equal(Object.getPrototypeOf(hash), Object.prototype);
  assert.deepEqual(Object.keys(hash!), ["__proto__", "constructor", "inner"]);
  assert.equal((hash as { polluted?: unknown }).polluted, undefined);
  assert.deepEqual(hash!.inner, { k: 1 });
  assert.equal(({} as { polluted?: unknown }).polluted, undefined);
  const written = serializeArguments(args, false, "test") as Record<string, unknown>[];
  assert.deepEqual(Object.keys(written[0]!), ["__proto__", "constructor", "inner", "_aj_symbol_keys"]);
});

test("malformed known serializers are errors naming where they are", () => {
  const bad = (value: unknown, pattern: RegExp) =>
    assert.throws(
      () => deserializeArguments([value]),
      (error: Error) => {
        assert.ok(error instanceof ActiveJobDeserializationError);
        assert.match(error.message, pattern);
        return true;
      },
    );
  bad(
    { _aj_serialized: "ActiveJob::Serializers::TimeSerializer", value: "yesterday" },
    /arguments\[0\].*is not ISO 8601/,
  );
  bad({ _aj_serialized: 5 }, /arguments\[0\]\._aj_serialized is not a string/);
  bad(
    { _aj_serialized: "ActiveJob::Serializers::DurationSerializer", value: 1, parts: [["fortnights", 1]] },
    /parts has an entry that is not \[unit, number\]/,
  );
  assert.throws(() => deserializeArguments({ not: "an array" }), /arguments is not an array/);
});

test("keyword arguments: the trailing hash's keys are listed; any other position is an ordinary hash", () => {
  const written = serializeArguments(["bob", { count: 3 }], true, "test");
  assert.deepEqual(written, ["bob", { count: 3, _aj_ruby2_keywords: ["count"] }]);
  const { args, keywords } = deserializeArguments(written);
  assert.deepEqual(args, ["bob", { count: 3 }]);
  assert.equal(keywords, true);
  assert.deepEqual(serializeArguments([{ count: 3 }, "x"], false, "test"), [{ count: 3, _aj_symbol_keys: [] }, "x"]);
});
