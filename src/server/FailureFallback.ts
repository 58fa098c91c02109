/**
 * FailureFallback: a job raised and JobRetry could not record the failure: the payload cannot be
 * serialized again (args nested thousands deep overflow the stack), or Redis refused the write (out of
 * memory). Putting the job back at the front of its queue, as before, fetched it again at once, forever,
 * at 100% CPU, starving every other job of its queue. Instead:
 *
 *   attempts 1 .. MAX_ATTEMPTS-1   back to the END of its queue, so the jobs already waiting run first
 *   attempt MAX_ATTEMPTS           its exact bytes go to `dead`, annotated without being re-serialized
 *                                  (error_class, error_message, failed_at appended to the JSON text;
 *                                  the last duplicate key wins in Ruby's and JavaScript's parsers)
 *
 * Every attempt is logged with its count and counted in `tsq_jobs_failure_unrecorded_total`. Attempts
 * are counted per process by jid (a bounded map), so in a cluster a job bounces at most
 * MAX_ATTEMPTS times per child before one of them buries it.
 */
import { randomUUID } from "node:crypto";
import type { JobPayload } from "../wire/payload.js";
import { explainRedisError } from "../platform/redis/errors.js";
import { formatTimestampJson, nowStamp } from "../wire/timestamps.js";
import { errorClassName } from "./JobRetry.js";
import type { ServerContext } from "./context.js";
import { sendToMorgue } from "./morgue.js";
import type { UnitOfWork } from "./fetch/unitOfWork.js";

/** Failed attempts to record a failure before the job is buried as it is. */
export const MAX_ATTEMPTS = 3;
/** jids remembered; the oldest is forgotten first. A few KB. */
const REMEMBERED = 1000;

export type Fallback = "requeued" | "dead" | "lost";

export class FailureFallback {
  private readonly attempts = new Map<string, number>();

  constructor(private readonly ctx: ServerContext) {}

  /** Settles a job whose failure `recordError` kept JobRetry from recording. Never throws. */
  async settle(unit: UnitOfWork, job: JobPayload, error: Error, recordError: unknown): Promise<Fallback> {
    const key = job.jid || randomUUID();
    const attempt = (this.attempts.get(key) ?? 0) + 1;
    this.attempts.delete(key);
    const reason = describe(recordError);
    const fields = { attempt, max_attempts: MAX_ATTEMPTS, err: recordError, error_class: errorClassName(error) };
    this.ctx.events.emit("unrecorded", job, unit.queue);
    if (attempt < MAX_ATTEMPTS) {
      this.remember(key, attempt);
      this.ctx.logger.error(fields, `could not record the job's failure (${reason}); it goes to the end of its queue`);
      try {
        await unit.requeue({ atBack: true });
        return "requeued";
      } catch (requeueError) {
        return this.lost(unit, requeueError);
      }
    }
    this.ctx.logger.error(
      fields,
      `could not record the job's failure (${reason}) ${attempt} times; moving it to the dead set as it is`,
    );
    try {
      // The caller acknowledges it, as for any job that ended in the dead set.
      await sendToMorgue(this.ctx.redis, annotate(unit.raw, error, reason, attempt, this.ctx), this.ctx.options);
      await this.ctx.locks.release([unit.raw]).catch(() => 0); // dead: its locks go (or expire)
      return "dead";
    } catch (buryError) {
      this.remember(key, attempt - 1);
      try {
        await unit.requeue({ atBack: true });
        return "requeued";
      } catch {
        return this.lost(unit, buryError);
      }
    }
  }

  private remember(key: string, attempt: number): void {
    this.attempts.set(key, attempt);
    if (this.attempts.size > REMEMBERED) this.attempts.delete(this.attempts.keys().next().value!);
  }

  /** Neither the dead set nor the queue took it: the payload goes to the log (basic fetch holds it nowhere else). */
  private lost(unit: UnitOfWork, error: unknown): Fallback {
    const reliable = this.ctx.options.fetch === "reliable";
    this.ctx.logger.error(
      { err: error, queue: unit.queue, payload: reliable ? undefined : unit.job },
      reliable
        ? "could not requeue the job either; it stays in this process's private list and is recovered later"
        : "could not requeue the job either; its payload is in this line, push it again to run it",
    );
    return "lost";
  }
}

/**
 * The stored bytes with error fields appended before the closing brace: the payload itself could not
 * be serialized again, and its bytes (which need not be UTF-8) are kept exactly.
 */
export function annotate(raw: Buffer, error: Error, reason: string, attempts: number, ctx: ServerContext): Buffer {
  const end = raw.lastIndexOf(0x7d); // "}"
  if (end < 0) return raw;
  const now = formatTimestampJson(nowStamp(ctx.timestampFormat));
  const message =
    `${error.message.slice(0, ctx.options.maxErrorMessageLength)} ` +
    `(tsq could not record this failure ${attempts} times: ${reason}; moved to the dead set without retrying)`;
  const fields =
    `,"error_class":${JSON.stringify(errorClassName(error))},"error_message":${JSON.stringify(message.toWellFormed())}` +
    `,"failed_at":${now},"unrecorded_failure":true`;
  return Buffer.concat([raw.subarray(0, end), Buffer.from(fields), raw.subarray(end)]);
}

function describe(error: unknown): string {
  const problem = explainRedisError(error);
  const text =
    problem.condition !== "other"
      ? problem.advice
      : error instanceof Error
        ? `${error.name}: ${error.message}`
        : String(error);
  return text.length > 300 ? `${text.slice(0, 297)}...` : text;
}
