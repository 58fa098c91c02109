/**
 * Cluster-wide gauges read from Redis once per scrape, by the one process that serves /metrics (the
 * supervisor, or a single `tsq`), never by every child: summing per-child copies of the same queue size
 * is the double counting yabeda-sidekiq's `collect_cluster_metrics` warns about.
 *
 * Two pipelined round trips, whatever the number of queues:
 *   1. SMEMBERS queues, ZCARD schedule, ZCARD retry, ZCARD dead, SCARD processes, SMEMBERS paused
 *   2. per queue: LLEN queue:<q>, LINDEX queue:<q> -1 (the oldest job: LPUSH adds on the left)
 * and, beside them, each plug-in's own (`gauges`: concurrency limits' slots and parked jobs, parked
 * durable jobs, rate limits' parked and rescheduled jobs), under the same wait: a scrape gets all of
 * them or, when Redis does not answer in time or a read fails, none.
 * Latency is Sidekiq's `Queue#latency`: now − the oldest job's enqueued_at (float seconds or integer
 * ms), 0 for an empty queue.
 *
 * Queue names and limited classes are whatever Redis holds, so both labels are capped (LabelCap): past
 * the bound, "other" holds the sum of the folded queues' sizes, the largest of their latencies and 1 if
 * any of them is paused.
 */
import { DEAD, PAUSED, PROCESSES, QUEUES, RETRY, SCHEDULE, queueKey } from "../wire/keys.js";
import type { TsqRedis } from "../platform/redis/connection.js";
import { toEpochSeconds } from "../wire/timestamps.js";
import type { FeatureGauge, PluginMetrics } from "../server/hooks.js";
import { DEFAULTS } from "../platform/config/defaults.js";
import type { MetricFamily, Sample } from "./exposition.js";
import { LabelCap } from "./LabelCap.js";

/** ms a scrape waits for Redis before it answers without these gauges. */
export const REDIS_WAIT_MS = 1000;

interface RedisState {
  queues: { name: string; size: number; latency: number; paused: boolean }[];
  scheduled: number;
  retry: number;
  dead: number;
  processes: number;
  /** The plug-ins' gauges, in list order. */
  features: FeatureGauge[];
}

export class RedisGauges {
  /** A read still waiting (Redis down: commands queue until it is back) is shared, never repeated. */
  private inflight: Promise<RedisState> | undefined;

  /**
   * `plugins`: the list the workers run (their `gauges`). `cap`: shared with the caller's own series, so
   * a queue folds alike everywhere in one scrape.
   */
  constructor(
    private readonly redis: TsqRedis,
    private readonly plugins: readonly PluginMetrics[],
    private readonly cap = new LabelCap(DEFAULTS.metricsMaxLabelValues),
  ) {}

  /** The gauges, or none if Redis did not answer within `timeoutMs`: an absent gauge is "unknown". */
  async read(timeoutMs: number): Promise<MetricFamily[]> {
    this.inflight ??= this.query().finally(() => (this.inflight = undefined));
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), timeoutMs)));
    try {
      const state = await Promise.race([this.inflight.catch(() => undefined), timeout]);
      return state ? this.cap.apply(toFamilies(state)) : [];
    } finally {
      clearTimeout(timer);
    }
  }

  private async query(): Promise<RedisState> {
    const features = Promise.all(this.plugins.flatMap((plugin) => (plugin.gauges ? [plugin.gauges(this.redis)] : [])));
    // Settled before the core's reads can throw, so a failed feature read is never left unhandled.
    features.catch(() => undefined);
    const head = await this.redis
      .pipeline()
      .smembers(QUEUES)
      .zcard(SCHEDULE)
      .zcard(RETRY)
      .zcard(DEAD)
      .scard(PROCESSES)
      .smembers(PAUSED)
      .exec();
    const [names, scheduled, retry, dead, processes, paused] = results(head, 6);
    const pausedSet = new Set(paused as string[]);
    const queues = (names as string[]).slice().sort();
    const pipeline = this.redis.pipeline();
    for (const name of queues) pipeline.llen(queueKey(name)).lindex(queueKey(name), -1);
    const perQueue = queues.length === 0 ? [] : results(await pipeline.exec(), queues.length * 2);
    const now = Date.now() / 1000;
    return {
      queues: queues.map((name, i) => ({
        name,
        size: perQueue[i * 2] as number,
        latency: latencyOf(perQueue[i * 2 + 1] as string | null, now),
        paused: pausedSet.has(name),
      })),
      scheduled: scheduled as number,
      retry: retry as number,
      dead: dead as number,
      processes: processes as number,
      features: (await features).flat(),
    };
  }
}

/** ioredis pipeline replies, throwing the first error. */
function results(replies: [Error | null, unknown][] | null, expected: number): unknown[] {
  if (!replies || replies.length !== expected) throw new Error("Redis pipeline returned no replies");
  return replies.map(([error, value]) => {
    if (error) throw error;
    return value;
  });
}

function latencyOf(oldest: string | null, now: number): number {
  if (oldest === null) return 0;
  try {
    const enqueuedAt = toEpochSeconds((JSON.parse(oldest) as { enqueued_at?: unknown }).enqueued_at);
    return enqueuedAt === undefined ? 0 : Math.max(0, now - enqueuedAt);
  } catch {
    return 0; // not JSON: the worker will bury it; it says nothing about waiting time
  }
}

function toFamilies(state: RedisState): MetricFamily[] {
  const perQueue = (pick: (q: RedisState["queues"][number]) => number): Sample[] =>
    state.queues.map((q) => ({ value: pick(q), labels: { queue: q.name } }));
  const single = (value: number): Sample[] => [{ value, labels: {} }];
  return [
    gauge(
      "tsq_queue_size",
      "Jobs waiting in the queue (LLEN queue:<name>), for every queue in the `queues` set.",
      perQueue((q) => q.size),
    ),
    gauge(
      "tsq_queue_latency_seconds",
      "Seconds the oldest job in the queue has waited (now - its enqueued_at); 0 when empty.",
      perQueue((q) => q.latency),
      "max",
    ),
    gauge(
      "tsq_queue_paused",
      "1 when the queue is in the `paused` set (tsqctl pause, Sidekiq Pro's pause!): workers fetch nothing from it.",
      perQueue((q) => (q.paused ? 1 : 0)),
      "max",
    ),
    gauge("tsq_scheduled_size", "Jobs in the schedule set.", single(state.scheduled)),
    gauge("tsq_retry_size", "Jobs in the retry set.", single(state.retry)),
    gauge("tsq_dead_size", "Jobs in the dead set.", single(state.dead)),
    gauge(
      "tsq_processes",
      "Worker processes registered in `processes` (Ruby Sidekiq and tsq alike).",
      single(state.processes),
    ),
    ...state.features.map((f) => gauge(f.name, f.help, f.values, f.aggregator)),
  ];
}

/** `aggregator`: how series folded into one ("other", or one queue on two shards) combine; default a sum. */
function gauge(name: string, help: string, values: Sample[], aggregator?: "max"): MetricFamily {
  return aggregator ? { name, help, type: "gauge", aggregator, values } : { name, help, type: "gauge", values };
}
