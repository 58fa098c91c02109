/** Unique jobs' counter in a worker's metrics, counted where the push is refused, as deduplicated pushes are. */
import type { MetricsSeam } from "../../../server/plugin.js";

export function uniqueMetrics(seam: MetricsSeam): void {
  const rejected = seam.counter(
    "tsq_jobs_unique_rejected_total",
    "Pushes of unique jobs refused because another job held the lock (docs/unique-jobs.md).",
  );
  seam.onClient("uniqueRejected", (job, queue) => rejected.get(seam.labels(job, queue)).inc());
}
