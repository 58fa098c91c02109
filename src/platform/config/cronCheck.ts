/**
 * Checks of a cron expression and its time zone, run once as the config file is read (and for a class's
 * `static cron` as the worker starts), so a bad schedule fails at startup naming itself. The tick
 * arithmetic is the cron feature's (src/features/cron/expression.ts).
 */
import type * as CronParser from "cron-parser";
import { loadDependency } from "../dependency.js";

/** cron-parser, loaded on the first expression read. */
export function cronParser(): typeof CronParser {
  return loadDependency("cron-parser") as typeof CronParser;
}

/** The zone an expression without `tz` is read in: the process's (Sidekiq Enterprise: the process TZ). */
export function localTimeZone(): string {
  return Intl.DateTimeFormat().resolvedOptions().timeZone;
}

/** Why `tz` is not a usable IANA time zone, or undefined when it is. */
export function timeZoneProblem(tz: string): string | undefined {
  try {
    new Intl.DateTimeFormat("en-US", { timeZone: tz });
    return undefined;
  } catch {
    return `unknown time zone "${tz}"; use an IANA name such as "Europe/Paris" or "UTC"`;
  }
}

/** Why `expression` (in `tz`) cannot be used, or undefined when it can. */
export function cronProblem(expression: string, tz: string | undefined): string | undefined {
  const zone = tz === undefined ? undefined : timeZoneProblem(tz);
  if (zone !== undefined) return zone;
  const fields = expression.trim().split(/\s+/);
  // cron-parser pads short expressions (`1 2 3` is accepted), so the field count is checked here.
  if (!expression.trim().startsWith("@") && fields.length !== 5 && fields.length !== 6) {
    return `"${expression}" has ${fields.length} fields; expected 5 (min hour day month weekday) or 6 (seconds first)`;
  }
  try {
    const parsed = cronParser().CronExpressionParser.parse(expression, { tz, hashSeed: "check" });
    if (!parsed.hasNext()) return `"${expression}" never fires`;
  } catch (error) {
    return `"${expression}" is not a valid cron expression (${error instanceof Error ? error.message : String(error)})`;
  }
  return undefined;
}
