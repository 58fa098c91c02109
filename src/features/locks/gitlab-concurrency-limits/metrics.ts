/**
 * Concurrency limits in the metrics. A worker's counters, counted where the job parks or is refused: at
 * push in the pushing process (its client's `limited`), at fetch in a worker (its `limited`). The
 * fleet's slots and parked jobs per limited class, read from Redis at each scrape: HGETALL tsq:limits,
 * then per class HVALS of its slots and LLEN of its parked list (status.ts).
 */
import type { Redis } from "ioredis";
import type { FeatureGauge, MetricsSeam } from "../../../server/plugin.js";
import type { JobPayload } from "../../../wire/payload.js";
import { readLimits } from "./status.js";

export function concurrencyLimitMetrics(seam: MetricsSeam): void {
  const parked = seam.counter(
    "tsq_jobs_parked_total",
    "Jobs parked instead of run because their class's concurrency limit was reached or is paused (docs/concurrency-limits.md).",
  );
  const refused = seam.counter(
    "tsq_jobs_concurrency_limit_refused_total",
    "Jobs refused because their class's parked list was full (concurrency_limit_max_parked): pushes that failed, or jobs sent to retries.",
  );
  const count = (job: JobPayload, queue: string, action: "parked" | "refused") =>
    (action === "parked" ? parked : refused).get(seam.labels(job, queue)).inc();
  seam.onJob("limited", count);
  seam.onClient("limited", count);
}

export async function concurrencyLimitGauges(redis: Redis): Promise<FeatureGauge[]> {
  const limits = await readLimits(redis);
  return [
    {
      name: "tsq_concurrency_limit_parked_jobs",
      help: "Jobs of a concurrency-limited class parked, waiting for a slot.",
      values: limits.map((l) => ({ value: l.parked, labels: { class: l.class } })),
    },
    {
      name: "tsq_concurrency_limit_running_jobs",
      help: "Slots of a concurrency-limited class held (running jobs, and resumed ones on their way to a worker).",
      values: limits.map((l) => ({ value: l.running, labels: { class: l.class } })),
    },
    {
      name: "tsq_concurrency_limit",
      help: "A class's concurrency limit as a worker last read it: > 0 slots, 0 none, < 0 paused.",
      values: limits.filter((l) => !Number.isNaN(l.limit)).map((l) => ({ value: l.limit, labels: { class: l.class } })),
    },
  ];
}
