/**
 * Golden digests computed by the real Ruby (`JSON.generate` and MD5, as sidekiq-unique-jobs'
 * lock_digest.rb): for each argument shape, Ruby evaluates the Ruby literal, builds the gem's digest,
 * and tsq must produce the same bytes from the TypeScript value. Also Ruby's `Float#to_s` against
 * rubyFloatText over a spread of doubles.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { digestInput, lockDigest, rubyFloat } from "../../../../src/features/locks/sidekiq-unique-jobs/index.js";
import { rubyFloatText } from "../../../../src/features/locks/sidekiq-unique-jobs/rubyJson.js";
import { requireRubySidekiq } from "../../../helpers/ruby.js";

interface Shape {
  name: string;
  ts: unknown[];
  /** The same arguments as Ruby source. */
  ruby: string;
  queue?: string;
  klass?: string;
  apartment?: string;
  acrossQueues?: boolean;
  acrossWorkers?: boolean;
}

const SHAPES: Shape[] = [
  { name: "no arguments", ts: [], ruby: "[]" },
  { name: "integer and string", ts: [1, "a"], ruby: '[1, "a"]' },
  { name: "Ruby 1.0 (rubyFloat)", ts: [rubyFloat(1)], ruby: "[1.0]" },
  { name: "fractions", ts: [1.5, -2.25, 0.1 + 0.2], ruby: "[1.5, -2.25, 0.30000000000000004]" },
  { name: "exponent floats", ts: [1e21, 1.5e-7, 1e300], ruby: "[1.0e21, 1.5e-07, 1.0e300]" },
  {
    name: "Float#to_s bounds",
    ts: [rubyFloat(1e15), rubyFloat(999999999999999), 0.0001, 0.00001],
    ruby: "[1.0e15, 999999999999999.0, 0.0001, 1.0e-05]",
  },
  { name: "big integer (bigint)", ts: [12345678901234567890n], ruby: "[12345678901234567890]" },
  { name: "negative big integer", ts: [-(2n ** 64n)], ruby: "[-(2**64)]" },
  {
    name: "2^53 and a JS integer past it",
    ts: [2 ** 53, 123456789012345680000],
    ruby: "[9007199254740992, 123456789012345680000]",
  },
  {
    name: "non-ASCII, slash, U+2028",
    ts: ["a/b", "é ü 😀 日本", "\u2028\u2029"],
    ruby: '["a/b", "é ü 😀 日本", "\\u2028\\u2029"]',
  },
  {
    name: "escapes and control characters",
    ts: ['q" b\\ \n\t\r\b\f \u0001 \u001f \u007f'],
    ruby: '["q\\" b\\\\ \\n\\t\\r\\b\\f \\u0001 \\u001f \\u007f"]',
  },
  { name: "nil, true, false", ts: [null, true, false], ruby: "[nil, true, false]" },
  { name: "hash key order kept", ts: [{ b: 1, a: 2 }], ruby: '[{"b" => 1, "a" => 2}]' },
  { name: "symbols become strings", ts: [{ sym: "x" }, "y"], ruby: "[{sym: :x}, :y]" },
  {
    name: "nested arrays and hashes",
    ts: [[1, [2, [3, {}]]], { k: [{ z: null }] }],
    ruby: '[[1, [2, [3, {}]]], {"k" => [{"z" => nil}]}]',
  },
  { name: "negative zero and Ruby -0.0", ts: [-0, rubyFloat(-0)], ruby: "[0, -0.0]" },
  { name: "a Date as its wire string", ts: [new Date(0)], ruby: '["1970-01-01T00:00:00.000Z"]' },
  { name: "extreme doubles", ts: [1.7976931348623157e308, 5e-324], ruby: "[1.7976931348623157e308, 5.0e-324]" },
  { name: "namespaced class, other queue", ts: [7], ruby: "[7]", klass: "Billing::ChargeJob", queue: "critical" },
  { name: "unique_across_queues", ts: [1], ruby: "[1]", acrossQueues: true },
  { name: "unique_across_workers", ts: [1], ruby: "[1]", acrossWorkers: true },
  { name: "apartment tenant", ts: ["x"], ruby: '["x"]', apartment: "tenant-1" },
  { name: "long string", ts: ["x".repeat(2000)], ruby: '["x" * 2000]' },
];

/** The gem's digest in real Ruby: `lock_prefix:` + MD5 of JSON.generate(item.slice(...).sort). */
const RUBY = String.raw`
cases = JSON.parse(STDIN.read)
out = cases.map do |c|
  item = { "class" => c["klass"], "queue" => c["queue"], "lock_args" => eval(c["ruby"]) }
  item["apartment"] = c["apartment"] if c["apartment"]
  slice = item.slice("class", "queue", "lock_args", "apartment")
  slice.delete("queue") if c["acrossQueues"]
  slice.delete("class") if c["acrossWorkers"]
  json = JSON.generate(slice.sort)
  { "json" => json, "digest" => "uniquejobs:" + Digest::MD5.hexdigest(json) }
end
puts JSON.generate(out)
`;

function ruby(script: string, input: unknown): unknown {
  const run = spawnSync("ruby", ["-rjson", "-rdigest", "-e", script], {
    input: JSON.stringify(input),
    encoding: "utf8",
  });
  assert.equal(run.status, 0, `ruby failed: ${run.stderr}`);
  return JSON.parse(run.stdout) as unknown;
}

test("lock digests of 23 argument shapes equal Ruby's JSON.generate + MD5, byte for byte", (t) => {
  if (!requireRubySidekiq(t)) return;
  const cases = SHAPES.map((s) => ({ ...s, ts: undefined, klass: s.klass ?? "SyncJob", queue: s.queue ?? "default" }));
  const expected = ruby(RUBY, cases) as { json: string; digest: string }[];
  assert.equal(expected.length, SHAPES.length);
  assert.ok(SHAPES.length >= 20);
  SHAPES.forEach((shape, i) => {
    const item = {
      class: shape.klass ?? "SyncJob",
      queue: shape.queue ?? "default",
      lock_args: shape.ts,
      ...(shape.apartment === undefined ? {} : { apartment: shape.apartment }),
      unique_across_queues: shape.acrossQueues,
      unique_across_workers: shape.acrossWorkers,
    };
    assert.equal(digestInput(item), expected[i]!.json, `${shape.name}: the JSON hashed`);
    assert.equal(lockDigest(item), expected[i]!.digest, `${shape.name}: the digest`);
  });
  // The digests differ from each other where the arguments do (a constant digest would pass nothing).
  assert.ok(new Set(expected.map((e) => e.digest)).size >= SHAPES.length - 2);
});

test("rubyFloatText prints doubles as Ruby's Float#to_s", (t) => {
  if (!requireRubySidekiq(t)) return;
  const values: number[] = [];
  for (let e = -330; e <= 308; e += 7) values.push(Number(`1.2345678901234567e${e}`), Number(`7e${e}`));
  for (let e = -6; e <= 17; e++) values.push(10 ** e, 3 * 10 ** e, -(10 ** e) - 0.5, 2 ** e);
  values.push(0.1, 1 / 3, Math.PI, -Math.E, 100, 123456.789e3, Number.MAX_SAFE_INTEGER, Number.MIN_VALUE, -0, 0);
  const finite = values.filter((v) => Number.isFinite(v));
  // Ruby reads the shortest round-trip text JavaScript writes (or its exponent form), which is the same double.
  const script = "puts JSON.generate(JSON.parse(STDIN.read).map { |s| Float(s).to_s })";
  const expected = ruby(
    script,
    finite.map((v) => (Object.is(v, -0) ? "-0.0" : v.toExponential())),
  ) as string[];
  finite.forEach((value, i) => assert.equal(rubyFloatText(value), expected[i], `Float#to_s of ${value}`));
});
