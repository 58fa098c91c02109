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
 * A job of a concurrency-limited class found no free slot and its class's parked list is full
 * (`concurrency_limit_max_parked`). The job is not parked. At run time it fails like any other (retry
 * with back-off, then dead); at push the push fails and `jids` names the jobs not enqueued (the other
 * jobs of the same write were). An overload is loud instead of growing Redis without bound (GitLab's
 * documented flaw).
 */
export class ConcurrencyLimitFullError extends TsqError {
  override name = "ConcurrencyLimitFullError";

  constructor(
    message: string,
    /** At push: the jobs refused; empty at run time. */
    readonly jids: readonly string[] = [],
  ) {
    super(message);
  }
}

/**
 * Reliable push's in-memory buffer is full while Redis is unreachable: this job was not enqueued (jobs
 * buffered before it still are). Raise `reliablePush.maxBuffered`, or retry once Redis is back.
 */
export class PushBufferFullError extends TsqError {
  override name = "PushBufferFullError";
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
 * An iterable job's saved state (`it-<jid>`) cannot be read: a cursor that is not JSON, a non-numeric
 * count. Retrying cannot help, so the job goes straight to the dead set; fix or delete the field, then
 * retry it from there.
 */
export class IterationStateError extends TsqError {
  override name = "IterationStateError";
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
