/**
 * Drops an expired job before it starts (before server middleware and `perform`), as Sidekiq Pro's
 * expiring jobs: acknowledged without running, logged with its jid, class and how late it is, counted
 * (`expired` event → tsq_jobs_expired_total), never retried.
 *
 * The deadline is `expires_at` when tsq's client stamped it (see stamp.ts). A job pushed by Ruby
 * carries only `expires_in`, whose stored encoding in Sidekiq Pro is unverified: it is counted from
 * `enqueued_at` (for a scheduled job, when it left the schedule; for a retry, its latest enqueue), so a
 * job is never dropped earlier than its scheduled time plus `expires_in`.
 */
import { displayClass, type JobPayload } from "../../../wire/payload.js";
import type { ServerContext } from "../../../server/context.js";
import type { UnitOfWork } from "../../../server/fetch/unitOfWork.js";
import { toEpochSeconds } from "../../../wire/timestamps.js";

type ExpiryContext = Pick<ServerContext, "logger" | "events">;

/** Epoch seconds after which the job must not start, or undefined when it does not expire. */
export function deadlineOf(job: JobPayload): number | undefined {
  const at = job.expires_at;
  if (typeof at === "number" && Number.isFinite(at)) return at;
  const expiresIn = job.expires_in;
  if (typeof expiresIn !== "number" || !(expiresIn > 0)) return undefined; // hostile or absent: the job runs
  const from = toEpochSeconds(job.enqueued_at) ?? toEpochSeconds(job.created_at);
  return from === undefined ? undefined : from + expiresIn;
}

/**
 * False at once (no promise, two property reads) for a job without an expiry or not yet expired: the
 * per-job cost. Otherwise the job is acknowledged and dropped, and the promise resolves true.
 */
export function dropIfExpired(ctx: ExpiryContext, job: JobPayload, unit: UnitOfWork): false | Promise<true> {
  if (job.expires_at === undefined && job.expires_in === undefined) return false;
  const deadline = deadlineOf(job);
  if (deadline === undefined) return false;
  const late = Date.now() / 1000 - deadline;
  if (!(late > 0)) return false;
  return drop(ctx, job, unit, late);
}

async function drop(ctx: ExpiryContext, job: JobPayload, unit: UnitOfWork, late: number): Promise<true> {
  await unit.acknowledge();
  const lateSeconds = Math.round(late * 1000) / 1000;
  ctx.logger.warn(
    { jid: job.jid, class: displayClass(job), job_status: "expired", late_s: lateSeconds, expires_in: job.expires_in },
    `job ${job.jid} (${displayClass(job)}) expired ${lateSeconds} s ago; dropped without running`,
  );
  ctx.events.emit("expired", job, unit.queue);
  return true;
}
