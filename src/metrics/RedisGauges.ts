/**
 * Cluster-wide gauges read from Redis once per scrape, by the one process that serves /metrics (the
 * supervisor, or a single `tsq`), never by every child: summing per-child copies of the same queue size
 * is the double counting yabeda-sidekiq's `collect_cluster_metrics` warns about.
 *
 * Two pipelined round trips, whatever the number of queues:
 *   1. SMEMBERS queues, ZCARD schedule, ZCARD retry, ZCARD dead, SCARD processes, SMEMBERS paused
 *   2. per queue: LLEN queue:<q>, LINDEX queue:<q> -1 (the oldest job: LPUSH adds on the left)
 *   3. concurrency limits: HGETALL tsq:limits, then per limited class HVALS of its slots and LLEN of
 *      its parked list (src/features/locks/gitlab-concurrency-limits/status.ts)
 *   4. parked durable jobs: one ZCOUNT per index (src/features/durable/status.ts)
 * Latency is Sidekiq's `Queue#latency`: now − the oldest job's enqueued_at (float seconds or integer
 * ms), 0 for an empty queue.
 *
 * Queue names and limited classes are whatever Redis holds, so both labels are capped (LabelCap): past
 * the bound, "other" holds the sum of the folded queues' sizes, the largest of their latencies and 1 if
 * any of them is paused.
 */
import {
  DEAD,
  KEYED_WAITING,
  PAUSED,
  PROCESSES,
  QUEUES,
  RETRY,
  SCHEDULE,
  STAT_OVERRATED,
  queueKey,
} from "../wire/keys.js";
import type { TsqRedis } from "../platform/redis/connection.js";
import { toEpochSeconds } from "../wire/timestamps.js";
import { readLimits, type LimitStatus } from "../features/locks/gitlab-concurrency-limits/status.js";
import { countParked, type ParkedCounts } from "../features/durable/status.js";
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
  limits: LimitStatus[];
  /** class -> jobs parked on its keyed limits (tsq:rl-waiting), and the stat of OverLimit reschedules. */
  limitWaiting: Record<string, string>;
  overrated: number;
  durable: ParkedCounts;
}

export class RedisGauges {
  /** A read still waiting (Redis down: commands queue until it is back) is shared, never repeated. */
  private inflight: Promise<RedisState> | undefined;

  /** `cap`: shared with the caller's own series, so a queue folds alike everywhere in one scrape. */
  constructor(
    private readonly redis: TsqRedis,
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
      limits: await readLimits(this.redis),
      limitWaiting: await this.redis.hgetall(KEYED_WAITING),
      overrated: Number((await this.redis.get(STAT_OVERRATED)) ?? 0),
      durable: await countParked(this.redis),
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
      "tsq_concurrency_limit_parked_jobs",
      "Jobs of a concurrency-limited class parked, waiting for a slot.",
      state.limits.map((l) => ({ value: l.parked, labels: { class: l.class } })),
    ),
    gauge(
      "tsq_concurrency_limit_running_jobs",
      "Slots of a concurrency-limited class held (running jobs, and resumed ones on their way to a worker).",
      state.limits.map((l) => ({ value: l.running, labels: { class: l.class } })),
    ),
    gauge(
      "tsq_concurrency_limit",
      "A class's concurrency limit as a worker last read it: > 0 slots, 0 none, < 0 paused.",
      state.limits.filter((l) => !Number.isNaN(l.limit)).map((l) => ({ value: l.limit, labels: { class: l.class } })),
    ),
    gauge(
      "tsq_limit_waiting",
      "Jobs of a class parked on its keyed `static limit`, waiting for their key (docs/rate-limits.md).",
      Object.entries(state.limitWaiting).map(([klass, n]) => ({ value: Number(n), labels: { class: klass } })),
    ),
    gauge(
      "tsq_overrated",
      "Jobs rescheduled because a rate limiter was over its limit, all time (tsq:stat:overrated).",
      single(state.overrated),
    ),
    gauge(
      "tsq_durable_waiting",
      "Durable jobs parked on an event (waitFor), neither signalled nor past their deadline.",
      single(state.durable.waiting),
    ),
    gauge(
      "tsq_durable_sleeping",
      "Durable jobs sleeping (sleep, sleepUntil) until a time still to come.",
      single(state.durable.sleeping),
    ),
    gauge(
      "tsq_processes",
      "Worker processes registered in `processes` (Ruby Sidekiq and tsq alike).",
      single(state.processes),
    ),
  ];
}

/** `aggregator`: how series folded into one ("other", or one queue on two shards) combine; default a sum. */
function gauge(name: string, help: string, values: Sample[], aggregator?: "max"): MetricFamily {
  return aggregator ? { name, help, type: "gauge", aggregator, values } : { name, help, type: "gauge", values };
}
