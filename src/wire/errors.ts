/**
 * The few named errors the core raises. Each message says what was wrong and what to do about it. A
 * feature's own errors live in its folder (a concurrency limit's full parked list, reliable push's full
 * buffer, an iterable job's unreadable state, a durable job's), exported from the package root as these.
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

/** Redis refused to store a job (out of memory, read-only replica, ...): the job was not enqueued. */
export class EnqueueError extends TsqError {
  override name = "EnqueueError";
}

/**
 * A payload marked `compressed: true` whose `args` cannot be restored: not one base64 string, not a zlib
 * stream, over the inflated-size cap (`maxInflatedBytes`), or not a JSON array. The job fails like any
 * other (retry, then dead) with its stored bytes untouched, so a human can inspect it.
 */
export class PayloadDecompressionError extends TsqError {
  override name = "PayloadDecompressionError";
}

/**
 * A plug-in's write refused some jobs of a push (`alternateWrite`): `jids` names the jobs not enqueued,
 * and the other jobs of the same write were. The core undoes only those jobs' `beforeWrite` steps, merges
 * the refusals of several shards into one, and turns them into nulls in a bulk push's results. A
 * feature subclasses it (ConcurrencyLimitFullError) so the core need not name it.
 */
export class PushRefusedError extends TsqError {
  override name = "PushRefusedError";

  constructor(
    message: string,
    /** At push: the jobs refused; empty when thrown at run time. */
    readonly jids: readonly string[] = [],
  ) {
    super(message);
  }

  /** The same kind of refusal for other jobs: merged refusals of several shards keep their class. */
  refusing(message: string, jids: readonly string[]): PushRefusedError {
    const Kind = this.constructor as new (message: string, jids: readonly string[]) => PushRefusedError;
    return new Kind(message, jids);
  }
}

/**
 * Thrown by an iterable job that saved its cursor and must run again later (the process is stopping, or
 * `maxIterationRuntime` passed). The worker puts the job back at the end of its queue with the same jid;
 * it is not a failure. Sidekiq's `Job::Interrupted`.
 */
export class JobInterrupted extends TsqError {
  override name = "JobInterrupted";
}

/**
 * Redis could not be reached within the caller's deadline (a push's `connectTimeout`): nothing was
 * written, so the call may be retried without risk of a duplicate.
 */
export class RedisUnreachableError extends TsqError {
  override name = "RedisUnreachableError";
}

/**
 * Control flow, never a failure: a plug-in ended this execution without ending the job, which is safely
 * back in Redis and runs again later (a durable job slept or parked on an event). The worker reports the
 * execution as `suspended`: no retry, no outcome, no batch report. Thrown from an `around` hook, outside
 * the server middleware (which saw a normal return).
 */
export class JobSuspended extends Error {
  override name = "JobSuspended";

  constructor(
    /** Why, for logs and metrics ("sleeping", "parked"). */
    readonly why: string,
    /** When the job is due back, epoch seconds. */
    readonly dueAt: number,
  ) {
    super(`the job is ${why}; this execution ends and the job comes back later (do not catch this error)`);
  }
}

/**
 * The reason a job's `this.signal` carries when it was cancelled (cancel(jid), tsqctl cancel). An execution
 * that ends with it (thrown, or settled after the abort) ends `cancelled`: acknowledged, not retried.
 */
export class JobCancelledError extends TsqError {
  override name = "JobCancelledError";

  constructor(readonly jid: string) {
    super(`job ${jid} was cancelled`);
  }
}
