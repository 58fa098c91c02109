/**
 * The errors of durable jobs. `Suspended` is control flow, never a failure: a sleep or a wait ended this
 * execution after re-pushing the job, and the plug-in's aroundPerform turns it into a normal return.
 * The others are failures a job may catch (EventTimeoutError) or that name what to fix.
 */
import { TsqError } from "../../wire/errors.js";

/** Thrown by sleep() and waitFor() once the job is safely back in `schedule`; never reaches JobRetry. */
export class Suspended extends Error {
  constructor(
    readonly why: "sleeping" | "parked",
    /** When the job is due back in its queue unless a signal comes first, epoch seconds. */
    readonly dueAt: number,
  ) {
    super(`the job is ${why}; this execution ends and the job comes back later (do not catch this error)`);
    this.name = "Suspended";
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

/** The reason `this.signal` carries when the job was cancelled (cancel(jid), tsqctl cancel). */
export class JobCancelledError extends TsqError {
  constructor(readonly jid: string) {
    super(`job ${jid} was cancelled`);
    this.name = "JobCancelledError";
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
