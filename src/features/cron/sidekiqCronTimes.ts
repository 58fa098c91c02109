/**
 * sidekiq-cron's (1.8.0) notion of time, so tsq and Ruby compute the same tick, the same Redis member
 * for it and the same bookkeeping text:
 *
 * - An expression may end with a time zone (`0 3 * * * Europe/Paris`, as fugit reads it); without one
 *   it is read in the process's zone, as fugit does.
 * - The tick due at `now` is fugit's `previous_time(now)`: the latest tick at or before floor(now - 1 s).
 *   So a tick is enqueued from one second after it, never at the very instant.
 * - A tick older than 60 s is never enqueued (`not_past_scheduled_time?`).
 * - `cron_job:<name>:enqueued` holds one member per enqueued tick: its UTC ISO 8601 text
 *   (`2024-05-01T10:00:10Z`, `Time#iso8601`), scored by the tick as a float (`1714557610.0`).
 * - `last_enqueue_time` is the push's wall-clock time as `2024-05-01 10:00:11 +0000`.
 */
import {
  cronProblem,
  lastTickAtOrBefore,
  localTimeZone,
  nextTick,
  timeZoneProblem,
  type CronTimes,
} from "./expression.js";

/** Seconds after its time during which sidekiq-cron still enqueues a tick. */
export const SIDEKIQ_CRON_WINDOW = 60;

/** Splits a trailing time zone off a sidekiq-cron expression. */
export function splitZone(cron: string): { expression: string; tz: string | undefined } {
  const fields = cron.trim().split(/\s+/);
  const last = fields[fields.length - 1] ?? "";
  // Cron fields with letters (JAN, MON-FRI, 5L, MON#2) are no zone Intl knows, so this cannot mistake one.
  const zone = /^Z$/i.test(last)
    ? "UTC"
    : /[A-Za-z]/.test(last) && timeZoneProblem(last) === undefined
      ? last
      : undefined;
  if (fields.length < 2 || zone === undefined) return { expression: cron.trim(), tz: undefined };
  return { expression: fields.slice(0, -1).join(" "), tz: zone };
}

/** The tick arithmetic's view of a sidekiq-cron schedule, or a reason tsq cannot follow it. */
export function sidekiqCronTimes(name: string, cron: string): { times: CronTimes } | { problem: string } {
  const { expression, tz } = splitZone(cron);
  const problem = cronProblem(expression, tz);
  if (problem !== undefined) return { problem };
  return { times: { name, cron: expression, tz: tz ?? localTimeZone() } };
}

/** The tick sidekiq-cron would enqueue at `now` (epoch seconds), or undefined if none is recent enough. */
export function dueTick(times: CronTimes, now: number): number | undefined {
  const tick = lastTickAtOrBefore(times, Math.floor(now - 1));
  if (tick === undefined || Math.floor(now) - tick > SIDEKIQ_CRON_WINDOW) return undefined;
  return tick;
}

/** Epoch seconds at which the tick after the one due at `now` becomes due (one second after it). */
export function nextDueAt(times: CronTimes, now: number): number | undefined {
  const next = nextTick(times, Math.floor(now - 1));
  return next === undefined ? undefined : next + 1;
}

/** The `:enqueued` member of a tick: `Time#iso8601` in UTC, e.g. `2024-05-01T10:00:10Z`. */
export function tickMember(tick: number): string {
  return new Date(tick * 1000).toISOString().replace(/\.\d{3}Z$/, "Z");
}

/** The `:enqueued` score of a tick: `Time#to_f.to_s`, e.g. `1714557610.0`. */
export function tickScore(tick: number): string {
  return Number.isInteger(tick) ? `${tick}.0` : String(tick);
}

/** `Time.now.utc.strftime("%Y-%m-%d %H:%M:%S %z")`, e.g. `2024-05-01 10:00:11 +0000`. */
export function formatEnqueueTime(seconds: number): string {
  const iso = new Date(Math.floor(seconds) * 1000).toISOString();
  return `${iso.slice(0, 10)} ${iso.slice(11, 19)} +0000`;
}

/** Reads `last_enqueue_time` (that format, or anything Date.parse takes) to epoch seconds. */
export function parseEnqueueTime(text: string | undefined): number | undefined {
  if (!text) return undefined;
  const match = /^(\d{4})-(\d\d)-(\d\d) (\d\d):(\d\d):(\d\d) ([+-])(\d\d):?(\d\d)$/.exec(text.trim());
  if (match) {
    const [, y, mo, d, h, mi, s, sign, oh, om] = match;
    const offset = (sign === "-" ? -1 : 1) * (Number(oh) * 3600 + Number(om) * 60);
    return Date.UTC(Number(y), Number(mo) - 1, Number(d), Number(h), Number(mi), Number(s)) / 1000 - offset;
  }
  const parsed = Date.parse(text);
  return Number.isNaN(parsed) ? undefined : Math.floor(parsed / 1000);
}
