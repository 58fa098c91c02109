/**
 * The few named errors tsq raises. Each message says what was wrong and what to do about it.
 */

export class TsqError extends Error {
  override name = "TsqError";
}

/** A job's arguments or options cannot be sent to Redis as they are. */
export class ArgumentError extends TsqError {
  override name = "ArgumentError";
}

/** A serialized job is larger than the configured limit (`maxPayloadBytes`). */
export class PayloadTooLargeError extends TsqError {
  override name = "PayloadTooLargeError";
}

/** A configuration file, flag or environment value is invalid. Exit code 2 at the CLI. */
export class ConfigError extends TsqError {
  override name = "ConfigError";
}

/** A payload names a class that this process has not registered. Retried, since a peer may know it. */
export class UnknownJobError extends TsqError {
  override name = "UnknownJobError";
}

/** A payload is not a JSON object with a string `class` and an array `args`. */
export class InvalidPayloadError extends TsqError {
  override name = "InvalidPayloadError";
}
