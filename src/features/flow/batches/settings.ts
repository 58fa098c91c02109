/**
 * Batch defaults, read once from the environment:
 *
 *   TSQ_BATCH_LINGER       seconds a succeeded batch's keys stay readable (default 86,400: 24 h, as
 *                          Sidekiq Pro's linger)
 *   TSQ_BATCH_EXPIRES_IN   seconds an unfinished batch's keys live after its latest `jobs` block
 *                          (default 2,592,000: 30 days). A batch whose jobs were deleted, or that never
 *                          succeeds, is gone after this; nothing it wrote outlives it
 *   TSQ_BATCH_FAIL_CAP     failure records (`failinfo`) kept per batch (default 100); counts are exact
 */
import { ConfigError } from "../../../wire/errors.js";

export interface BatchSettings {
  /** Seconds. */
  linger: number;
  /** Seconds. */
  expiresIn: number;
  failCap: number;
}

const DEFAULTS = { linger: 86_400, expiresIn: 2_592_000, failCap: 100 } as const satisfies BatchSettings;

let cached: BatchSettings | undefined;

export function batchSettings(env: NodeJS.ProcessEnv = process.env): BatchSettings {
  if (env === process.env && cached) return cached;
  const settings = Object.freeze({
    linger: positive(env.TSQ_BATCH_LINGER, "TSQ_BATCH_LINGER", DEFAULTS.linger),
    expiresIn: positive(env.TSQ_BATCH_EXPIRES_IN, "TSQ_BATCH_EXPIRES_IN", DEFAULTS.expiresIn),
    failCap: positive(env.TSQ_BATCH_FAIL_CAP, "TSQ_BATCH_FAIL_CAP", DEFAULTS.failCap),
  });
  if (env === process.env) cached = settings;
  return settings;
}

/** A positive number of seconds (or records), or the default when unset. */
export function positive(value: string | number | undefined, name: string, fallback: number): number {
  if (value === undefined || value === "") return fallback;
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0)
    throw new ConfigError(`${name} must be a positive number, got ${JSON.stringify(value)}`);
  return n;
}
