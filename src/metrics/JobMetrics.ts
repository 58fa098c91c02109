/**
 * JobMetrics: one worker process's job metrics (PRODUCT.md "Metrics"), in its own prom-client Registry,
 * fed by the Launcher's per-job `start`/`end` events. A `tsq-cluster` child sends snapshots of it to the
 * supervisor (ChildReporter); a single `tsq` serves it itself.
 *
 * Labels are `queue` and `class` (the wrapped class for ActiveJob, as Sidekiq's UI shows it), never a
 * jid: one series per queue × class (× status), whatever the number of jobs. Both come from payloads,
 * so both are capped (LabelCap, `metrics_max_label_values`): the process's own queues first, then the
 * first values seen; the rest count as "other".
 */
import type { ClientEventBus } from "../client/events.js";
import { limiterWaits } from "../features/locks/enterprise-rate-limits/Limiter.js";
import { promClient } from "./promClient.js";
import { ChangedSamples } from "./ChangedSamples.js";
import { LabelCap, type CapLogger } from "./LabelCap.js";
import { RunningJobs } from "./RunningJobs.js";
import type { JobOutcome, ServerContext } from "../server/context.js";
import { displayClass, type JobPayload } from "../wire/payload.js";
import { toEpochSeconds } from "../wire/timestamps.js";
import { familiesOf, type MetricFamily } from "./exposition.js";
import { CounterFamily, HistogramFamily, type CounterSeries, type HistogramSeries } from "./series.js";

/**
 * Seconds. yabeda-sidekiq's set, which covers millisecond no-ops and hour-long jobs alike, plus 2 h,
 * 6 h and 1 day for batch jobs and for queue waits behind a backlog.
 */
export const JOB_BUCKETS = [
  0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800, 3600, 7200, 21_600, 86_400,
];

export interface JobMetricsOptions {
  /** Labels for the default Node process metrics, e.g. `{ child: "0" }` in a cluster child. */
  processLabels?: Record<string, string>;
}

type MetricsContext = Pick<ServerContext, "events" | "state" | "options"> & {
  /** The plug-ins' hooks: each `metrics` hook registers its own metrics in this registry. */
  hooks?: ServerContext["hooks"];
  logger: CapLogger;
  /** The worker's client: its reliable push holds jobs while Redis is away; its events count pushes. */
  client?: { readonly bufferedJobs: number; readonly events: ClientEventBus };
};

/** What a child sends: everything, or only what changed since its last snapshot. */
export interface MetricsChanges {
  full: boolean;
  families: MetricFamily[];
  /** In a delta, families sent whole: the child no longer has any other sample of them. */
  replaced: string[];
}

/** The series of one queue × class, found once and then only added to. */
interface ClassSeries {
  waited: HistogramSeries;
  done: HistogramSeries;
  fail?: HistogramSeries;
  failed?: CounterSeries;
  retried?: CounterSeries;
  dead?: CounterSeries;
}

export class JobMetrics {
  /** Process metrics (prom-client's defaults) and the running-jobs gauge. */
  readonly registry = new (promClient().Registry)();
  private readonly completion = new HistogramFamily(
    "tsq_jobs_completion_seconds",
    "Seconds a job ran, from start to done or fail (monotonic clock).",
    JOB_BUCKETS,
  );
  private readonly queueDuration = new HistogramFamily(
    "tsq_jobs_queue_duration_seconds",
    "Seconds a job waited from enqueued_at to its start (wall clock).",
    JOB_BUCKETS,
  );
  private readonly failed = new CounterFamily("tsq_jobs_failed_total", "Jobs that raised.");
  private readonly retried = new CounterFamily("tsq_jobs_retried_total", "Failed jobs sent to the retry set.");
  private readonly dead = new CounterFamily(
    "tsq_jobs_dead_total",
    "Failed jobs sent to the dead set (retries exhausted, or killed).",
  );
  private readonly unrecorded = new CounterFamily(
    "tsq_jobs_failure_unrecorded_total",
    "Failed jobs whose failure could not be recorded (payload not serializable, Redis refused the write); requeued at the end of their queue, then buried.",
  );
  private readonly deferred = new CounterFamily(
    "tsq_jobs_deferred_total",
    "Jobs re-scheduled instead of run because a kill switch defers their class (tsqctl defer).",
  );
  private readonly dropped = new CounterFamily(
    "tsq_jobs_dropped_total",
    "Jobs discarded without running because a kill switch drops their class (tsqctl drop).",
  );
  private readonly expired = new CounterFamily(
    "tsq_jobs_expired_total",
    "Jobs dropped without running because their expiresIn (expires_in) had passed (docs/flow-control.md).",
  );
  /** Counted where the push is dropped: in a worker, pushes from jobs and the poller's re-checks. */
  private readonly deduplicated = new CounterFamily(
    "tsq_jobs_deduplicated_total",
    "Pushes of idempotent jobs dropped because the same job was already enqueued (docs/deduplication.md).",
  );
  /** Counted where the job parks: at push in the pushing process, at fetch in a worker. */
  private readonly parked = new CounterFamily(
    "tsq_jobs_parked_total",
    "Jobs parked instead of run because their class's concurrency limit was reached or is paused (docs/concurrency-limits.md).",
  );
  private readonly limitRefused = new CounterFamily(
    "tsq_jobs_concurrency_limit_refused_total",
    "Jobs refused because their class's parked list was full (concurrency_limit_max_parked): pushes that failed, or jobs sent to retries.",
  );
  private readonly rateLimited = new CounterFamily(
    "tsq_limited_jobs_total",
    "Jobs a rate limit kept from running now: action parked (a class's static limit), refused (its key's parked list full) or rescheduled (OverLimit in perform) (docs/rate-limits.md).",
  );
  /** Counted where the push is refused, as deduplicated pushes are. */
  private readonly uniqueRejected = new CounterFamily(
    "tsq_jobs_unique_rejected_total",
    "Pushes of unique jobs refused because another job held the lock (docs/unique-jobs.md).",
  );
  /** Counted in the process whose event fired the callback: each callback once across the fleet. */
  private readonly batchCallbacks = new CounterFamily(
    "tsq_batch_callbacks_total",
    "Batch callbacks fired (pushed), by event: complete, success, death, settled (docs/batches.md).",
  );
  private readonly suspended = new CounterFamily(
    "tsq_jobs_suspended_total",
    "Executions that paused their job instead of ending it, by why: sleeping, parked (durable jobs, back in schedule, holding no slot; docs/durable.md), interrupted (iterable jobs, requeued to resume).",
  );
  private readonly cancelled = new CounterFamily(
    "tsq_jobs_cancelled_total",
    "Jobs ended by cancel(jid) / tsqctl cancel while running or as they started; not retried (docs/durable.md).",
  );
  private readonly timedOut = new CounterFamily(
    "tsq_jobs_timed_out_total",
    "Jobs failed because they ran past their timeout (static timeout or the push's timeout); retried per policy (docs/durable.md).",
  );
  private readonly abandoned = new CounterFamily(
    "tsq_jobs_abandoned_total",
    "Jobs whose promise was left running because they ignored their abort signal past the grace; their slot was freed (docs/durable.md).",
  );
  /** queue → class → series. */
  private readonly byQueue = new Map<string, Map<string, ClassSeries>>();
  private readonly cap: LabelCap;
  private readonly running: RunningJobs;
  /** Process metrics and the running gauge as last sent: they have no change flags of their own. */
  private readonly sent = new ChangedSamples();
  private readonly onStart = (job: JobPayload, queue: string) => this.started(job, queue);
  private readonly onEnd = (job: JobPayload, queue: string, outcome: JobOutcome) => this.ended(job, queue, outcome);
  private readonly onUnrecorded = (job: JobPayload, queue: string) =>
    this.unrecorded.get(this.labels(job, queue)).inc();
  private readonly onSwitched = (job: JobPayload, queue: string, action: "deferred" | "dropped") =>
    (action === "deferred" ? this.deferred : this.dropped).get(this.labels(job, queue)).inc();
  private readonly onExpired = (job: JobPayload, queue: string) => this.expired.get(this.labels(job, queue)).inc();
  private readonly onDeduplicated = (job: JobPayload, queue: string) =>
    this.deduplicated.get(this.labels(job, queue)).inc();
  private readonly onLimited = (job: JobPayload, queue: string, action: "parked" | "refused") =>
    (action === "parked" ? this.parked : this.limitRefused).get(this.labels(job, queue)).inc();
  private readonly onRateLimited = (job: JobPayload, queue: string, action: string) =>
    this.rateLimited.get({ ...this.labels(job, queue), action }).inc();
  private readonly onUniqueRejected = (job: JobPayload, queue: string) =>
    this.uniqueRejected.get(this.labels(job, queue)).inc();
  private readonly onDurable = (job: JobPayload, queue: string, outcome: "timedOut" | "abandoned") =>
    (outcome === "timedOut" ? this.timedOut : this.abandoned).get(this.labels(job, queue)).inc();
  private readonly onBatchFired = (_bid: string, event: string) => this.batchCallbacks.get({ event }).inc();

  constructor(
    private readonly ctx: MetricsContext,
    options: JobMetricsOptions = {},
  ) {
    this.cap = new LabelCap(ctx.options.metricsMaxLabelValues, ctx.logger).prefer(
      "queue",
      ctx.options.capsules.flatMap((c) => c.queues.map((q) => q.name)),
    );
    this.running = new RunningJobs(ctx.state, this.cap);
    const client = ctx.client;
    new (promClient().Gauge)({
      name: "tsq_push_buffered_jobs",
      help: "Jobs reliable push holds in memory while Redis is unreachable (docs/flow-control.md#reliable-push).",
      registers: [this.registry],
      collect() {
        this.set(client?.bufferedJobs ?? 0);
      },
    });
    new (promClient().Gauge)({
      name: "tsq_limit_slots_waiting",
      help: "Worker slots waiting inside a rate limiter's waitTimeout now (0 unless a limiter is given one; docs/rate-limits.md).",
      registers: [this.registry],
      collect() {
        this.set(limiterWaits());
      },
    });
    promClient().collectDefaultMetrics({ register: this.registry, labels: options.processLabels ?? {} });
    for (const hook of ctx.hooks ?? []) hook.metrics?.(this.registry, promClient());
    ctx.events.on("start", this.onStart);
    ctx.events.on("end", this.onEnd);
    ctx.events.on("unrecorded", this.onUnrecorded);
    ctx.events.on("switched", this.onSwitched);
    ctx.events.on("limited", this.onLimited);
    ctx.events.on("rateLimited", this.onRateLimited);
    ctx.events.on("expired", this.onExpired);
    ctx.events.on("durable", this.onDurable);
    // Push-time events of this worker's client, through which its jobs push.
    client?.events.on("limited", this.onLimited);
    client?.events.on("deduplicated", this.onDeduplicated);
    client?.events.on("uniqueRejected", this.onUniqueRejected);
    client?.events.on("batchFired", this.onBatchFired);
  }

  /** The current values, as plain JSON (for rendering). */
  async snapshot(): Promise<MetricFamily[]> {
    return (await this.changes(true)).families;
  }

  /**
   * For a child's report: everything when `full`, else only the series changed since the last call
   * (and whole, in `replaced`, the few families of which a series disappeared). An idle child's delta
   * is its few process metrics, whatever the number of classes it has seen.
   */
  async changes(full: boolean): Promise<MetricsChanges> {
    const changedOnly = !full;
    const jobs = [
      this.completion,
      this.queueDuration,
      this.failed,
      this.retried,
      this.dead,
      this.unrecorded,
      this.deferred,
      this.dropped,
      this.expired,
      this.deduplicated,
      this.parked,
      this.limitRefused,
      this.rateLimited,
      this.uniqueRejected,
      this.batchCallbacks,
      this.suspended,
      this.cancelled,
      this.timedOut,
      this.abandoned,
    ].map((f) => f.family(changedOnly));
    const tracked = [this.running.family(), ...(await familiesOf(this.registry))];
    if (full) return { full, families: [...jobs, ...this.sent.all(tracked)], replaced: [] };
    const { families, replaced } = this.sent.changes(tracked);
    return { full, families: [...jobs.filter((f) => f.values.length > 0), ...families], replaced };
  }

  /** Idempotent: stops listening to job events. */
  stop(): void {
    this.ctx.events.off("start", this.onStart);
    this.ctx.events.off("end", this.onEnd);
    this.ctx.events.off("unrecorded", this.onUnrecorded);
    this.ctx.events.off("switched", this.onSwitched);
    this.ctx.events.off("durable", this.onDurable);
    this.ctx.events.off("limited", this.onLimited);
    this.ctx.events.off("rateLimited", this.onRateLimited);
    this.ctx.events.off("expired", this.onExpired);
    const events = this.ctx.client?.events;
    events?.off("limited", this.onLimited);
    events?.off("deduplicated", this.onDeduplicated);
    events?.off("uniqueRejected", this.onUniqueRejected);
    events?.off("batchFired", this.onBatchFired);
  }

  /** The capped labels of a job's series. */
  private labels(job: JobPayload, rawQueue: string): { queue: string; class: string } {
    return { queue: this.cap.value("queue", rawQueue), class: this.cap.value("class", displayClass(job)) };
  }

  private seriesOf(job: JobPayload, rawQueue: string): ClassSeries {
    const { queue, class: klass } = this.labels(job, rawQueue);
    let classes = this.byQueue.get(queue);
    if (!classes) this.byQueue.set(queue, (classes = new Map<string, ClassSeries>()));
    let series = classes.get(klass);
    if (!series) {
      const labels = { queue, class: klass };
      series = { waited: this.queueDuration.get(labels), done: this.completion.get({ ...labels, job_status: "done" }) };
      classes.set(klass, series);
      this.running.started(queue, klass);
    }
    return series;
  }

  private started(job: JobPayload, queue: string): void {
    const series = this.seriesOf(job, queue);
    const enqueuedAt = toEpochSeconds(job.enqueued_at);
    if (enqueuedAt === undefined) return;
    // Clocks of the enqueuing host and this one may differ slightly; a negative wait is a zero wait.
    series.waited.observe(Math.max(0, Date.now() / 1000 - enqueuedAt));
  }

  private ended(job: JobPayload, queue: string, outcome: JobOutcome): void {
    const series = this.seriesOf(job, queue);
    const { status } = outcome;
    if (status === "done") {
      series.done.observe(outcome.durationSeconds);
      return;
    }
    // Neither done nor fail in the completion histogram (its job_status is done|fail): counted apart.
    if (status === "suspended") {
      this.suspended.get({ ...this.labels(job, queue), why: outcome.why ?? "unknown" }).inc();
      return;
    }
    if (status === "cancelled") {
      this.cancelled.get(this.labels(job, queue)).inc();
      return;
    }
    // Failure series appear with the first failure, as prom-client's labelled series do.
    const labels = this.labels(job, queue);
    (series.fail ??= this.completion.get({ ...labels, job_status: "fail" })).observe(outcome.durationSeconds);
    (series.failed ??= this.failed.get(labels)).inc();
    if (outcome.disposition === "retried") (series.retried ??= this.retried.get(labels)).inc();
    else if (outcome.disposition === "dead") (series.dead ??= this.dead.get(labels)).inc();
  }
}
