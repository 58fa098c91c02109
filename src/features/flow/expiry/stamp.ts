/**
 * Expiring jobs at push (Sidekiq Pro's `expires_in`): the option travels as `expires_in` (seconds) and
 * tsq's client also stamps the absolute deadline `expires_at` (epoch seconds, float), counted from the
 * job's scheduled time: `at` for a scheduled job, else its creation. Stamped at push because a
 * scheduled job's `at` leaves the payload when it is stored (it becomes the `schedule` score): a worker
 * could not tell the scheduled time from a late poller's enqueue.
 */
import { ArgumentError } from "../../../wire/errors.js";
import type { JobPayload } from "../../../wire/payload.js";
import { toEpochSeconds } from "../../../wire/timestamps.js";

/** Relative seconds only: anything this large is an epoch time given by mistake. */
const MAX_EXPIRES_IN = 1_000_000_000;

/** Validates `expires_in` and sets `expires_at`, unless the job already carries one (a re-push). */
export function stampExpiry(job: JobPayload, className: string): void {
  const expiresIn = job.expires_in;
  if (expiresIn === undefined) return;
  if (typeof expiresIn !== "number" || !(expiresIn > 0 && expiresIn < MAX_EXPIRES_IN)) {
    throw new ArgumentError(
      `push: expires_in (expiresIn) for ${className} must be a number of seconds > 0 and < 1e9, relative to the scheduled time`,
    );
  }
  if (typeof job.expires_at === "number") return;
  const from = typeof job.at === "number" ? job.at : (toEpochSeconds(job.created_at) ?? Date.now() / 1000);
  job.expires_at = from + expiresIn;
}
