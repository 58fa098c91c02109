/** Expiry's counter in a worker's metrics: jobs dropped before they started because their deadline had passed. */
import type { MetricsSeam } from "../../../server/plugin.js";

export function expiryMetrics(seam: MetricsSeam): void {
  const expired = seam.counter(
    "tsq_jobs_expired_total",
    "Jobs dropped without running because their expiresIn (expires_in) had passed (docs/flow-control.md).",
  );
  seam.onJob("expired", (job, queue) => expired.get(seam.labels(job, queue)).inc());
}
