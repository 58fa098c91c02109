/**
 * The errors of durable jobs. `Suspended` is control flow, never a failure: a sleep or a wait ended this
 * execution after re-pushing the job, and the plug-in's aroundPerform turns it into a normal return.
 * The others are failures a job may catch (EventTimeoutError) or that name what to fix.
 */
import { JobCancelledError, JobSuspended, TsqError } from "../../wire/errors.js";

/** The reason `this.signal` carries when the job was cancelled; the worker's own (src/wire/errors.ts). */
export { JobCancelledError };

/**
 * Thrown by sleep() and waitFor() once the job is safely back in `schedule`; never reaches JobRetry. The
 * plug-in's aroundPerform turns it into a normal return for the middleware, and its around throws it
 * again outside them, so the worker ends the execution `suspended` (the core's JobSuspended).
 */
export class Suspended extends JobSuspended {
  override name = "Suspended";

  constructor(
    override readonly why: "sleeping" | "parked",
    dueAt: number,
  ) {
    super(why, dueAt);
  }
}

/** waitFor() reached its timeout without a signal. A job may catch it and go on. */
export class EventTimeoutError extends TsqError {
  constructor(
    readonly event: string,
    message: string,
  ) {
    super(message);
    this.name = "EventTimeoutError";
  }
}

/** The job ran past its `timeout` (seconds) and its grace: failed, so its retry policy applies. */
export class JobTimeoutError extends TsqError {
  constructor(message: string) {
    super(message);
    this.name = "JobTimeoutError";
  }
}

/**
 * The journal does not match the code: a step seen at another position than recorded, or a step name
 * used twice. Retrying cannot help, so the job goes to the dead set for a human (GitLab's job versions).
 */
export class StepOrderError extends TsqError {
  constructor(message: string) {
    super(message);
    this.name = "StepOrderError";
  }
}

/** A journal entry that cannot be read (hand-edited, or written by something else). */
export class JournalError extends TsqError {
  constructor(message: string) {
    super(message);
    this.name = "JournalError";
  }
}

/**
 * The job's journal is gone (deleted by hand, or expired) although earlier executions recorded steps in
 * it (its payload says so): running it again would repeat every step. Retrying cannot help, so the job
 * goes to the dead set for a human.
 */
export class JournalLostError extends TsqError {
  constructor(message: string) {
    super(message);
    this.name = "JournalLostError";
  }
}
