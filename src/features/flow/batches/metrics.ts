/**
 * Batches' counter in a worker's metrics: callbacks fired, counted in the process whose event fired the
 * callback (its client's `batchFired`), so each callback once across the fleet.
 */
import type { MetricsSeam } from "../../../server/plugin.js";

export function batchMetrics(seam: MetricsSeam): void {
  const fired = seam.counter(
    "tsq_batch_callbacks_total",
    "Batch callbacks fired (pushed), by event: complete, success, death, settled (docs/batches.md).",
  );
  seam.onClient("batchFired", (_bid, event) => fired.get({ event }).inc());
}
