/**
 * The vocabulary of the server half of the plug-in seam: the hooks a feature may give a worker and the
 * types they take. Types only, so the worker's context (context.ts) and the seam (plugin.ts) can both
 * use them without importing each other.
 */
import type { Redis } from "ioredis";
import type * as PromClient from "prom-client";
import type { Middleware } from "../platform/Chain.js";
import type { JobPayload } from "../wire/payload.js";
import type { UnitOfWork } from "./fetch/unitOfWork.js";
import type { CapsuleConfig } from "../platform/config/options.js";
import type { ClientEvents } from "../client/events.js";

/**
 * The queues to try for one fetch, in order, given the order so far (a fresh array it may keep or
 * change). It returns names from that list only; leaving one out skips that queue for this fetch, and
 * leaving all out makes the fetch wait as when every queue is paused (at most `fetchTimeout` seconds).
 * Called once per fetch, not per job, on the fetch's path: it must not block. See fetch/fetchOrder.ts.
 */
export type FetchOrder = (queues: string[]) => string[];

/** A worker's fetch order for one capsule, over every plug-in's; undefined when none applies to it. */
export type CapsuleFetchOrder = (capsule: CapsuleConfig) => FetchOrder | undefined;

/** Server middleware arguments: `(job instance, payload, queue, next)`, as Sidekiq's `call(worker, job, queue)`. */
export type ServerMiddlewareArgs = [instance: object, job: JobPayload, queue: string];

/** Called when a job dies (retries exhausted, `retry: false`, discard, or killed). */
export type DeathHandler = (job: JobPayload, error: Error) => unknown;

/** A long-running part of a feature (a limiter's sweep, the cron scheduler): started after the first heartbeat, stopped at shutdown. */
export interface Service {
  readonly name: string;
  start(): void;
  /** Stops and waits for the service's own work; quiet() calls it before stop() when `stopOnQuiet`. */
  stop(): Promise<void>;
  /** True: stopped when the process quiets (the poller and cron leader step down then). */
  readonly stopOnQuiet?: boolean;
}

/** A class found for a payload whose `class` names no registered class (a Rails ActiveJob wrapper). */
export interface ResolvedClass {
  className: string;
  /** The arguments `perform` receives, given the new instance. */
  prepare(instance: object): unknown[];
}

/**
 * How one execution of a job ended: the one notion every consumer reads (outcomes, `job:end`, batches,
 * metrics). Only the first four end the job; `suspended` is a pause.
 *
 *   done       perform returned
 *   failed     perform threw; the job will be retried (its next attempt is another execution)
 *   dead       perform threw; the job will not run again (dead set, discarded, `retry: false`)
 *   cancelled  cancel(jid) reached it (JobCancelledError): acknowledged, not retried
 *   suspended  the job is back in Redis to run again (JobSuspended: slept, parked on an event; an
 *              iterable job interrupted to resume): not an end
 */
export type EndStatus = "done" | "failed" | "dead" | "cancelled" | "suspended";

/** The statuses that end a job. */
export type FinalStatus = Exclude<EndStatus, "suspended">;

export interface JobOutcome {
  status: EndStatus;
  /** Seconds from start to finish (monotonic clock). */
  durationSeconds: number;
  /** What happened to a job that threw: `retried` (status failed), or dead, discarded, dropped (status dead). */
  disposition?: "retried" | "dead" | "discarded" | "dropped";
  /** Why a suspended execution paused ("sleeping", "parked", "interrupted"). */
  why?: string;
}

/**
 * A worker's per-job events (`ctx.events`), for metrics and the app's Worker events. The core emits
 * these three. A feature adds its own from its plugin.ts, by augmenting this interface
 * (`declare module "<path>/server/hooks.js" { interface JobEvents { ... } }`), and names them in its
 * plug-in's `emits` (plugin.ts); emitting one costs what any emit costs, listened to or not.
 */
export interface JobEvents {
  start: [job: JobPayload, queue: string];
  end: [job: JobPayload, queue: string, outcome: JobOutcome];
  /** A job's failure could not be recorded (see FailureFallback). */
  unrecorded: [job: JobPayload, queue: string];
}

/** How a job that ran ended: its outcome, with what `perform` returned or the error it threw. */
export interface JobEnd {
  readonly outcome: JobOutcome;
  /** `perform`'s resolved value (status "done"). */
  readonly result?: unknown;
  /** The failure (status "failed" or "dead"), or the cancel (status "cancelled"). */
  readonly error?: Error;
}

/** Stored jobs as payloads, or their text or bytes as read from Redis. */
export type StoredJobs = Iterable<JobPayload | string | Buffer>;

export interface ServerHooks {
  /**
   * Before a job starts: `false` (synchronously, no tick) when the hook does not apply; a promise of
   * true when it took the job away (deferred, dropped) and acknowledged it itself.
   */
  intercept?(job: JobPayload, unit: UnitOfWork): false | Promise<boolean>;
  /** Finds the class of a payload whose `class` is not registered (ActiveJob's wrapper). */
  resolveClass?(job: JobPayload): ResolvedClass | undefined;
  /**
   * Around the whole chain and perform, for the jobs it concerns; must call `run` once or throw.
   * `abort` is the job's controller: its signal is the job's `this.signal`, and aborting it (a cancel, a
   * timeout) aborts this job only; the worker gives the slot a new one before its next job. Throwing
   * JobSuspended (src/wire/errors.ts) ends the execution `suspended`, JobCancelledError `cancelled`.
   */
  around?(
    run: () => Promise<unknown>,
    instance: object,
    job: JobPayload,
    queue: string,
    abort: AbortController,
  ): Promise<unknown>;
  /** Server middleware, with the options its class is constructed with. */
  middleware?: { use: Middleware<ServerMiddlewareArgs>; options?: unknown[] };
  /** Around `perform` only, inside every middleware (a rate limit's OverLimitError reschedules). */
  aroundPerform?(perform: () => Promise<unknown>, job: JobPayload, queue: string): Promise<unknown>;
  /** Long-running parts, started and stopped with the worker. */
  services?: Service[];
  onDeath?: DeathHandler;
  /**
   * An execution ended (any EndStatus: check `end.outcome.status`, a suspended one is not the job's end), called synchronously just before its acknowledgement
   * so a write it starts goes out in the same tick (auto-pipelined). Must not throw; it owns its errors.
   * Undefined, or a promise the slot waits for (after the acknowledgement) to bound writes in flight.
   */
  onEnd?(job: JobPayload, queue: string, end: JobEnd): Promise<void> | undefined;
  /** A job scheduled for a retry at `retryAt` (epoch seconds) keeps what it must until then. */
  keepLocksForRetry?(redis: Redis, job: JobPayload, retryAt: number): Promise<unknown>;
  /**
   * The feature's own metrics, registered in the worker's registry when the worker serves or reports
   * metrics (`--metrics-port`, a cluster child): `new prom.Counter({ ..., registers: [registry] })`.
   * Not called when metrics are off, so a counter the hook makes stays undefined and counts nothing.
   * `prom` is tsq's own prom-client, loaded only then. For a metric this worker's hooks update; one
   * counted from events or read from Redis is the plug-in's `metrics` or `gauges` (PluginMetrics).
   */
  metrics?(registry: PromClient.Registry, prom: typeof PromClient): void;
}

/** One series of a feature's counter: looked up once per label set, then only added to. */
export interface FeatureCounterSeries {
  inc(): void;
}

/**
 * A labelled counter in a worker's job metrics, kept as the core's are (src/metrics/series.ts): a
 * `tsq-cluster` child sends only its changed series to the supervisor, which sums them over children.
 */
export interface FeatureCounter {
  get(labels: Record<string, string>): FeatureCounterSeries;
}

/**
 * What a plug-in's `metrics` gets, once per worker that serves or reports metrics (`--metrics-port`, a
 * cluster child). Listeners added through it are removed when those metrics stop.
 */
export interface MetricsSeam {
  /**
   * The counter named `name` (`tsq_..._total`), made at the first call; a later call with the same name
   * and help (a second plug-in of the feature) gets the same one. A core metric's name is refused.
   */
  counter(name: string, help: string): FeatureCounter;
  /** The job's `queue` and `class` labels, capped as the core's are (LabelCap, `metrics_max_label_values`). */
  labels(job: JobPayload, queue: string): { queue: string; class: string };
  /** Listens to the worker's job events (`ctx.events`). */
  onJob<K extends keyof JobEvents>(event: K, listener: (...args: JobEvents[K]) => void): void;
  /** Listens to the worker's client's events (`client.events`): pushes from its jobs and its poller. */
  onClient<K extends keyof ClientEvents>(event: K, listener: (...args: ClientEvents[K]) => void): void;
  /** The worker's prom-client registry and tsq's prom-client, for a gauge read at scrape time. */
  readonly registry: PromClient.Registry;
  readonly prom: typeof PromClient;
}

/** A gauge read from Redis: one sample per label set. `aggregator` "max" where a sum means nothing. */
export interface FeatureGauge {
  name: string;
  help: string;
  values: { value: number; labels: Record<string, string> }[];
  aggregator?: "max";
}

/** What a plug-in declares for metrics; every plug-in of a worker's list is asked, whether or not it gave hooks. */
export interface PluginMetrics {
  readonly name: string;
  /** The feature's counters and gauges in a worker's job metrics. */
  metrics?(seam: MetricsSeam): void;
  /**
   * Fleet-wide gauges read from Redis by the one process that serves /metrics (the `tsq-cluster`
   * supervisor, or a single `tsq`), at each scrape, beside the core's queue gauges and under the same
   * wait (REDIS_WAIT_MS). Their `class` and `queue` labels are capped by the caller.
   */
  gauges?(redis: Redis): Promise<FeatureGauge[]>;
}
