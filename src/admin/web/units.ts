/**
 * Durations as people read them, in the largest unit they reach and to 3 significant digits: "0.4 ms",
 * "12 µs", "1.25 s", "3.5 min". A small average never rounds to "0" (a 12 µs job on a page in seconds
 * would). assets/charts.js formats its axes and legends by the same rules.
 */

/** Milliseconds per unit, largest first. */
const UNITS: readonly (readonly [name: string, ms: number])[] = [
  ["h", 3_600_000],
  ["min", 60_000],
  ["s", 1000],
  ["ms", 1],
  ["µs", 0.001],
];

/** `ms` milliseconds as text with its unit; "0" for nothing, "–" for a value that is not a number. */
export function duration(ms: number): string {
  if (!Number.isFinite(ms)) return "–";
  if (ms === 0) return "0";
  // Milliseconds down to 0.1 ms ("0.4 ms"); below that, microseconds ("12 µs").
  const unit = UNITS.find(([, size]) => Math.abs(ms) >= size * (size === 1 ? 0.1 : 1)) ?? UNITS.at(-1)!;
  return `${(ms / unit[1]).toLocaleString("en-US", { maximumSignificantDigits: 3 })} ${unit[0]}`;
}
