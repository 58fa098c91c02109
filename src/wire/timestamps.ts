/**
 * Wall-clock timestamps as Sidekiq stores them.
 *
 * Sidekiq 6.x/7.x write epoch seconds as floats (`1795264707.355663`). Sidekiq 8.x writes integer epoch
 * milliseconds and tells the two apart by type: a JSON number with a fraction is seconds, an integer is
 * milliseconds. `JSON.stringify(1712345678.0)` drops the fraction, so in seconds mode every timestamp
 * field is written with an explicit fractional part (see `formatSeconds`).
 */

export type TimestampFormat = "seconds" | "milliseconds";

/** Above this an epoch value can only be milliseconds (1e11 seconds is the year 5138). */
const MS_THRESHOLD = 1e11;

/** Current epoch time in the given format: float seconds (µs precision) or integer milliseconds. */
export function nowStamp(format: TimestampFormat): number {
  if (format === "milliseconds") return Date.now();
  const micros = Math.round((performance.timeOrigin + performance.now()) * 1000);
  return micros / 1e6;
}

/** Current epoch time as float seconds, for sorted-set scores and `beat`. */
export function nowSeconds(): number {
  return nowStamp("seconds");
}

/** Reads a stored timestamp in either format and returns epoch seconds, or undefined if absent/invalid. */
export function toEpochSeconds(value: unknown): number | undefined {
  if (typeof value === "number" && Number.isFinite(value)) {
    return Number.isInteger(value) && value > MS_THRESHOLD ? value / 1000 : value;
  }
  if (typeof value === "string" && value.trim() !== "") {
    const n = Number(value);
    return Number.isFinite(n) ? toEpochSeconds(n) : undefined;
  }
  return undefined;
}

/**
 * Formats epoch seconds so a Ruby reader parses a Float: integral values get ".0"
 * (`1712345678` -> `"1712345678.0"`); others use the shortest round-trip form.
 */
export function formatSeconds(seconds: number): string {
  if (!Number.isFinite(seconds)) throw new RangeError(`not a finite timestamp: ${seconds}`);
  return Number.isInteger(seconds) ? seconds.toFixed(1) : String(seconds);
}

/** Formats a stored timestamp value for JSON: seconds keep a fraction, integer milliseconds stay integers. */
export function formatTimestampJson(value: number): string {
  if (Number.isInteger(value) && value > MS_THRESHOLD) return String(value);
  return formatSeconds(value);
}
