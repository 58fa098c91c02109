/**
 * The three job-size settings, their environment variables, and how a client resolves them
 * (option > environment > DEFAULTS; the worker merges the config file in between, see workerOptions.ts).
 */
import { ConfigError } from "../../wire/errors.js";
import { DEFAULTS } from "../../platform/config/defaults.js";
import { MAX_BYTES } from "../../platform/config/bounds.js";

export interface SizeLimits {
  /** Bytes of JSON `args` above which the client compresses them (GitLab: 100,000); 0 = never compress. */
  readonly compressThresholdBytes: number;
  /** Largest stored job, after compression, in bytes (5 MB); a bigger push is refused. */
  readonly maxPayloadBytes: number;
  /** Largest inflated `args` JSON a worker (or tsqctl) will restore, in bytes; caps a zip bomb. */
  readonly maxInflatedBytes: number;
}

/** Environment variable for each setting. Empty counts as unset. */
export const SIZE_ENV = Object.freeze({
  compressThresholdBytes: "TSQ_COMPRESS_THRESHOLD_BYTES",
  maxPayloadBytes: "TSQ_MAX_PAYLOAD_BYTES",
  maxInflatedBytes: "TSQ_MAX_INFLATED_BYTES",
} satisfies Record<keyof SizeLimits, string>);

/** The settings the environment gives; throws ConfigError naming the variable when one is malformed. */
export function sizeLimitsFromEnv(env: NodeJS.ProcessEnv): Partial<SizeLimits> {
  const limits: { -readonly [K in keyof SizeLimits]?: number } = {};
  for (const [field, name] of Object.entries(SIZE_ENV) as [keyof SizeLimits, string][]) {
    const text = env[name];
    if (!text) continue;
    const value = /^\d+$/.test(text.trim()) ? Number(text.trim()) : NaN;
    const zeroAllowed = field === "compressThresholdBytes";
    if (!Number.isSafeInteger(value) || (value === 0 && !zeroAllowed) || value > MAX_BYTES) {
      throw new ConfigError(
        `${name} must be a whole number of bytes from ${zeroAllowed ? "0 (= off)" : "1"} to ${MAX_BYTES}, got ${JSON.stringify(text)}; fix or unset it`,
      );
    }
    limits[field] = value;
  }
  return limits;
}

/** A client's limits: its own options first, then the environment, then DEFAULTS. */
export function resolveSizeLimits(given: Partial<SizeLimits>, env: NodeJS.ProcessEnv = process.env): SizeLimits {
  const fromEnv = sizeLimitsFromEnv(env);
  return Object.freeze({
    compressThresholdBytes:
      given.compressThresholdBytes ?? fromEnv.compressThresholdBytes ?? DEFAULTS.compressThresholdBytes,
    maxPayloadBytes: given.maxPayloadBytes ?? fromEnv.maxPayloadBytes ?? DEFAULTS.maxPayloadBytes,
    maxInflatedBytes: given.maxInflatedBytes ?? fromEnv.maxInflatedBytes ?? DEFAULTS.maxInflatedBytes,
  });
}

/** Exact bytes, plus MB for big sizes: "5242990 bytes (5.00 MB)" (MB alone hides a 100-byte overrun). */
export function formatBytes(bytes: number): string {
  const MB = 1024 * 1024;
  return bytes >= MB ? `${bytes} bytes (${(bytes / MB).toFixed(2)} MB)` : `${bytes} bytes`;
}
