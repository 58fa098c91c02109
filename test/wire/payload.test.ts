import { describe, test } from "node:test";
import assert from "node:assert/strict";
import {
  displayClass,
  dumpPayload,
  inheritSource,
  newJid,
  parsePayload,
  TIMESTAMP_FIELDS,
} from "../../src/wire/payload.js";
import { InvalidPayloadError } from "../../src/wire/errors.js";

describe("newJid", () => {
  test("is 24 lowercase hex characters, like SecureRandom.hex(12)", () => {
    for (let i = 0; i < 100; i++) assert.match(newJid(), /^[0-9a-f]{24}$/);
  });
  test("does not repeat", () => {
    const jids = new Set(Array.from({ length: 10_000 }, newJid));
    assert.equal(jids.size, 10_000);
  });
});

describe("parsePayload", () => {
  const invalid = (text: string, message: string | RegExp) =>
    assert.throws(
      () => parsePayload(text),
      (error: unknown) => {
        assert.ok(error instanceof InvalidPayloadError);
        assert.equal(error.name, "InvalidPayloadError");
        if (typeof message === "string") assert.equal(error.message, message);
        else assert.match(error.message, message);
        return true;
      },
    );

  test("invalid JSON names the parser's complaint", () => {
    invalid("{not json", /^job is not valid JSON \(.+\)$/);
    invalid("", /^job is not valid JSON \(/);
  });
  test("JSON that is not an object", () => {
    for (const text of ["[]", "[1]", "1", '"job"', "null", "true"]) invalid(text, "job is not a JSON object");
  });
  test("no class string", () => {
    invalid('{"args":[],"jid":"a"}', 'job has no "class" string');
    invalid('{"class":"","args":[],"jid":"a"}', 'job has no "class" string');
    invalid('{"class":5,"args":[],"jid":"a"}', 'job has no "class" string');
  });
  test("args not an array", () => {
    invalid('{"class":"X","jid":"a"}', 'job "args" is not an array');
    invalid('{"class":"X","args":{"0":1},"jid":"a"}', 'job "args" is not an array');
  });
  test("no jid string", () => {
    invalid('{"class":"X","args":[]}', 'job has no "jid" string');
    invalid('{"class":"X","args":[],"jid":12}', 'job has no "jid" string');
  });
  test("a missing queue defaults to default", () => {
    assert.equal(parsePayload('{"class":"X","args":[],"jid":"a"}').queue, "default");
  });
  test("unknown fields are preserved, in order", () => {
    const job = parsePayload(
      '{"zeta":1,"class":"X","bid":"b","args":[],"jid":"a","queue":"q","unique_for":60,"alpha":[true]}',
    );
    assert.deepEqual(Object.keys(job), ["zeta", "class", "bid", "args", "jid", "queue", "unique_for", "alpha"]);
    assert.equal(job.bid, "b");
    assert.deepEqual(job.alpha, [true]);
  });
});

describe("dumpPayload", () => {
  test("integral seconds in timestamp fields keep a fraction", () => {
    assert.equal(dumpPayload({ created_at: 1712345678 }), '{"created_at":1712345678.0}');
    for (const field of TIMESTAMP_FIELDS) {
      assert.equal(dumpPayload({ [field]: 1712345678 }), `{"${field}":1712345678.0}`);
    }
  });
  test("fractional seconds are written as they are", () => {
    assert.equal(dumpPayload({ enqueued_at: 1712345678.123456 }), '{"enqueued_at":1712345678.123456}');
  });
  test("integer milliseconds (Sidekiq 8) stay integers", () => {
    assert.equal(
      dumpPayload({ created_at: 1712345678123, failed_at: 1712345678000 }),
      '{"created_at":1712345678123,"failed_at":1712345678000}',
    );
  });
  test("other integer fields, and timestamp-named keys inside args, are untouched", () => {
    const job = {
      class: "X",
      args: [{ created_at: 1712345678 }],
      retry: 5,
      retry_count: 0,
      count: 1712345678,
      jid: "a",
      queue: "q",
    };
    assert.equal(dumpPayload(job), JSON.stringify(job));
  });
  test("undefined fields are left out, like JSON.stringify", () => {
    assert.equal(dumpPayload({ class: "X", at: undefined, args: [] }), '{"class":"X","args":[]}');
  });
  test("keys and strings are escaped as JSON.stringify does", () => {
    const job = { 'we"ird': "line\nbreak é 😀", args: ["\u0001"] };
    assert.equal(dumpPayload(job), JSON.stringify(job));
  });
  test("a Sidekiq 6/7 payload survives parse + dump byte for byte, even with a .0 timestamp", () => {
    const ruby =
      '{"retry":true,"queue":"default","class":"HardJob","args":["bob",5,{"k":[1.5,null]}],' +
      '"jid":"0123456789abcdef01234567","created_at":1712345678.0,"enqueued_at":1712345678.123456,' +
      '"bid":"b-1","tags":["x"],"unique_for":60}';
    assert.equal(dumpPayload(parsePayload(ruby)), ruby);
  });
  test("a Sidekiq 8 payload survives parse + dump byte for byte", () => {
    const ruby =
      '{"retry":3,"queue":"low","class":"X","args":[],"jid":"a","created_at":1712345678123,"enqueued_at":1712345678456}';
    assert.equal(dumpPayload(parsePayload(ruby)), ruby);
  });
});

describe("dumpPayload of a parsed payload", () => {
  test("a changed timestamp is re-encoded with the fraction rule; unchanged fields keep their text", () => {
    const job = parsePayload(
      '{"class":"X","args":[1.0],"jid":"a","queue":"q","created_at":1712345678.0,"failed_at":1712345600.5}',
    );
    job.retried_at = 1712345700;
    job.failed_at = 1712345601;
    assert.equal(
      dumpPayload(job),
      '{"class":"X","args":[1.0],"jid":"a","queue":"q","created_at":1712345678.0,"failed_at":1712345601.0,"retried_at":1712345700.0}',
    );
  });
  test("inheritSource carries the original text to a copy", () => {
    const original = parsePayload('{"class":"X","args":[2.0],"jid":"a","queue":"q"}');
    const plainCopy = { ...original };
    const copy = { ...original };
    inheritSource(original, copy);
    assert.equal(dumpPayload(plainCopy), '{"class":"X","args":[2],"jid":"a","queue":"q"}');
    assert.equal(dumpPayload(copy), '{"class":"X","args":[2.0],"jid":"a","queue":"q"}');
  });
});

describe("displayClass", () => {
  test("shows the wrapped class of an ActiveJob wrapper", () => {
    assert.equal(displayClass({ class: "Sidekiq::ActiveJob::Wrapper", wrapped: "MailJob" }), "MailJob");
    assert.equal(displayClass({ class: "HardJob" }), "HardJob");
    assert.equal(displayClass({ class: "HardJob", wrapped: "" }), "HardJob");
  });
});
