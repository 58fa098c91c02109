import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { formatSeconds, formatTimestampJson, nowSeconds, nowStamp, toEpochSeconds } from "../../src/wire/timestamps.js";

describe("nowStamp", () => {
  test("milliseconds: an integer close to Date.now()", () => {
    const before = Date.now();
    const ms = nowStamp("milliseconds");
    assert.ok(Number.isInteger(ms));
    assert.ok(ms >= before && ms <= Date.now());
  });
  test("seconds: float epoch seconds with microsecond precision", () => {
    const before = Date.now() / 1000;
    const s = nowStamp("seconds");
    assert.ok(Math.abs(s - before) < 1, `${s} vs ${before}`);
    assert.ok((String(s).split(".")[1] ?? "").length <= 6, `${s} has at most six decimals`);
    assert.ok(Math.abs(nowSeconds() - Date.now() / 1000) < 1);
  });
});

describe("toEpochSeconds", () => {
  test("float seconds pass through", () => {
    assert.equal(toEpochSeconds(1712345678.123456), 1712345678.123456);
  });
  test("integral seconds (a Ruby 1712345678.0 after JSON.parse) stay seconds", () => {
    assert.equal(toEpochSeconds(1712345678), 1712345678);
  });
  test("integer milliseconds (Sidekiq 8) become seconds", () => {
    assert.equal(toEpochSeconds(1712345678123), 1712345678.123);
    assert.equal(toEpochSeconds(1712345678000), 1712345678);
  });
  test("numeric strings, as Redis returns scores", () => {
    assert.equal(toEpochSeconds("1712345678.25"), 1712345678.25);
    assert.equal(toEpochSeconds(" 1712345678 "), 1712345678);
    assert.equal(toEpochSeconds("1712345678123"), 1712345678.123);
  });
  test("garbage is undefined", () => {
    for (const value of [
      undefined,
      null,
      "",
      "  ",
      "soon",
      "Infinity",
      NaN,
      Infinity,
      -Infinity,
      {},
      [],
      true,
      [1712345678],
    ]) {
      assert.equal(toEpochSeconds(value), undefined, JSON.stringify(value));
    }
  });
});

describe("formatSeconds", () => {
  test("integral values get .0 so Ruby parses a Float", () => {
    assert.equal(formatSeconds(1712345678), "1712345678.0");
    assert.equal(formatSeconds(0), "0.0");
  });
  test("fractions use the shortest round-trip form", () => {
    assert.equal(formatSeconds(1712345678.5), "1712345678.5");
    assert.equal(formatSeconds(1712345678.123456), "1712345678.123456");
    assert.equal(Number(formatSeconds(1795266380.587519)), 1795266380.587519);
  });
  test("non-finite values are a RangeError", () => {
    assert.throws(() => formatSeconds(NaN), new RangeError("not a finite timestamp: NaN"));
    assert.throws(() => formatSeconds(Infinity), RangeError);
  });
});

describe("formatTimestampJson", () => {
  test("seconds keep a fraction, integer milliseconds stay integers", () => {
    assert.equal(formatTimestampJson(1712345678), "1712345678.0");
    assert.equal(formatTimestampJson(1712345678.25), "1712345678.25");
    assert.equal(formatTimestampJson(1712345678123), "1712345678123");
  });
});
