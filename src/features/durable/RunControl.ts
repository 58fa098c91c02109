/**
 * Cancels and timeouts of running jobs, one per worker. A job's `this.signal` is its slot's controller,
 * which the worker renews after a job that aborted it, so a cancel or a timeout aborts one job and
 * nothing else. No Redis call: a plain job pays two promises and a small object.
 *
 *   start ──── timeout (s) ──── abort(JobTimeoutError) ── grace (s) ── abandoned: slot freed, failed
 *         └─ cancel(jid) ───── abort(JobCancelledError) ─ grace (s) ── abandoned: slot freed, cancelled
 *
 * A job that settles after its abort, whether it threw or returned, ends as cancelled (JobCancelledError
 * reaches the worker: not retried, acknowledged) or fails with JobTimeoutError (its retry policy
 * applies): an abort is final. The one exception is an execution that suspended (a durable job parked
 * or slept before it settled): it is safely back in Redis, and a cancel finds its journal marked when it
 * comes back. One that has not settled by the end of the grace is abandoned: the worker moves on and its
 * promise runs on unobserved (counted, so the supervisor's memory and hang watch can recycle a process
 * that piles them up). A hard shutdown's abort is the worker's to
 * handle: it starts no grace here.
 */
import type { Logger } from "../../platform/logger.js";
import type { JobPayload } from "../../wire/payload.js";
import { toError } from "../../server/JobRetry.js";
import { longTimeout } from "../../platform/util/longTimer.js";
import { JobCancelledError, JobTimeoutError } from "./errors.js";

/** Seconds a job has to settle after its abort before it is abandoned (per class: `static abortGrace`). */
export const ABORT_GRACE = 5;

export type Report = (job: JobPayload, queue: string, outcome: "timedOut" | "abandoned") => void;

export interface Limits {
  /** Seconds, or undefined for no timeout. */
  timeout: number | undefined;
  /** Seconds. */
  grace: number;
}

interface Running {
  /** The job's controller (its slot's): its signal is the job's `this.signal`. */
  readonly control: AbortController;
  readonly jid: string;
  readonly graceMs: number;
  /** Cancel the timeout's and the grace's timers (longTimeout: a timeout of a month is a month). */
  timer?: () => void;
  graceTimer?: () => void;
  /** Ends the wait for the job with "abandoned"; unset once the wait has ended. */
  abandon?: () => void;
}

/** A job controller's record, kept from job to job while the controller lives. */
interface Holder {
  current: Running | undefined;
}

export class RunControl {
  /**
   * Keyed by controller, one per slot, and kept between jobs: a long-lived Map with an entry added and
   * deleted per job reallocates its table in the old generation (docs/performance.md, "Maps with churn").
   * An aborted controller is replaced by the worker, so its record goes with its job.
   */
  private readonly running = new Map<AbortController, Holder>();

  constructor(
    private readonly logger: Logger,
    private readonly report: Report,
    /** Told of each abandoned job's promise, which runs on (the process counts them until they settle). */
    private readonly onAbandoned: (work: Promise<unknown>) => void = () => {},
  ) {}

  /** Aborts the job `jid` if it runs here; true when it does. */
  cancel(jid: string): boolean {
    // A scan of at most `concurrency` records: cancels are rare, jobs are not.
    for (const { current } of this.running.values()) {
      if (current?.jid !== jid) continue;
      abort(current, new JobCancelledError(jid));
      return true;
    }
    return false;
  }

  /**
   * Runs `run`, the job `control` belongs to, under its limits. Rejects with JobCancelledError when the
   * job was cancelled, JobTimeoutError when it timed out, however it settled; `suspended` says whether
   * the execution suspended instead (then it resolves). Not async: under the job's log context every
   * promise costs a plain job a hook call and garbage.
   */
  supervise(
    run: () => Promise<unknown>,
    job: JobPayload,
    queue: string,
    control: AbortController,
    limits: Limits,
    suspended?: () => boolean,
  ): Promise<void> {
    const entry: Running = { control, jid: job.jid, graceMs: limits.grace * 1000 };
    let holder = this.running.get(control);
    if (!holder) this.running.set(control, (holder = { current: undefined }));
    holder.current = entry;
    const { timeout } = limits;
    if (timeout !== undefined) {
      entry.timer = longTimeout(
        timeout * 1000,
        () => abort(entry, new JobTimeoutError(`the job ran past its timeout of ${timeout} s`)),
        true,
      );
    }
    return new Promise<void>((resolve, reject) => {
      /** Ends the job's record; true when its signal was aborted (read once: a getter with brand checks). */
      const release = (): boolean => {
        entry.timer?.();
        entry.graceTimer?.();
        entry.abandon = undefined;
        if (holder.current === entry) holder.current = undefined;
        const aborted = control.signal.aborted;
        if (aborted) this.running.delete(control);
        return aborted;
      };
      // A cancel or a timeout rejects with its error, whatever the job did after the abort.
      const settle = (reason: unknown) => reject(this.settle(job, queue, reason));
      let work: Promise<unknown>;
      try {
        work = run();
      } catch (error) {
        release();
        reject(toError(error));
        return;
      }
      entry.abandon = () => {
        release();
        work.catch(() => {}); // it may still fail; no one is listening any more
        this.onAbandoned(work);
        const reason = control.signal.reason as Error;
        this.logger.warn({ reason: reason.name, grace_s: limits.grace }, "job abandoned: it ignored its abort signal");
        this.report(job, queue, "abandoned");
        settle(reason);
      };
      work.then(
        () => {
          if (!entry.abandon) return; // abandoned already
          // Returning after the abort does not undo it; a suspended execution is safely back in Redis.
          if (release() && ours(control.signal.reason) && !suspended?.()) settle(control.signal.reason);
          else resolve();
        },
        (error: unknown) => {
          if (!entry.abandon) return;
          release();
          const reason: unknown = control.signal.reason;
          if (ours(reason)) settle(reason);
          else reject(toError(error));
        },
      );
    });
  }

  /** The error the execution ends with: the cancel (the worker ends it `cancelled`) or the timeout (retried). */
  private settle(job: JobPayload, queue: string, reason: unknown): Error {
    if (reason instanceof JobCancelledError) {
      this.logger.info("job cancelled");
      return reason;
    }
    this.report(job, queue, "timedOut");
    return toError(reason);
  }
}

/** Aborts the job with `reason` and starts its grace, unless something aborted it first. */
function abort(entry: Running, reason: JobCancelledError | JobTimeoutError): void {
  if (entry.control.signal.aborted) return;
  entry.control.abort(reason);
  entry.graceTimer = longTimeout(entry.graceMs, () => entry.abandon?.(), true);
}

function ours(reason: unknown): boolean {
  return reason instanceof JobCancelledError || reason instanceof JobTimeoutError;
}
