/**
 * Cron expressions, read by `cron-parser` (5-field crontab or 6 fields with seconds first, `@daily`
 * and friends, IANA time zones with DST handled by Luxon). Ticks are whole epoch seconds.
 *
 * `H` (a per-schedule random value, as in Jenkins) is seeded with the schedule's name, so every
 * process of the cluster computes the same ticks.
 */
import type { CronExpression } from "cron-parser";
import { cronParser, localTimeZone } from "../../platform/config/cronCheck.js";

export { localTimeZone, timeZoneProblem, cronProblem } from "../../platform/config/cronCheck.js";

/** What the tick arithmetic needs from a schedule. */
export interface CronTimes {
  name: string;
  cron: string;
  tz?: string;
}

function parse(times: CronTimes, fromSeconds: number): CronExpression {
  return cronParser().CronExpressionParser.parse(times.cron, {
    currentDate: new Date(fromSeconds * 1000),
    tz: times.tz ?? localTimeZone(),
    hashSeed: times.name,
  });
}

/** Ticks T with `after` < T <= `until` (epoch seconds), oldest first, at most `limit` of them. */
export function ticksBetween(times: CronTimes, after: number, until: number, limit: number): number[] {
  const ticks: number[] = [];
  if (until <= after) return ticks;
  const expression = parse(times, after);
  while (ticks.length < limit && expression.hasNext()) {
    const tick = Math.round(expression.next().getTime() / 1000);
    if (tick > until) break;
    ticks.push(tick);
  }
  return ticks;
}

/** The first tick strictly after `after` (epoch seconds), or undefined if there is none. */
export function nextTick(times: CronTimes, after: number): number | undefined {
  const expression = parse(times, after);
  return expression.hasNext() ? Math.round(expression.next().getTime() / 1000) : undefined;
}

/** The latest tick at or before `at` (epoch seconds), or undefined if there is none. */
export function lastTickAtOrBefore(times: CronTimes, at: number): number | undefined {
  // prev() is strict, so start just past `at`: ticks are whole seconds.
  const expression = parse(times, at + 0.001);
  return expression.hasPrev() ? Math.round(expression.prev().getTime() / 1000) : undefined;
}
