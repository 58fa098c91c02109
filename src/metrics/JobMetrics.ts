/**
 * JobMetrics: one worker process's job metrics (PRODUCT.md "Metrics"), in its own prom-client Registry,
 * fed by the Launcher's per-job `start`/`end` events. A `tsq-cluster` child sends snapshots of it to the
 * supervisor (ChildReporter); a single `tsq` serves it itself.
 *
 * Labels are `queue` and `class` (the wrapped class for ActiveJob, as Sidekiq's UI shows it), never a
 * jid: one series per queue × class (× status), whatever the number of jobs.
 */
import { Gauge, Registry, collectDefaultMetrics } from "prom-client";
import type { JobOutcome, ServerContext } from "../server/context.js";
import { displayClass, type JobPayload } from "../payload.js";
import { toEpochSeconds } from "../timestamps.js";
import { familiesOf, type MetricFamily } from "./exposition.js";
import { CounterFamily, HistogramFamily, type CounterSeries, type HistogramSeries } from "./series.js";

/**
 * Seconds. yabeda-sidekiq's set, which covers millisecond no-ops and hour-long jobs alike, plus 2 h,
 * 6 h and 1 day for batch jobs and for queue waits behind a backlog.
 */
export const JOB_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800, 3600, 7200, 21_600, 86_400];

const JOB_LABELS = ["queue", "class"] as const;

export interface JobMetricsOptions {
  /** Labels for the default Node process metrics, e.g. `{ child: "0" }` in a cluster child. */
  processLabels?: Record<string, string>;
}

type MetricsContext = Pick<ServerContext, "events" | "state">;

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
  readonly registry = new Registry();
  private readonly completion = new HistogramFamily("tsq_jobs_completion_seconds", "Seconds a job ran, from start to done or fail (monotonic clock).", JOB_BUCKETS);
  private readonly queueDuration = new HistogramFamily("tsq_jobs_queue_duration_seconds", "Seconds a job waited from enqueued_at to its start (wall clock).", JOB_BUCKETS);
  private readonly failed = new CounterFamily("tsq_jobs_failed_total", "Jobs that raised.");
  private readonly retried = new CounterFamily("tsq_jobs_retried_total", "Failed jobs sent to the retry set.");
  private readonly dead = new CounterFamily("tsq_jobs_dead_total", "Failed jobs sent to the dead set (retries exhausted, or killed).");
  /** queue → class → series. */
  private readonly byQueue = new Map<string, Map<string, ClassSeries>>();
  private readonly onStart = (job: JobPayload, queue: string) => this.started(job, queue);
  private readonly onEnd = (job: JobPayload, queue: string, outcome: JobOutcome) => this.ended(job, queue, outcome);

  constructor(
    private readonly ctx: MetricsContext,
    options: JobMetricsOptions = {},
  ) {
    this.runningGauge([this.registry]);
    collectDefaultMetrics({ register: this.registry, labels: options.processLabels ?? {} });
    ctx.events.on("start", this.onStart);
    ctx.events.on("end", this.onEnd);
  }

  /** The current values, as plain JSON (for IPC or for rendering). */
  async snapshot(): Promise<MetricFamily[]> {
    const jobs = [this.completion, this.queueDuration, this.failed, this.retried, this.dead].map((f) => f.family());
    return [...jobs, ...(await familiesOf(this.registry))];
  }

  /** Idempotent: stops listening to job events. */
  stop(): void {
    this.ctx.events.off("start", this.onStart);
    this.ctx.events.off("end", this.onEnd);
  }

  private seriesOf(job: JobPayload, queue: string): ClassSeries {
    const klass = displayClass(job);
    let classes = this.byQueue.get(queue);
    if (!classes) this.byQueue.set(queue, (classes = new Map()));
    let series = classes.get(klass);
    if (!series) {
      const labels = { queue, class: klass };
      series = { waited: this.queueDuration.get(labels), done: this.completion.get({ ...labels, job_status: "done" }) };
      classes.set(klass, series);
    }
    return series;
  }

  private started(job: JobPayload, queue: string): void {
    const enqueuedAt = toEpochSeconds(job.enqueued_at);
    if (enqueuedAt === undefined) return;
    // Clocks of the enqueuing host and this one may differ slightly; a negative wait is a zero wait.
    this.seriesOf(job, queue).waited.observe(Math.max(0, Date.now() / 1000 - enqueuedAt));
  }

  private ended(job: JobPayload, queue: string, outcome: JobOutcome): void {
    const series = this.seriesOf(job, queue);
    if (outcome.status === "done") {
      series.done.observe(outcome.durationSeconds);
      return;
    }
    // Failure series appear with the first failure, as prom-client's labelled series do.
    const labels = { queue, class: displayClass(job) };
    (series.fail ??= this.completion.get({ ...labels, job_status: "fail" })).observe(outcome.durationSeconds);
    (series.failed ??= this.failed.get(labels)).inc();
    if (outcome.disposition === "retried") (series.retried ??= this.retried.get(labels)).inc();
    else if (outcome.disposition === "dead") (series.dead ??= this.dead.get(labels)).inc();
  }

  /**
   * Read from the process's work table when collected rather than counted from events: a job whose
   * failure could not be recorded is requeued without an `end` event, and must not stay "running".
   * Series seen once stay, at 0, so a graph shows zero rather than a gap.
   */
  private runningGauge(registers: Registry[]): void {
    const state = this.ctx.state;
    const seen = new Set<string>();
    new Gauge({
      name: "tsq_running_jobs",
      help: "Jobs running now.",
      labelNames: JOB_LABELS,
      registers,
      collect() {
        const counts = new Map<string, number>();
        for (const entry of state.work.values()) {
          const key = JSON.stringify([entry.queue, entry.className ?? "unknown"]);
          counts.set(key, (counts.get(key) ?? 0) + 1);
          seen.add(key);
        }
        for (const key of seen) {
          const [queue, klass] = JSON.parse(key) as [string, string];
          this.set({ queue, class: klass }, counts.get(key) ?? 0);
        }
      },
    });
  }
}
