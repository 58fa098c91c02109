/**
 * JobRetry: what happens to a job that raised. Sidekiq's `JobRetry#attempt_retry` and
 * `retries_exhausted`, field for field:
 *
 *   retry: false          death handlers only; the job is dropped (no retry set, no dead set)
 *   retry: true | N       retry_count 0 on the first failure (failed_at), +1 after (retried_at);
 *                         exhausted when retry_count >= N (25 for true) or, with retry_for,
 *                         when failed_at + retry_for < now
 *   not exhausted         ZADD retry <now + delay + jitter>; delay = count**4 + 15 s unless the
 *                         class's retryIn() says otherwise; jitter = rand(10 * (count + 1)) s
 *   exhausted             retriesExhausted() hook, then the dead set unless `dead: false` or the hook
 *                         returned "discard"; then death handlers
 *
 * Locks of the lock core follow the job: one that will not run again (dead, dropped, discarded, killed)
 * releases the locks it holds; one waiting to retry keeps its unique lock until its retry time plus
 * `unique_for` (the plug-ins' `locks.release`, server/plugin.ts).
 */
import { deflateSync } from "node:zlib";
import { RETRY } from "../wire/keys.js";
import { dumpPayload, type JobPayload } from "../wire/payload.js";
import { formatSeconds, nowSeconds, nowStamp, toEpochSeconds } from "../wire/timestamps.js";
import { sendToMorgue } from "./morgue.js";
import type { JobOutcome, ServerContext } from "./context.js";
import type { RunnableClass } from "./Registry.js";

type Disposition = NonNullable<JobOutcome["disposition"]>;

/** The class name Sidekiq would record: a subclass's own name even when it did not set `name`. */
export function errorClassName(error: Error): string {
  const ctorName = (error as { constructor?: { name?: string } }).constructor?.name;
  if (ctorName && ctorName !== "Error" && ctorName !== "Object") return ctorName;
  return error.name || "Error";
}

export function toError(thrown: unknown): Error {
  if (thrown instanceof Error) return thrown;
  const error = new Error(typeof thrown === "string" ? thrown : `non-Error thrown: ${JSON.stringify(thrown)}`);
  error.name = "NonErrorThrown";
  return error;
}

/** Stack frames as Sidekiq stores them: base64 of zlib-deflated JSON lines. */
export function encodeBacktrace(error: Error, limit: boolean | number): string {
  const frames = (error.stack ?? "")
    .split("\n")
    .slice(1)
    .map((line) => line.trim().replace(/^at /, ""))
    .filter((line) => line !== "");
  const kept = typeof limit === "number" ? frames.slice(0, limit) : frames;
  return deflateSync(Buffer.from(JSON.stringify(kept))).toString("base64");
}

export class JobRetry {
  constructor(private readonly ctx: ServerContext) {}

  /** Records the failure and decides the job's fate. Returns what happened to it. */
  async handle(job: JobPayload, thrown: unknown, klass: RunnableClass | undefined): Promise<Disposition> {
    const disposition = await this.decide(job, toError(thrown), klass);
    if (disposition !== "retried") await this.releaseLocks(job);
    return disposition;
  }

  private async decide(job: JobPayload, error: Error, klass: RunnableClass | undefined): Promise<Disposition> {
    if (job.retry === false) {
      await this.runDeathHandlers(job, error);
      return "dropped";
    }
    const max = typeof job.retry === "number" ? job.retry : this.ctx.options.maxRetries;
    this.annotate(job, error);
    const count = job.retry_count ?? 0;

    let exhausted = this.exhausted(job, count, max);
    let delay: number | undefined;
    if (!exhausted) {
      const hint = this.callHook(() => klass?.retryIn?.(count, error, job), "retryIn");
      if (hint === "discard") {
        job.discarded_at = Date.now();
        await this.runDeathHandlers(job, error);
        return "discarded";
      }
      if (hint === "kill") exhausted = true;
      else if (typeof hint === "number" && hint > 0) delay = hint;
    }
    if (exhausted) return this.exhaust(job, error, klass);

    const seconds = (delay ?? count ** 4 + 15) + Math.floor(Math.random() * 10 * (count + 1));
    const retryAt = nowSeconds() + seconds;
    await this.ctx.redis.zadd(RETRY, formatSeconds(retryAt), dumpPayload(job));
    await this.guardLocks(job, () => this.ctx.locks.keepForRetry(job, retryAt));
    this.ctx.logger.debug({ jid: job.jid, retry_in_s: seconds, retry_count: count }, "scheduled retry");
    return "retried";
  }

  /** Kills a job without retrying (unknown-class exhaustion, poison pills, API kill). */
  async kill(job: JobPayload, error: Error): Promise<void> {
    this.annotate(job, error);
    await sendToMorgue(this.ctx.redis, dumpPayload(job), this.ctx.options);
    await this.releaseLocks(job);
    await this.runDeathHandlers(job, error);
  }

  /** The job will not run again: the dedup and unique locks it holds go (Enterprise's death handler, #4162). */
  private releaseLocks(job: JobPayload): Promise<void> {
    return this.guardLocks(job, () => this.ctx.locks.release([job]));
  }

  /** A lock that cannot be updated expires by itself: logged, never a reason to lose the failure. */
  private async guardLocks(job: JobPayload, fn: () => Promise<unknown>): Promise<void> {
    try {
      await fn();
    } catch (error) {
      this.ctx.logger.warn({ err: error, jid: job.jid }, "could not update the job's locks; they expire by themselves");
    }
  }

  private annotate(job: JobPayload, error: Error): void {
    const now = nowStamp(this.ctx.timestampFormat);
    if (job.retry_queue) job.queue = job.retry_queue;
    job.error_message = this.truncate(error.message);
    job.error_class = errorClassName(error);
    if (typeof job.retry_count === "number") {
      job.retried_at = now;
      job.retry_count += 1;
    } else {
      job.failed_at = now;
      job.retry_count = 0;
    }
    if (job.backtrace) job.error_backtrace = encodeBacktrace(error, job.backtrace);
  }

  private exhausted(job: JobPayload, count: number, max: number): boolean {
    if (typeof job.retry_for === "number") {
      const failedAt = toEpochSeconds(job.failed_at) ?? nowSeconds();
      return failedAt + job.retry_for < nowSeconds();
    }
    return count >= max;
  }

  private async exhaust(job: JobPayload, error: Error, klass: RunnableClass | undefined): Promise<Disposition> {
    const hook = this.callHook(() => klass?.retriesExhausted?.(job, error), "retriesExhausted");
    const discard = hook === "discard";
    if (!discard && job.dead !== false) {
      await sendToMorgue(this.ctx.redis, dumpPayload(job), this.ctx.options);
    }
    await this.runDeathHandlers(job, error);
    return discard || job.dead === false ? "discarded" : "dead";
  }

  /** Hooks are user code: an exception in one is logged and ignored, as Sidekiq does. */
  private callHook(fn: () => unknown, name: string): unknown {
    try {
      return fn();
    } catch (hookError) {
      this.ctx.logger.error({ err: hookError }, `${name} hook raised; using the default behaviour`);
      return undefined;
    }
  }

  private async runDeathHandlers(job: JobPayload, error: Error): Promise<void> {
    for (const handler of this.ctx.deathHandlers) {
      try {
        await handler(job, error);
      } catch (handlerError) {
        this.ctx.logger.error({ err: handlerError, jid: job.jid }, "death handler raised");
      }
    }
  }

  private truncate(message: string): string {
    const max = this.ctx.options.maxErrorMessageLength;
    const text = message.toWellFormed?.() ?? message;
    return text.length > max ? text.slice(0, max) : text;
  }
}
