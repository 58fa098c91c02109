/**
 * Deduplication's counter in a worker's metrics, counted where the push is dropped: in a worker, pushes
 * from its jobs and its poller's re-checks (its client's `deduplicated`).
 */
import type { MetricsSeam } from "../../../server/plugin.js";

export function deduplicationMetrics(seam: MetricsSeam): void {
  const deduplicated = seam.counter(
    "tsq_jobs_deduplicated_total",
    "Pushes of idempotent jobs dropped because the same job was already enqueued (docs/deduplication.md).",
  );
  seam.onClient("deduplicated", (job, queue) => deduplicated.get(seam.labels(job, queue)).inc());
}
