/**
 * The error a rate limiter throws when a call does not fit and its `waitTimeout` ran out (Sidekiq
 * Enterprise's `Sidekiq::Limiter::OverLimit`). Thrown out of a job's perform, the server reschedules
 * the job instead of failing it (reschedule.ts); anywhere else it is an ordinary error.
 */
import { TsqError } from "../../../wire/errors.js";

/** Seconds to wait before the `overrated`-th reschedule of a job (1 for the first). */
export type Backoff = (overrated: number, error: OverLimitError) => number;

export class OverLimitError extends TsqError {
  override name = "OverLimitError";

  constructor(
    /** The limiter's kind and name, e.g. `window stripe-42`. */
    readonly limiter: string,
    /** Ms until the limiter is expected to have room (a guess for `concurrent`: a lease may free anytime). */
    readonly retryAfterMs: number,
    /** Most reschedules of one job for this limiter before the error goes to ordinary retries. */
    readonly reschedule: number,
    /** Per-limiter back-off, or undefined for the configured one. */
    readonly backoff: Backoff | undefined,
  ) {
    super(
      `rate limiter ${limiter} is over its limit (room again in about ${Math.ceil(retryAfterMs / 1000)} s); ` +
        "inside a job the job is rescheduled, elsewhere retry later or give the limiter a waitTimeout",
    );
  }
}
