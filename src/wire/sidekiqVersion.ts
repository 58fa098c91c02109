/**
 * What a Sidekiq generation writes, and which generation a fleet runs. Two things tsq writes differ
 * between the versions Ruby processes read:
 *
 *   timestamps   6.x and 7.x: float epoch seconds (`1795264707.355663`); 8.x: integer epoch ms, and
 *                8.x still reads seconds (it tells them apart by type), while 7.x reads ms as seconds
 *   metrics      7.x: `j|%Y%m%d|%-H:%-M` minute hashes and `<Class>-%d-%H:%-M` histograms;
 *                8.x: `j|%y%m%d|%-H:%M` minutes, 10-minute rollups and `h|<Class>-%-d-%-H:%-M`
 *                histograms (src/wire/executionLayout.ts); 6.x has no Metrics tab at all
 *
 * `sidekiq_version: auto` reads the `version` each Ruby process publishes in its heartbeat `info`
 * (Sidekiq ≥ 7; 6.x publishes none) and writes what every Ruby reader present can read.
 */
import type { TimestampFormat } from "./timestamps.js";

export type SidekiqVersion = 6 | 7 | 8;

/** The `sidekiq_version` setting: a fixed generation, or `auto` (read the fleet's). */
export type SidekiqVersionSetting = SidekiqVersion | "auto";

/** Whose execution-metrics keys a worker writes (src/wire/executionLayout.ts). */
export type MetricsLayout = "sidekiq7" | "sidekiq8";

export interface WireFormats {
  readonly timestamps: TimestampFormat;
  readonly metrics: MetricsLayout;
}

/**
 * What a worker writes with no Ruby process to follow: float seconds, which every Sidekiq reads, and
 * Sidekiq 8's metrics keys, whose 10-minute rollups keep 3 days for tsq's own Metrics page.
 */
export const WITHOUT_RUBY: WireFormats = Object.freeze({ timestamps: "seconds", metrics: "sidekiq8" });

/** A fixed `sidekiq_version`. 6 keeps Sidekiq 8's metrics keys: Sidekiq 6 reads none, tsq reads both. */
export function formatsOf(version: SidekiqVersion): WireFormats {
  if (version === 8) return Object.freeze({ timestamps: "milliseconds", metrics: "sidekiq8" });
  if (version === 7) return Object.freeze({ timestamps: "seconds", metrics: "sidekiq7" });
  return WITHOUT_RUBY;
}

/** The setting's formats before any fleet was read (`auto` starts as if no Ruby process were there). */
export function initialFormats(setting: SidekiqVersionSetting): WireFormats {
  return setting === "auto" ? WITHOUT_RUBY : formatsOf(setting);
}

/**
 * The formats for Ruby processes of these major versions: milliseconds only when every one is 8 or
 * later (a 6.x or 7.x reader takes ms for seconds, a date 50,000 years ahead); Sidekiq 7's metrics keys
 * when a 7.x process is there (its Metrics tab reads nothing else; an 8.x tab misses 7.x's own jobs
 * anyway until the upgrade ends), else 8's. No Ruby process: WITHOUT_RUBY.
 */
export function fleetFormats(majors: Iterable<number>): WireFormats {
  let any = false;
  let oldest = Infinity;
  let has7 = false;
  for (const major of majors) {
    any = true;
    oldest = Math.min(oldest, major);
    if (major === 7) has7 = true;
  }
  if (!any) return WITHOUT_RUBY;
  return Object.freeze({
    timestamps: oldest >= 8 ? "milliseconds" : "seconds",
    metrics: has7 ? "sidekiq7" : "sidekiq8",
  });
}

/** Sidekiq 6.x's `info` has no `version`: a Ruby process without one is taken for 6. */
const UNVERSIONED_MAJOR = 6;

/**
 * The Ruby Sidekiq version a process record's `info` JSON names (`"version":"7.3.10"`), or undefined
 * for a tsq process (`"tsq 1.2.0"`), anything else that is not a Sidekiq version, or unreadable info.
 * The text comes from Redis: anything may be in it.
 */
export function rubySidekiqVersionOf(infoJson: string): string | undefined {
  let info: unknown;
  try {
    info = JSON.parse(infoJson);
  } catch {
    return undefined;
  }
  if (typeof info !== "object" || info === null || Array.isArray(info)) return undefined;
  const version = (info as Record<string, unknown>).version;
  if (version === undefined) return `${UNVERSIONED_MAJOR}.x`;
  if (typeof version !== "string" || !/^\d{1,3}\.\d{1,4}(\.\d{1,4})?([.-][0-9A-Za-z.-]{1,32})?$/.test(version))
    return undefined;
  return version;
}

/** The major version of `rubySidekiqVersionOf`'s answer (`"7.3.10"` → 7, `"6.x"` → 6). */
export function majorOf(version: string): number {
  return Number.parseInt(version, 10);
}
