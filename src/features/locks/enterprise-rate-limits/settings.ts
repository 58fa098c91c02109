/**
 * Rate limiters' validated settings and process-wide defaults. A bad name or number throws a
 * ConfigError saying what to write instead, when the limiter is built (not at its first call).
 */
import { ConfigError } from "../../../wire/errors.js";
import type { Backoff, OverLimitError } from "./OverLimitError.js";

export type Interval = "second" | "minute" | "hour" | "day";

/** Interval lengths, ms. */
export const INTERVAL_MS: Readonly<Record<Interval, number>> = {
  second: 1_000,
  minute: 60_000,
  hour: 3_600_000,
  day: 86_400_000,
};

/** Letters, digits and `_ - . : @`, so dynamic names such as `stripe-${userId}` or an email fit. */
const NAME = /^[A-Za-z0-9_.:@-]{1,200}$/;

/**
 * Sidekiq Enterprise's cap on reschedules of one job for one limiter (20, Ent 1.5.4 #3629); past it the
 * OverLimitError goes to the job's ordinary retries.
 */
export const DEFAULT_RESCHEDULE = 20;

/**
 * The default back-off, seconds: the limiter's own estimate of when it has room (at least 1 s), times the
 * reschedule number, capped at an hour, plus up to half again of jitter so rescheduled jobs do not all
 * come back at the same instant. Enterprise's `300 * overrated + rand(300)` (five minutes a step) waits
 * far longer than most limits need.
 */
export const defaultBackoff: Backoff = (overrated: number, error: OverLimitError) => {
  const base = Math.min(Math.max(error.retryAfterMs / 1000, 1) * overrated, 3600);
  return base + Math.random() * base * 0.5;
};

const defaults: { backoff: Backoff; reschedule: number } = { backoff: defaultBackoff, reschedule: DEFAULT_RESCHEDULE };

/** `Limiter.configure`: the process-wide back-off and reschedule cap. */
export function configureLimiters(options: { backoff?: Backoff; reschedule?: number }): void {
  if (options.backoff !== undefined) {
    if (typeof options.backoff !== "function")
      throw new ConfigError("Limiter.configure: backoff must be a function (overrated, error) => seconds");
    defaults.backoff = options.backoff;
  }
  if (options.reschedule !== undefined)
    defaults.reschedule = count("Limiter.configure", "reschedule", options.reschedule, 0);
}

export function limiterDefaults(): Readonly<typeof defaults> {
  return defaults;
}

export function checkName(kind: string, name: unknown): string {
  if (typeof name === "string" && NAME.test(name)) return name;
  throw new ConfigError(
    `Limiter.${kind}: name ${JSON.stringify(name)} is not valid; use 1-200 letters, digits or _ - . : @ ` +
      "(e.g. `stripe-${userId}`)",
  );
}

/** An integer >= `min`. */
export function count(where: string, what: string, value: unknown, min = 1): number {
  if (typeof value === "number" && Number.isInteger(value) && value >= min) return value;
  throw new ConfigError(`${where}: ${what} must be an integer >= ${min}, got ${JSON.stringify(value)}`);
}

/** Seconds >= 0 (or > 0 when `positive`), finite. */
export function seconds(where: string, what: string, value: unknown, positive: boolean): number {
  if (typeof value === "number" && Number.isFinite(value) && (positive ? value > 0 : value >= 0)) return value;
  throw new ConfigError(
    `${where}: ${what} must be a number of seconds ${positive ? "> 0" : ">= 0"}, got ${JSON.stringify(value)}`,
  );
}

/** An interval name or a number of seconds, as ms. */
export function periodMs(where: string, value: unknown): number {
  if (typeof value === "string" && value in INTERVAL_MS) return INTERVAL_MS[value as Interval];
  if (typeof value === "number") return Math.round(seconds(where, "the period", value, true) * 1000);
  throw new ConfigError(
    `${where}: the period must be "second", "minute", "hour", "day" or a number of seconds, got ${JSON.stringify(value)}`,
  );
}
