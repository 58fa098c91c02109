/** The concurrency limits' own error (exported from the package root). */
import { PushRefusedError } from "../../../wire/errors.js";

/**
 * A job of a concurrency-limited class found no free slot and its class's parked list is full
 * (`concurrency_limit_max_parked`). The job is not parked. At run time it fails like any other (retry
 * with back-off, then dead); at push the push fails and `jids` names the jobs not enqueued (the other
 * jobs of the same write were). An overload is loud instead of growing Redis without bound (GitLab's
 * documented flaw). The keyed rate limits throw it too, for a full parked list of a limit key.
 */
export class ConcurrencyLimitFullError extends PushRefusedError {
  override name = "ConcurrencyLimitFullError";
}
