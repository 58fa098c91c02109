/**
 * Processor: runs one fetched job through the execution pipeline, as Sidekiq's `Processor#process`:
 *
 *   parse (invalid → dead set) → work state → job logger → class lookup → server middleware →
 *   perform(...args) → stats → JobRetry on failure → acknowledge
 *
 * Each execution ends with one EndStatus (hooks.ts): done, failed (retried), dead, cancelled (a
 * JobCancelledError for this jid), or suspended (a JobSuspended: the job is back in Redis, not ended).
 * A job abandoned by a hard shutdown has already been requeued, so nothing is recorded for it.
 */
import { performance } from "node:perf_hooks";
import { JobCancelledError, JobInterrupted, JobSuspended, UnknownJobError } from "../wire/errors.js";
import { displayClass, parsePayload, type JobPayload } from "../wire/payload.js";
import { withJobScope } from "../platform/logger.js";
import { jobLines, type JobLines } from "../platform/jobLines.js";
import { jobLogContext } from "../platform/correlation.js";
import type { Chain } from "../platform/Chain.js";
import type { ServerContext, ServerMiddlewareArgs, JobOutcome } from "./context.js";
import { JobRetry, errorClassName, toError } from "./JobRetry.js";
import { FailureFallback } from "./FailureFallback.js";
import { sendToMorgue } from "./morgue.js";
import type { UnitOfWork } from "./fetch/unitOfWork.js";
import type { JobInstance, RunnableClass } from "./Registry.js";
import type { ServerHooks } from "./plugin.js";
import { isCompressed, repackArgs, unpackArgs, type PackedArgs } from "../client/compression/expand.js";

/** One concurrent job slot of a capsule; `tid` names it in the work hash. */
export interface Slot {
  readonly tid: string;
  /** The running job's `this.signal`: a hard shutdown or a plug-in (cancel, timeout) aborts it. */
  controller: AbortController;
  /** Set by a hard shutdown after the job was requeued. */
  abandoned: boolean;
  /** Fires when the process starts to stop (quiet or TERM): long jobs may save their place and end early. */
  stopping?: AbortSignal;
}

export class Processor {
  private readonly retry: JobRetry;
  private readonly fallback: FailureFallback;
  // The hooks by kind, so a job pays only for the kinds some plug-in uses.
  private readonly intercepts: NonNullable<ServerHooks["intercept"]>[];
  private readonly resolvers: NonNullable<ServerHooks["resolveClass"]>[];
  /** Innermost first (the reverse of the plug-in order). */
  private readonly arounds: NonNullable<ServerHooks["around"]>[];
  /** Innermost first (the reverse of the plug-in order). */
  private readonly aroundPerforms: NonNullable<ServerHooks["aroundPerform"]>[];
  private readonly onEnds: NonNullable<ServerHooks["onEnd"]>[];

  constructor(
    private readonly ctx: ServerContext,
    private readonly middleware: Chain<ServerMiddlewareArgs>,
  ) {
    this.retry = new JobRetry(ctx);
    this.fallback = new FailureFallback(ctx);
    const of = <K extends keyof ServerHooks>(kind: K) =>
      ctx.hooks.flatMap((hook) => {
        const fn: unknown = hook[kind];
        return typeof fn === "function" ? [(fn as (...args: never[]) => unknown).bind(hook)] : [];
      }) as unknown as NonNullable<ServerHooks[K]>[];
    this.intercepts = of("intercept");
    this.resolvers = of("resolveClass");
    // Wrapped innermost first, so kept reversed: the first in the list ends up outermost.
    this.arounds = of("around").reverse();
    this.aroundPerforms = of("aroundPerform").reverse();
    this.onEnds = of("onEnd");
  }

  async process(unit: UnitOfWork, slot: Slot): Promise<void> {
    let job: JobPayload;
    try {
      job = parsePayload(unit.job);
    } catch (error) {
      await this.bury(unit, toError(error));
      return;
    }
    this.ctx.state.begin(slot.tid, {
      queue: unit.queue,
      payload: unit.job,
      runAt: Math.floor(Date.now() / 1000),
      jid: job.jid,
      className: displayClass(job),
      startedMs: performance.now(),
    });
    try {
      // One scope: its log fields, the worker's client for the job's own pushes and the worker's logger
      // for what the job logs with `logger` (an app's logger given to the worker gets those lines too).
      // The worker's own start and done lines are written with the job's fields serialized once.
      const log = jobLogContext(job, unit.queue);
      const lines = jobLines(this.ctx.logger, log);
      await withJobScope({ log, client: this.ctx.client, logger: this.ctx.logger }, () =>
        this.execute(job, unit, slot, lines),
      );
    } finally {
      this.ctx.state.end(slot.tid);
    }
  }

  private async execute(job: JobPayload, unit: UnitOfWork, slot: Slot, lines: JobLines): Promise<void> {
    const { events } = this.ctx;
    // Kill switches and expiry take a job before it starts. No await when none applies (a plain
    // `false`): the common case costs a function call per plug-in that intercepts.
    for (const intercept of this.intercepts) {
      const taken = intercept(job, unit);
      if (taken !== false && (await taken)) return;
    }
    const started = performance.now();
    lines.start();
    events.emit("start", job, unit.queue);
    let klass: RunnableClass | undefined;
    let packed: PackedArgs | undefined;
    let outcome: JobOutcome;
    let returned: unknown;
    let failure: Error | undefined;
    try {
      // Args compressed as GitLab does are inflated first; a failure stores them compressed again.
      if (isCompressed(job)) packed = await unpackArgs(job, this.ctx.options.maxInflatedBytes);
      // A Rails ActiveJob runs the registered class its wrapper names (unless a class is registered under
      // the wrapper's own name); its failure retries the wrapper.
      klass = this.ctx.registry.get(job.class);
      const resolved = klass ? undefined : this.resolve(job);
      const className = resolved?.className ?? job.class;
      if (resolved) klass = this.ctx.registry.get(className);
      if (!klass) throw this.unknownClass(className);
      const instance: JobInstance = this.ctx.jobFactory ? this.ctx.jobFactory(klass) : new klass();
      Object.assign(instance, { jid: job.jid, payload: job, signal: slot.controller.signal });
      if (slot.stopping) Object.assign(instance, { stopping: slot.stopping });
      // GitLab's `job_version`: what the pushing code's `static version` was, so perform can branch on it.
      if (typeof job.version === "number") Object.assign(instance, { jobVersion: job.version });
      // The value is kept here, innermost, so an aroundPerform that drops it cannot lose it.
      let perform = () =>
        Promise.resolve(instance.perform(...(resolved ? resolved.prepare(instance) : job.args))).then((value) => {
          returned = value;
          return value;
        });
      for (const around of this.aroundPerforms) {
        const inner = perform;
        perform = () => around(inner, job, unit.queue);
      }
      // No async wrappers on the way in: each promise costs every job a hook call under its scope.
      let run = (): Promise<unknown> => this.middleware.invoke([instance, job, unit.queue], perform);
      for (const around of this.arounds) {
        const inner = run;
        run = () => around(inner, instance, job, unit.queue, slot.controller);
      }
      await run();
      if (slot.abandoned) return;
      outcome = { status: "done", durationSeconds: (performance.now() - started) / 1000 };
      this.ctx.execution?.succeeded(displayClass(job), outcome.durationSeconds * 1000);
    } catch (thrown) {
      if (slot.abandoned) return;
      if (thrown instanceof JobInterrupted && (await this.requeueInterrupted(job, unit, started))) return;
      const halted = haltStatus(thrown, job);
      if (halted) {
        if (halted === "cancelled") failure = thrown as Error;
        outcome = { status: halted, durationSeconds: (performance.now() - started) / 1000 };
        if (thrown instanceof JobSuspended) outcome.why = thrown.why;
        this.ctx.execution?.succeeded(displayClass(job), outcome.durationSeconds * 1000); // not a failure
      } else {
        const failed = await this.fail(job, unit, klass, packed, thrown, started);
        if (!failed) return;
        outcome = failed;
        failure = toError(thrown);
      }
    }
    this.ctx.state.countProcessed(outcome.status === "failed" || outcome.status === "dead");
    let held: Promise<void>[] | undefined;
    for (const onEnd of this.onEnds) {
      const wait = onEnd(job, unit.queue, { outcome, result: returned, error: failure });
      if (wait) (held ??= []).push(wait);
    }
    const acknowledged = unit.acknowledge();
    if (acknowledged) await acknowledged;
    if (held) await Promise.all(held);
    if (outcome.status === "done") lines.done(round(outcome.durationSeconds * 1000));
    events.emit("end", job, unit.queue, outcome);
  }

  /**
   * An iterable job saved its cursor and asks to run again later: back to the end of its queue with the
   * same jid (Sidekiq's InterruptHandler re-pushes it and raises Skip). Processed, not a failure. False
   * when Redis refused the requeue: the job then fails like any other (a retry keeps its jid and cursor).
   */
  private async requeueInterrupted(job: JobPayload, unit: UnitOfWork, started: number): Promise<boolean> {
    try {
      await unit.requeue({ atBack: true });
    } catch (error) {
      this.ctx.logger.warn({ err: error }, "could not requeue the interrupted job; it goes to retries instead");
      return false;
    }
    const durationSeconds = (performance.now() - started) / 1000;
    this.ctx.logger.info({ elapsed_ms: round(durationSeconds * 1000) }, "interrupted; requeued to resume");
    this.ctx.execution?.succeeded(displayClass(job), durationSeconds * 1000); // timed, as Sidekiq's Skip
    this.ctx.state.countProcessed(false);
    this.ctx.events.emit("end", job, unit.queue, { status: "suspended", durationSeconds, why: "interrupted" });
    return true;
  }

  /** A failure: JobRetry decides between failed (retried) and dead. Undefined: back in a queue, nothing to ack. */
  private async fail(
    job: JobPayload,
    unit: UnitOfWork,
    klass: RunnableClass | undefined,
    packed: PackedArgs | undefined,
    thrown: unknown,
    started: number,
  ): Promise<JobOutcome | undefined> {
    if (packed) repackArgs(job, packed);
    // Counted once the class ran (Sidekiq's metrics middleware never sees an unknown class).
    if (klass) this.ctx.execution?.failed(displayClass(job));
    const error = toError(thrown);
    const disposition = await this.settleFailure(job, error, klass, unit);
    if (disposition === undefined) return undefined;
    const durationSeconds = (performance.now() - started) / 1000;
    const status = disposition === "retried" ? "failed" : "dead";
    this.ctx.logger.warn(
      {
        elapsed_ms: round(durationSeconds * 1000),
        status: "fail",
        disposition,
        error_class: errorClassName(error),
        error_message: error.message,
      },
      "fail",
    );
    return { status, durationSeconds, disposition };
  }

  /**
   * Hands the failure to JobRetry; if even that fails (the payload cannot be serialized, Redis refused
   * the write), FailureFallback requeues it at the end of its queue, then buries it. Undefined: the job
   * went back to a queue (nothing to acknowledge).
   */
  private async settleFailure(
    job: JobPayload,
    error: Error,
    klass: Parameters<JobRetry["handle"]>[2],
    unit: UnitOfWork,
  ): Promise<JobOutcome["disposition"] | undefined> {
    try {
      return await this.retry.handle(job, error, klass);
    } catch (retryError) {
      return (await this.fallback.settle(unit, job, error, retryError)) === "dead" ? "dead" : undefined;
    }
  }

  /** A job that is not a valid payload can never run: keep it in the dead set for a human. */
  private async bury(unit: UnitOfWork, error: Error): Promise<void> {
    this.ctx.logger.error(
      { queue: unit.queue, error_message: error.message, job: unit.job.slice(0, 1000) },
      "malformed job moved to the dead set",
    );
    await sendToMorgue(this.ctx.redis, unit.raw, this.ctx.options);
    this.ctx.state.countProcessed(true);
    await unit.acknowledge();
  }

  private resolve(job: JobPayload): ReturnType<NonNullable<ServerHooks["resolveClass"]>> {
    for (const resolver of this.resolvers) {
      const found = resolver(job);
      if (found) return found;
    }
    return undefined;
  }

  private unknownClass(name: string): UnknownJobError {
    const known = this.ctx.registry.names();
    return new UnknownJobError(
      `no job class named "${name}" is registered in this process (registered: ${known.join(", ") || "none"}); ` +
        "export it from the -r module. The job will be retried, since another process may know it.",
    );
  }
}

/** The end a thrown value asks for without a failure: a suspension, or a cancel of this very job. */
function haltStatus(thrown: unknown, job: JobPayload): "suspended" | "cancelled" | undefined {
  if (thrown instanceof JobSuspended) return "suspended";
  return thrown instanceof JobCancelledError && thrown.jid === job.jid ? "cancelled" : undefined;
}

function round(ms: number): number {
  return Math.round(ms * 1000) / 1000;
}
