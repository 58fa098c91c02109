/**
 * Rate limits in the metrics, split between the two plug-ins as their work is:
 *
 *   keyed-rate-limits       jobs a class's `static limit` parked or refused (tsq_limited_jobs_total), and
 *                           the fleet's jobs parked on their keys (HGETALL tsq:rl-waiting, per scrape)
 *   over-limit-reschedule   jobs rescheduled by an OverLimitError (the same counter), the fleet's total
 *                           of them (GET tsq:stat:overrated, per scrape), and this worker's slots waiting
 *                           inside a Limiter's waitTimeout now
 */
import type { Redis } from "ioredis";
import type { FeatureCounter, FeatureGauge, MetricsSeam } from "../../../server/plugin.js";
import { KEYED_WAITING, STAT_OVERRATED } from "../../../wire/keys.js";

/** One counter, its `action` label telling the two plug-ins' counts apart. */
function limitedJobs(seam: MetricsSeam): FeatureCounter {
  return seam.counter(
    "tsq_limited_jobs_total",
    "Jobs a rate limit kept from running now: action parked (a class's static limit), refused (its key's parked list full) or rescheduled (OverLimit in perform) (docs/rate-limits.md).",
  );
}

export function keyedLimitMetrics(seam: MetricsSeam): void {
  const limited = limitedJobs(seam);
  seam.onJob("rateLimited", (job, queue, action) => {
    if (action !== "rescheduled") limited.get({ ...seam.labels(job, queue), action }).inc();
  });
}

export async function keyedLimitGauges(redis: Redis): Promise<FeatureGauge[]> {
  const waiting = await redis.hgetall(KEYED_WAITING);
  return [
    {
      name: "tsq_limit_waiting",
      help: "Jobs of a class parked on its keyed `static limit`, waiting for their key (docs/rate-limits.md).",
      values: Object.entries(waiting).map(([klass, n]) => ({ value: Number(n), labels: { class: klass } })),
    },
  ];
}

export function overLimitMetrics(seam: MetricsSeam): void {
  const limited = limitedJobs(seam);
  seam.onJob("rateLimited", (job, queue, action) => {
    if (action === "rescheduled") limited.get({ ...seam.labels(job, queue), action }).inc();
  });
  // Calls of this worker's jobs inside a waitTimeout now (Limiter.ts announces each start and end).
  let waiting = 0;
  seam.onClient("limiterWait", (change) => (waiting = Math.max(0, waiting + change)));
  new seam.prom.Gauge({
    name: "tsq_limit_slots_waiting",
    help: "Worker slots waiting inside a rate limiter's waitTimeout now (0 unless a limiter is given one; docs/rate-limits.md).",
    registers: [seam.registry],
    collect() {
      this.set(waiting);
    },
  });
}

export async function overLimitGauges(redis: Redis): Promise<FeatureGauge[]> {
  const overrated = Number((await redis.get(STAT_OVERRATED)) ?? 0);
  return [
    {
      name: "tsq_overrated",
      help: "Jobs rescheduled because a rate limiter was over its limit, all time (tsq:stat:overrated).",
      values: [{ value: overrated, labels: {} }],
    },
  ];
}
