/**
 * A class's opt-in to recorded outcomes: `static options = { result: { ttl: 3600 } }`. The option
 * travels in the payload (`"result":{"ttl":3600}`) like every job option, so `set({ result })` works
 * per push; a payload without it falls back to its class's option in this worker.
 */
import { ConfigError } from "../../wire/errors.js";

export interface ResultOptions {
  /** Seconds the outcome stays readable after the job ends (the result key's TTL). */
  ttl: number;
  /**
   * Largest stored result, in bytes of JSON (default 65,536 = 64 KB). A larger one is stored as an
   * error marker (`ResultTooLarge`) instead, so one job cannot fill Redis.
   */
  maxBytes?: number;
}

export interface ResultPolicy {
  ttlSeconds: number;
  maxBytes: number;
}

/** 64 KB: large enough for a summary, small enough that 10,000 of them are under 1 GB. */
export const DEFAULT_MAX_RESULT_BYTES = 64 * 1024;

/** A valid policy, or the reason the value is not one. */
export function readPolicy(value: unknown): ResultPolicy | string {
  if (typeof value !== "object" || value === null) return "`result` must be an object such as { ttl: 3600 }";
  const { ttl, maxBytes } = value as Record<string, unknown>;
  if (typeof ttl !== "number" || !Number.isInteger(ttl) || ttl <= 0)
    return "`result.ttl` must be a positive whole number of seconds";
  if (maxBytes !== undefined && (typeof maxBytes !== "number" || !Number.isInteger(maxBytes) || maxBytes <= 0))
    return "`result.maxBytes` must be a positive whole number of bytes";
  return { ttlSeconds: ttl, maxBytes: maxBytes ?? DEFAULT_MAX_RESULT_BYTES };
}

/** The policy of a registered class, checked at startup: a bad option names the class now. */
export function classPolicy(className: string, options: { result?: unknown } | undefined): ResultPolicy | undefined {
  if (options?.result === undefined) return undefined;
  const policy = readPolicy(options.result);
  if (typeof policy === "string") throw new ConfigError(`${className}: ${policy} (static options.result)`);
  return policy;
}
