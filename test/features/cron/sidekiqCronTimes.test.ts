/**
 * sidekiq-cron's notion of time (src/features/cron/sidekiqCronTimes.ts) checked against fugit itself, the parser
 * sidekiq-cron 1.8.0 uses: the due tick is `previous_time(now)` for expressions with and without a zone,
 * and the Redis texts are the ones Ruby writes.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { requireRubyLibrary, rubyEval } from "../../helpers/rails.js";
import { useRedis } from "../../helpers/redis.js";
import {
  dueTick,
  formatEnqueueTime,
  parseEnqueueTime,
  sidekiqCronTimes,
  splitZone,
  tickMember,
  tickScore,
} from "../../../src/features/cron/sidekiqCronTimes.js";

const redis = useRedis();

const EXPRESSIONS = [
  "*/10 * * * * *",
  "* * * * * *",
  "0 3 * * * Europe/Paris",
  "30 2 * * 1-5 America/New_York",
  "0 0 1 * *",
  "15,45 * * * * UTC",
];
/** Epoch seconds: on a tick, just after one, half a second after one, and around a DST change. */
const NOWS = [1_714_557_610, 1_714_557_610.5, 1_714_557_611, 1_714_557_611.999, 1_711_846_799.5, 1_730_000_000.25];

test("the due tick is fugit's previous_time(now), zone or not", async (t) => {
  if (!requireRubyLibrary(t, "fugit", "ruby-sidekiq-cron")) return;
  const pairs = EXPRESSIONS.flatMap((cron) => NOWS.map((now) => [cron, now] as const));
  const ruby = await rubyEval<number[]>(
    `require "fugit"; require "json"
     pairs = JSON.parse(${JSON.stringify(JSON.stringify(pairs))})
     puts JSON.generate(pairs.map { |cron, now| Fugit.parse(cron).previous_time(Time.at(now.to_r).utc).to_i })`,
    redis.url,
  );
  pairs.forEach(([cron, now], i) => {
    const result = sidekiqCronTimes("test", cron);
    assert.ok("times" in result, `${cron} is readable`);
    const expected = ruby[i]!;
    const due = dueTick(result.times, now);
    // dueTick also applies sidekiq-cron's 60 s window; fugit's previous_time has none.
    assert.equal(due, Math.floor(now) - expected <= 60 ? expected : undefined, `${cron} at ${now}`);
  });
});

test("Redis texts are Ruby's: the :enqueued member and score, last_enqueue_time", () => {
  assert.equal(tickMember(1_714_557_610), "2024-05-01T10:00:10Z");
  assert.equal(tickScore(1_714_557_610), "1714557610.0");
  assert.equal(formatEnqueueTime(1_714_557_611.75), "2024-05-01 10:00:11 +0000");
  assert.equal(parseEnqueueTime("2024-05-01 10:00:11 +0000"), 1_714_557_611);
  assert.equal(parseEnqueueTime("2024-05-01 12:00:11 +0200"), 1_714_557_611);
  assert.equal(parseEnqueueTime(""), undefined);
  assert.equal(parseEnqueueTime("garbage"), undefined);
  assert.deepEqual(splitZone("0 3 * * * Europe/Paris"), { expression: "0 3 * * *", tz: "Europe/Paris" });
  assert.deepEqual(splitZone("0 3 * * MON-FRI"), { expression: "0 3 * * MON-FRI", tz: undefined });
  assert.ok("problem" in sidekiqCronTimes("nat", "every day at noon"), "fugit's natural language is not read");
});
