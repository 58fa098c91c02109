/** Cron expressions (src/features/cron/expression.ts): field counts, seconds, time zones, strict bounds. */
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  cronProblem,
  lastTickAtOrBefore,
  nextTick,
  ticksBetween,
  timeZoneProblem,
} from "../../../src/features/cron/expression.js";

const at = (iso: string) => Date.parse(iso) / 1000;
const iso = (seconds: number | undefined) =>
  seconds === undefined ? undefined : new Date(seconds * 1000).toISOString();

test("a 5-field expression fires on the minute; a 6-field one has seconds first", () => {
  assert.equal(
    iso(nextTick({ name: "a", cron: "*/15 * * * *", tz: "UTC" }, at("2024-05-01T10:07:30Z"))),
    "2024-05-01T10:15:00.000Z",
  );
  assert.equal(
    iso(nextTick({ name: "b", cron: "30 */15 * * * *", tz: "UTC" }, at("2024-05-01T10:07:30Z"))),
    "2024-05-01T10:15:30.000Z",
  );
  assert.equal(
    iso(nextTick({ name: "c", cron: "@daily", tz: "UTC" }, at("2024-05-01T10:07:30Z"))),
    "2024-05-02T00:00:00.000Z",
  );
});

test("ticksBetween is (after, until], oldest first, and bounded", () => {
  const every = { name: "s", cron: "* * * * * *", tz: "UTC" };
  const start = at("2024-05-01T00:00:00Z");
  assert.deepEqual(ticksBetween(every, start, start + 3, 100), [start + 1, start + 2, start + 3]);
  assert.deepEqual(ticksBetween(every, start, start + 100, 5), [start + 1, start + 2, start + 3, start + 4, start + 5]);
  assert.deepEqual(ticksBetween(every, start, start, 100), []);
});

test("lastTickAtOrBefore includes a tick exactly at the given second", () => {
  const hourly = { name: "h", cron: "0 * * * *", tz: "UTC" };
  assert.equal(iso(lastTickAtOrBefore(hourly, at("2024-05-01T10:00:00Z"))), "2024-05-01T10:00:00.000Z");
  assert.equal(iso(lastTickAtOrBefore(hourly, at("2024-05-01T10:59:59Z"))), "2024-05-01T10:00:00.000Z");
});

test("tz: Asia/Tokyo computes the next run across a date boundary", () => {
  // Tokyo is UTC+9 with no DST: midnight in Tokyo is 15:00 UTC the day before.
  const midnight = { name: "tokyo-midnight", cron: "0 0 * * *", tz: "Asia/Tokyo" };
  assert.equal(iso(nextTick(midnight, at("2024-12-31T14:59:59Z"))), "2024-12-31T15:00:00.000Z"); // 2025-01-01 00:00 JST
  assert.equal(iso(nextTick(midnight, at("2024-12-31T15:00:00Z"))), "2025-01-01T15:00:00.000Z");
  // 08:30 in Tokyo: at 08:40 JST on New Year's Day (still Dec 31 in UTC) the next is Jan 2 08:30 JST.
  const morning = { name: "tokyo-morning", cron: "30 8 * * *", tz: "Asia/Tokyo" };
  assert.equal(iso(nextTick(morning, at("2024-12-31T23:40:00Z"))), "2025-01-01T23:30:00.000Z");
  // Weekdays and month ends are read in the zone too: Monday 09:00 JST is Monday 00:00 UTC, and at
  // Sunday 23:00 UTC it is already Monday 08:00 in Tokyo.
  const monday = { name: "tokyo-monday", cron: "0 9 * * 1", tz: "Asia/Tokyo" };
  assert.equal(iso(nextTick(monday, at("2024-01-07T23:00:00Z"))), "2024-01-08T00:00:00.000Z");
  const monthEnd = { name: "tokyo-month", cron: "0 0 1 * *", tz: "Asia/Tokyo" };
  assert.equal(iso(nextTick(monthEnd, at("2024-02-29T12:00:00Z"))), "2024-02-29T15:00:00.000Z"); // Mar 1 00:00 JST
  // The same expression in UTC fires nine hours later.
  assert.equal(iso(nextTick({ ...midnight, tz: "UTC" }, at("2024-12-31T14:59:59Z"))), "2025-01-01T00:00:00.000Z");
});

test("tz: a DST zone keeps local wall time (America/New_York, spring forward)", () => {
  const nine = { name: "ny", cron: "0 9 * * *", tz: "America/New_York" };
  assert.equal(iso(nextTick(nine, at("2024-03-09T15:00:00Z"))), "2024-03-10T13:00:00.000Z"); // 09:00 EDT
  assert.equal(iso(nextTick(nine, at("2024-03-08T15:00:00Z"))), "2024-03-09T14:00:00.000Z"); // 09:00 EST
});

test("H is seeded with the schedule name, so every process computes the same ticks", () => {
  const a = nextTick({ name: "report", cron: "H * * * *", tz: "UTC" }, at("2024-05-01T00:00:00Z"));
  const b = nextTick({ name: "report", cron: "H * * * *", tz: "UTC" }, at("2024-05-01T00:00:00Z"));
  assert.equal(a, b);
});

test("cronProblem rejects malformed expressions and unknown zones with a reason", () => {
  assert.equal(cronProblem("*/5 * * * *", undefined), undefined);
  assert.equal(cronProblem("0 0 9 * * 1-5", "Europe/Paris"), undefined);
  assert.match(cronProblem("61 * * * *", undefined) ?? "", /not a valid cron expression.*0-59/);
  assert.match(cronProblem("* * *", undefined) ?? "", /has 3 fields; expected 5/);
  assert.match(cronProblem("* * * * * * *", undefined) ?? "", /has 7 fields/);
  assert.match(cronProblem("every day", undefined) ?? "", /has 2 fields/);
  assert.match(cronProblem("0 0 31 2 *", undefined) ?? "", /not a valid cron expression/);
  assert.match(cronProblem("@sometimes", undefined) ?? "", /not a valid cron expression/);
  assert.match(cronProblem("* * * * *", "Mars/Olympus") ?? "", /unknown time zone "Mars\/Olympus"/);
  assert.equal(timeZoneProblem("Asia/Tokyo"), undefined);
});
