/**
 * Cancels and timeouts of running jobs, one per worker. Every job gets its own AbortController as
 * `this.signal` (the slot's hard-shutdown abort is forwarded to it), so a cancel or a timeout aborts one
 * job and nothing else. No Redis call: a plain job pays a controller and a listener.
 *
 *   start ──── timeout (s) ──── abort(JobTimeoutError) ── grace (s) ── abandoned: slot freed, failed
 *         └─ cancel(jid) ───── abort(JobCancelledError) ─ grace (s) ── abandoned: slot freed, cancelled
 *
 * A job that settles after its abort ends as cancelled (not retried, acknowledged) or fails with
 * JobTimeoutError (its retry policy applies). One that has not settled by the end of the grace is
 * abandoned: the worker moves on and its promise runs on unobserved (counted, so the supervisor's memory
 * and hang watch can recycle a process that piles them up).
 */
import type { Logger } from "../../platform/logger.js";
import type { JobPayload } from "../../wire/payload.js";
import { JobCancelledError, JobTimeoutError } from "./errors.js";

/** Seconds a job has to settle after its abort before it is abandoned (per class: `static abortGrace`). */
export const ABORT_GRACE = 5;

export type Report = (job: JobPayload, outcome: "cancelled" | "timedOut" | "abandoned") => void;

interface Limits {
  /** Seconds, or undefined for no timeout. */
  timeout: number | undefined;
  /** Seconds. */
  grace: number;
}

/** A job running without a timeout: its controller is made only when someone reads its signal or cancels it. */
interface Lazy {
  readonly outer: AbortSignal | undefined;
  control?: AbortController;
  /** Ends the wait for the job with "abandoned" (set while it runs). */
  abandon?: () => void;
  graceMs: number;
  graceTimer?: NodeJS.Timeout;
  /** Passes the slot's abort (hard shutdown) on to `control`. */
  forward?: () => void;
}

export class RunControl {
  private readonly running = new Map<string, AbortController | Lazy>();

  constructor(
    private readonly logger: Logger,
    private readonly report: Report,
    /** Told of each abandoned job's promise, which runs on (the process counts them until they settle). */
    private readonly onAbandoned: (work: Promise<unknown>) => void = () => {},
  ) {}

  /** Aborts the job `jid` if it runs here; true when it does. */
  cancel(jid: string): boolean {
    const entry = this.running.get(jid);
    if (!entry) return false;
    const control = entry instanceof AbortController ? entry : controlOf(entry);
    if (!control.signal.aborted) control.abort(new JobCancelledError(jid));
    return true;
  }

  /**
   * Runs `run` with `instance.signal` replaced by the job's own signal. Resolves true when the job was
   * cancelled (the caller ends it without a retry).
   */
  async supervise(run: () => Promise<void>, instance: object, job: JobPayload, limits: Limits): Promise<boolean> {
    if (limits.timeout === undefined) return this.superviseLazily(run, instance, job, limits);
    const target = instance as { signal?: AbortSignal };
    const control = new AbortController();
    const outer = target.signal;
    const forward = () => control.abort(outer?.reason);
    outer?.addEventListener("abort", forward, { once: true });
    target.signal = control.signal;
    this.running.set(job.jid, control);
    let timer: NodeJS.Timeout | undefined;
    let graceTimer: NodeJS.Timeout | undefined;
    const abandoned = new Promise<"abandoned">((resolve) => {
      control.signal.addEventListener(
        "abort",
        () => {
          // A hard shutdown (the slot's abort) is the Processor's to handle: no abandonment here.
          if (!ours(control.signal.reason)) return;
          graceTimer = setTimeout(() => resolve("abandoned"), limits.grace * 1000);
          graceTimer.unref();
        },
        { once: true },
      );
    });
    if (limits.timeout !== undefined) {
      timer = setTimeout(
        () => control.abort(new JobTimeoutError(`the job ran past its timeout of ${limits.timeout} s`)),
        limits.timeout * 1000,
      );
      timer.unref();
    }
    const work = run();
    let winner: "done" | "abandoned";
    try {
      winner = await Promise.race([work.then(() => "done" as const), abandoned]);
    } catch (error) {
      if (ours(control.signal.reason)) return this.settle(job, control.signal.reason);
      throw error;
    } finally {
      clearTimeout(timer);
      clearTimeout(graceTimer);
      outer?.removeEventListener("abort", forward);
      if (this.running.get(job.jid) === control) this.running.delete(job.jid);
    }
    if (winner === "done") return false;
    work.catch(() => {}); // it may still fail; no one is listening any more
    this.onAbandoned(work);
    const reason = control.signal.reason as Error;
    this.logger.warn({ reason: reason.name, grace_s: limits.grace }, "job abandoned: it ignored its abort signal");
    this.report(job, "abandoned");
    return this.settle(job, reason);
  }

  /**
   * The common case, a job without a timeout, at the cost of a map entry and a property: the job's own
   * controller, its forwarding of the slot's abort and the race against abandonment exist only once the
   * job reads `this.signal` or is cancelled (a plain job paid ~130 µs for them up front).
   */
  private async superviseLazily(
    run: () => Promise<void>,
    instance: object,
    job: JobPayload,
    limits: Limits,
  ): Promise<boolean> {
    const target = instance as { signal?: AbortSignal };
    const entry: Lazy = { outer: target.signal, graceMs: limits.grace * 1000 };
    Object.defineProperty(instance, "signal", {
      configurable: true,
      enumerable: true,
      get: () => controlOf(entry).signal,
    });
    this.running.set(job.jid, entry);
    const work = run();
    let winner: "done" | "abandoned";
    try {
      winner = await new Promise<"done" | "abandoned">((resolve, reject) => {
        entry.abandon = () => resolve("abandoned");
        work.then(() => resolve("done"), reject);
      });
    } catch (error) {
      const reason: unknown = entry.control?.signal.reason;
      if (ours(reason)) return this.settle(job, reason);
      throw error;
    } finally {
      clearTimeout(entry.graceTimer);
      entry.abandon = undefined;
      if (entry.forward) entry.outer?.removeEventListener("abort", entry.forward);
      if (this.running.get(job.jid) === entry) this.running.delete(job.jid);
    }
    if (winner === "done") return false;
    work.catch(() => {}); // it may still fail; no one is listening any more
    this.onAbandoned(work);
    const reason = entry.control!.signal.reason as Error;
    this.logger.warn({ reason: reason.name, grace_s: limits.grace }, "job abandoned: it ignored its abort signal");
    this.report(job, "abandoned");
    return this.settle(job, reason);
  }

  /** Cancelled: true (ends without a retry). Timed out: throws the timeout (the retry policy applies). */
  private settle(job: JobPayload, reason: unknown): boolean {
    if (reason instanceof JobCancelledError) {
      this.logger.info("job cancelled");
      this.report(job, "cancelled");
      return true;
    }
    this.report(job, "timedOut");
    throw reason;
  }
}

/** The lazy job's controller, made on first need: forwards the slot's abort, starts the grace on ours. */
function controlOf(entry: Lazy): AbortController {
  if (entry.control) return entry.control;
  const control = (entry.control = new AbortController());
  entry.forward = () => control.abort(entry.outer?.reason);
  entry.outer?.addEventListener("abort", entry.forward, { once: true });
  if (entry.outer?.aborted) control.abort(entry.outer.reason);
  control.signal.addEventListener(
    "abort",
    () => {
      // A hard shutdown (the slot's abort) is the Processor's to handle: no abandonment here.
      if (!ours(control.signal.reason)) return;
      entry.graceTimer = setTimeout(() => entry.abandon?.(), entry.graceMs);
      entry.graceTimer.unref();
    },
    { once: true },
  );
  return control;
}

function ours(reason: unknown): boolean {
  return reason instanceof JobCancelledError || reason instanceof JobTimeoutError;
}
