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
import { promClient } from "./promClient.js";
import { ChangedSamples } from "./ChangedSamples.js";
import { LabelCap, type CapLogger } from "./LabelCap.js";
import { FeatureMetrics } from "./FeatureMetrics.js";
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
  /** The worker's plug-ins: each `metrics` declares the feature's counters and gauges (FeatureMetrics). */
  metered?: ServerContext["metered"];
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
  private readonly suspended = new CounterFamily(
    "tsq_jobs_suspended_total",
    "Executions that paused their job instead of ending it, by why: sleeping, parked (durable jobs, back in schedule, holding no slot; docs/durable.md), interrupted (iterable jobs, requeued to resume).",
  );
  private readonly cancelled = new CounterFamily(
    "tsq_jobs_cancelled_total",
    "Jobs ended by cancel(jid) / tsqctl cancel while running or as they started; not retried (docs/durable.md).",
  );
  /** queue → class → series. */
  private readonly byQueue = new Map<string, Map<string, ClassSeries>>();
  private readonly cap: LabelCap;
  private readonly running: RunningJobs;
  /** The plug-ins' counters and listeners (each feature's metrics.ts). */
  private readonly features: FeatureMetrics;
  /** Process metrics and the running gauge as last sent: they have no change flags of their own. */
  private readonly sent = new ChangedSamples();
  private readonly onStart = (job: JobPayload, queue: string) => this.started(job, queue);
  private readonly onEnd = (job: JobPayload, queue: string, outcome: JobOutcome) => this.ended(job, queue, outcome);
  private readonly onUnrecorded = (job: JobPayload, queue: string) =>
    this.unrecorded.get(this.labels(job, queue)).inc();

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
    promClient().collectDefaultMetrics({ register: this.registry, labels: options.processLabels ?? {} });
    for (const hook of ctx.hooks ?? []) hook.metrics?.(this.registry, promClient());
    this.features = new FeatureMetrics(
      {
        events: ctx.events,
        // Push-time events of this worker's client, through which its jobs push.
        clientEvents: client?.events,
        cap: this.cap,
        registry: this.registry,
        prom: promClient(),
        reserved: new Set([...this.core().map((f) => f.name), "tsq_running_jobs", "tsq_push_buffered_jobs"]),
      },
      ctx.metered ?? [],
    );
    ctx.events.on("start", this.onStart);
    ctx.events.on("end", this.onEnd);
    ctx.events.on("unrecorded", this.onUnrecorded);
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
    const jobs = [...this.core(), ...this.features.counters()].map((f) => f.family(changedOnly));
    const tracked = [this.running.family(), ...(await familiesOf(this.registry))];
    if (full) return { full, families: [...jobs, ...this.sent.all(tracked)], replaced: [] };
    const { families, replaced } = this.sent.changes(tracked);
    return { full, families: [...jobs.filter((f) => f.values.length > 0), ...families], replaced };
  }

  /** Idempotent: stops listening to job events, the plug-ins' listeners included. */
  stop(): void {
    this.ctx.events.off("start", this.onStart);
    this.ctx.events.off("end", this.onEnd);
    this.ctx.events.off("unrecorded", this.onUnrecorded);
    this.features.stop();
  }

  /** The core's own job families, in the order they are rendered (the plug-ins' follow). */
  private core(): (CounterFamily | HistogramFamily)[] {
    return [
      this.completion,
      this.queueDuration,
      this.failed,
      this.retried,
      this.dead,
      this.unrecorded,
      this.suspended,
      this.cancelled,
    ];
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
