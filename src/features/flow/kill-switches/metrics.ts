/** The kill switches' counters in a worker's metrics: jobs a switch deferred or dropped instead of running. */
import type { MetricsSeam } from "../../../server/plugin.js";

export function killSwitchMetrics(seam: MetricsSeam): void {
  const deferred = seam.counter(
    "tsq_jobs_deferred_total",
    "Jobs re-scheduled instead of run because a kill switch defers their class (tsqctl defer).",
  );
  const dropped = seam.counter(
    "tsq_jobs_dropped_total",
    "Jobs discarded without running because a kill switch drops their class (tsqctl drop).",
  );
  seam.onJob("switched", (job, queue, action) =>
    (action === "deferred" ? deferred : dropped).get(seam.labels(job, queue)).inc(),
  );
}
