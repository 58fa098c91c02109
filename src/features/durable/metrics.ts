/**
 * Durable jobs in the metrics: a worker's counters of its run control's acts (timed out, abandoned), and
 * the fleet's parked jobs read from Redis at each scrape (status.ts: one pipelined round trip).
 */
import type { Redis } from "ioredis";
import type { FeatureGauge, MetricsSeam } from "../../server/plugin.js";
import { countParked } from "./status.js";

export function durableMetrics(seam: MetricsSeam): void {
  const timedOut = seam.counter(
    "tsq_jobs_timed_out_total",
    "Jobs failed because they ran past their timeout (static timeout or the push's timeout); retried per policy (docs/durable.md).",
  );
  const abandoned = seam.counter(
    "tsq_jobs_abandoned_total",
    "Jobs whose promise was left running because they ignored their abort signal past the grace; their slot was freed (docs/durable.md).",
  );
  seam.onJob("durable", (job, queue, outcome) =>
    (outcome === "timedOut" ? timedOut : abandoned).get(seam.labels(job, queue)).inc(),
  );
}

export async function durableGauges(redis: Redis): Promise<FeatureGauge[]> {
  const parked = await countParked(redis);
  return [
    {
      name: "tsq_durable_waiting",
      help: "Durable jobs parked on an event (waitFor), neither signalled nor past their deadline.",
      values: [{ value: parked.waiting, labels: {} }],
    },
    {
      name: "tsq_durable_sleeping",
      help: "Durable jobs sleeping (sleep, sleepUntil) until a time still to come.",
      values: [{ value: parked.sleeping, labels: {} }],
    },
  ];
}
