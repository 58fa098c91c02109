/**
 * Processor: runs one fetched job through the execution pipeline, as Sidekiq's `Processor#process`:
 *
 *   parse (invalid → dead set) → work state → job logger → class lookup → server middleware →
 *   perform(...args) → stats → JobRetry on failure → acknowledge
 *
 * A job abandoned by a hard shutdown has already been requeued, so nothing is recorded for it.
 */
import { performance } from "node:perf_hooks";
import { UnknownJobError } from "../errors.js";
import { displayClass, parsePayload, type JobPayload } from "../payload.js";
import { withJobContext } from "../logger.js";
import type { Chain } from "../middleware/Chain.js";
import type { ServerContext, ServerMiddlewareArgs, JobOutcome } from "./context.js";
import { JobRetry, errorClassName, toError } from "./JobRetry.js";
import { sendToMorgue } from "./morgue.js";
import type { UnitOfWork } from "./unitOfWork.js";

/** One concurrent job slot of a capsule; `tid` names it in the work hash. */
export interface Slot {
  readonly tid: string;
  controller: AbortController;
  /** Set by a hard shutdown after the job was requeued. */
  abandoned: boolean;
}

export class Processor {
  private readonly retry: JobRetry;

  constructor(
    private readonly ctx: ServerContext,
    private readonly middleware: Chain<ServerMiddlewareArgs>,
  ) {
    this.retry = new JobRetry(ctx);
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
      await withJobContext({ jid: job.jid, class: displayClass(job), queue: unit.queue }, () =>
        this.execute(job, unit, slot),
      );
    } finally {
      this.ctx.state.end(slot.tid);
    }
  }

  private async execute(job: JobPayload, unit: UnitOfWork, slot: Slot): Promise<void> {
    const { logger, events } = this.ctx;
    const started = performance.now();
    logger.info("start");
    events.emit("start", job, unit.queue);
    const klass = this.ctx.registry.get(job.class);
    let outcome: JobOutcome;
    try {
      if (!klass) throw this.unknownClass(job.class);
      const instance = new klass();
      Object.assign(instance, { jid: job.jid, payload: job, signal: slot.controller.signal });
      await this.middleware.invoke([instance, job, unit.queue], async () => {
        await instance.perform(...job.args);
      });
      if (slot.abandoned) return;
      outcome = { status: "done", durationSeconds: (performance.now() - started) / 1000 };
    } catch (thrown) {
      if (slot.abandoned) return;
      const error = toError(thrown);
      const disposition = await this.settleFailure(job, error, klass, unit);
      if (disposition === undefined) return;
      outcome = { status: "fail", durationSeconds: (performance.now() - started) / 1000, disposition };
      logger.warn(
        { elapsed_ms: round(outcome.durationSeconds * 1000), status: "fail", disposition, error_class: errorClassName(error), error_message: error.message },
        "fail",
      );
    }
    this.ctx.state.countProcessed(outcome.status === "fail");
    await unit.acknowledge();
    if (outcome.status === "done") logger.info({ elapsed_ms: round(outcome.durationSeconds * 1000), status: "done" }, "done");
    events.emit("end", job, unit.queue, outcome);
  }

  /** Hands the failure to JobRetry; if even that fails (Redis refused the write), requeues the job. */
  private async settleFailure(
    job: JobPayload,
    error: Error,
    klass: Parameters<JobRetry["handle"]>[2],
    unit: UnitOfWork,
  ): Promise<JobOutcome["disposition"] | undefined> {
    try {
      return await this.retry.handle(job, error, klass);
    } catch (retryError) {
      this.ctx.logger.error({ err: retryError }, "could not record the failure; requeueing the job");
      await unit.requeue().catch((requeueError: unknown) =>
        this.ctx.logger.error({ err: requeueError, job: unit.job }, "requeue failed; the job is in this log line"),
      );
      return undefined;
    }
  }

  /** A job that is not a valid payload can never run: keep it in the dead set for a human. */
  private async bury(unit: UnitOfWork, error: Error): Promise<void> {
    this.ctx.logger.error(
      { queue: unit.queue, error_message: error.message, job: unit.job.slice(0, 1000) },
      "malformed job moved to the dead set",
    );
    await sendToMorgue(this.ctx.redis, unit.job, this.ctx.options);
    this.ctx.state.countProcessed(true);
    await unit.acknowledge();
  }

  private unknownClass(name: string): UnknownJobError {
    const known = this.ctx.registry.names();
    return new UnknownJobError(
      `no job class named "${name}" is registered in this process (registered: ${known.join(", ") || "none"}); ` +
        "export it from the -r module. The job will be retried, since another process may know it.",
    );
  }
}

function round(ms: number): number {
  return Math.round(ms * 1000) / 1000;
}
