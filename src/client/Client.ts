/**
 * The client: validates a job, runs client middleware, and writes it to Redis exactly as Sidekiq's
 * `Client#push` does (immediate: `SADD queues` + `LPUSH queue:<q>` with `enqueued_at`; scheduled:
 * `ZADD schedule <float seconds>` without `at`), pipelined in one round trip.
 */
import { stampExpiry } from "../expiry/stamp.js";
import { PushBuffer } from "../reliablePush/PushBuffer.js";
import { resolveReliablePush, type ReliablePushOptions } from "../reliablePush/settings.js";
import { ArgumentError, EnqueueError } from "../errors.js";
import { explainRedisError } from "../redis/errors.js";
import { Chain } from "../middleware/Chain.js";
import { dumpPayload, inheritSource, newJid, type JobPayload, type JsonValue } from "../payload.js";
import { connect, isFailoverError, type TsqRedis } from "../redis/connection.js";
import { defineScripts } from "../redis/scripts.js";
import { QUEUES, SCHEDULE, queueKey } from "../keys.js";
import { formatSeconds, nowStamp, type TimestampFormat } from "../timestamps.js";
import { DEFAULTS } from "../config/defaults.js";
import { verifyStrictArgs } from "./strictArgs.js";
import { jobNameOf, wireOptions, type JobClassLike } from "./options.js";
import { instrumentClient } from "../tracing/index.js";
import { addCorrelationId } from "../tracing/correlation.js";
import { limitPayloadSize } from "../payloadSize/compress.js";
import { resolveSizeLimits, type SizeLimits } from "../payloadSize/settings.js";
import { deduplicateOnPush } from "../dedup/clientMiddleware.js";
import { uniqueOnPush } from "../unique/clientMiddleware.js";
import { sujOnPush } from "../uniqueJobs/clientMiddleware.js";
import { attachJobClass } from "./jobClasses.js";
import { joinBatches, markBatchMember } from "../batch/membership.js";
import { attributeFields, currentRouter, type WorkerRouter } from "../attributes/WorkerRouter.js";

/** Arguments of a client middleware: `(className, job, queue, redis, next)`. */
export type ClientMiddlewareArgs = [className: string, job: JobPayload, queue: string, redis: TsqRedis];

export interface ClientOptions {
  /** A connection to share, or a Redis URL (default: REDIS_URL, then redis://127.0.0.1:6379/0). */
  redis?: TsqRedis | string;
  middleware?: Chain<ClientMiddlewareArgs>;
  /** 6/7: float epoch seconds; 8: integer epoch milliseconds. */
  sidekiqVersion?: 6 | 7 | 8;
  /** Largest serialized job in bytes, after compression (default: TSQ_MAX_PAYLOAD_BYTES, then 5 MB). */
  maxPayloadBytes?: number;
  /** Bytes of JSON args above which they are compressed (default: TSQ_COMPRESS_THRESHOLD_BYTES, then 100,000); 0 = never. */
  compressThresholdBytes?: number;
  /** Largest args accepted for compression, in bytes (default: TSQ_MAX_INFLATED_BYTES, then 100 MB). */
  maxInflatedBytes?: number;
  /** Routing rules for pushes that name no queue (default: the process's, see `configureRouting`). */
  router?: WorkerRouter;
  /**
   * Hold pushes in memory (bounded, in order) while Redis is unreachable and write them when it is back
   * (docs/flow-control.md#reliable-push). Default: TSQ_RELIABLE_PUSH, else off.
   */
  reliablePush?: ReliablePushOptions | boolean;
}

/** A job to push. Option fields are snake_case, as on the wire; `class` may be a job class. */
export interface PushItem {
  class: string | JobClassLike;
  args: unknown[];
  queue?: string;
  /** Epoch seconds (float) at which to run; absent or not in the future means now. */
  at?: number;
  jid?: string;
  [field: string]: unknown;
}

/** Many jobs of one class: `args` is a list of argument lists; `at` one time or one per job. */
export interface BulkItem {
  class: string | JobClassLike;
  args: unknown[][];
  queue?: string;
  jid?: string;
  at?: number | number[];
  /** Jobs per round trip (default 1,000; 100 when scheduled, as ZADD costs more). */
  batchSize?: number;
  [field: string]: unknown;
}

/**
 * The client middleware every Client installs, for the APIs of the lock core: deduplication (idempotent
 * classes only, docs/deduplication.md) and unique jobs (classes with `uniqueFor`, docs/unique-jobs.md).
 * Both cost nothing (no Redis call) for other classes.
 */
export const LOCK_MIDDLEWARE = [deduplicateOnPush, uniqueOnPush, sujOnPush] as const; // sujOnPush: docs/sidekiq-unique-jobs.md

const JOB_DEFAULTS = { retry: true, queue: "default" } as const;
/** Sidekiq treats intervals below this as relative seconds, above as epoch seconds. */
export const EPOCH_THRESHOLD = 1_000_000_000;

export class Client {
  readonly middleware: Chain<ClientMiddlewareArgs>;
  readonly redis: TsqRedis;
  private readonly ownsConnection: boolean;
  private readonly format: TimestampFormat;
  private readonly version: 6 | 7 | 8;
  private readonly sizeLimits: SizeLimits;
  private readonly router: WorkerRouter | undefined;
  private readonly buffer: PushBuffer | undefined;

  constructor(options: ClientOptions = {}) {
    const reliable = resolveReliablePush(options.reliablePush);
    if (typeof options.redis === "object") {
      // A connection made elsewhere gets tsq's scripts too (defining them again is harmless).
      this.redis = defineScripts(options.redis);
      this.ownsConnection = false;
    } else {
      // No auto-pipelining: a push is one command (push-jobs-2.lua) and pushes in flight already share
      // the socket; a pipeline per tick doubled the CPU of a push awaited alone (npm run bench:push).
      this.redis = connect(options.redis ?? process.env.REDIS_URL ?? DEFAULTS.redisUrl, {
        name: "tsq-client",
        autoPipelining: false,
        // Reliable push holds a push made while Redis is away instead of letting it wait in ioredis.
        ...(reliable ? { offlineQueue: false } : {}),
      });
      this.ownsConnection = true;
    }
    this.middleware = options.middleware ?? new Chain<ClientMiddlewareArgs>();
    instrumentClient(this.middleware); // a producer span per push, when an OpenTelemetry SDK is registered
    for (const lock of LOCK_MIDDLEWARE) this.middleware.add(lock);
    this.version = options.sidekiqVersion ?? DEFAULTS.sidekiqVersion;
    this.format = this.version === 8 ? "milliseconds" : "seconds";
    this.sizeLimits = resolveSizeLimits(options);
    this.router = options.router;
    if (reliable) this.buffer = new PushBuffer(this.redis, (entries) => this.rawPush(entries), reliable);
  }

  /** Jobs held in memory by reliable push, waiting for Redis (0 when it is off). */
  get bufferedJobs(): number {
    return this.buffer?.size ?? 0;
  }

  /**
   * Everything `push` does but the write: validation, client middleware, strict args, serialization.
   * For callers that write the job as part of an atomic step of their own (a periodic job's tick claim).
   * Null when a middleware stopped the push.
   */
  async build(item: PushItem): Promise<{ job: JobPayload; json: string } | null> {
    const job = this.normalize(item);
    const json = await this.prepare(job);
    return json === null ? null : { job, json };
  }

  /**
   * Pushes one job. Resolves to its jid; for a duplicate that was dropped, the jid of the job already
   * enqueued (its `duplicate-of`); null when another middleware stopped the push, or a unique job's
   * lock is held by another job (as Enterprise's `push` returns nil).
   */
  async push(item: PushItem): Promise<string | null> {
    const job = this.normalize(item);
    const json = await this.prepare(job);
    if (json === null) return duplicateOf(job);
    await this.send([{ job, json }]);
    return job.jid;
  }

  /**
   * Pushes many jobs of one class in slices of `batchSize`, one round trip per slice. Resolves to one
   * jid per argument list, with null where a middleware refused the job.
   */
  async pushBulk(item: BulkItem): Promise<(string | null)[]> {
    const { args, at, batchSize, ...rest } = item;
    if (!Array.isArray(args) || !args.every(Array.isArray)) {
      throw new ArgumentError("pushBulk: args must be an array of argument arrays, e.g. [[1], [2]]");
    }
    if (Array.isArray(at) && at.length !== args.length) {
      throw new ArgumentError(`pushBulk: at has ${at.length} times for ${args.length} jobs; give one per job`);
    }
    if (rest.jid !== undefined && args.length > 1) {
      throw new ArgumentError("pushBulk: an explicit jid cannot be shared by several jobs; drop `jid`");
    }
    const size = batchSize ?? (at === undefined ? 1000 : 100);
    if (!Number.isInteger(size) || size < 1)
      throw new ArgumentError(`pushBulk: batchSize must be a positive integer, got ${size}`);

    const jids: (string | null)[] = [];
    for (let start = 0; start < args.length; start += size) {
      const slice: { job: JobPayload; json: string }[] = [];
      for (let i = start; i < Math.min(start + size, args.length); i++) {
        const when = Array.isArray(at) ? at[i] : at;
        const job = this.normalize({
          ...rest,
          class: rest.class,
          args: args[i]!,
          ...(when === undefined ? {} : { at: when }),
        });
        const json = await this.prepare(job);
        jids.push(json === null ? duplicateOf(job) : job.jid);
        if (json !== null) slice.push({ job, json });
      }
      if (slice.length > 0) await this.send(slice);
    }
    return jids;
  }

  /**
   * Pushes jobs of any classes and queues together: each through validation and client middleware as
   * `push` does, then all in one pipelined round trip. Resolves to one result per item, as `push`
   * would have. For bulk moves (retrying a whole set), where a round trip per job is the cost.
   */
  async pushMany(items: readonly PushItem[]): Promise<(string | null)[]> {
    const results: (string | null)[] = [];
    const ready: { job: JobPayload; json: string }[] = [];
    for (const item of items) {
      const job = this.normalize(item);
      const json = await this.prepare(job);
      results.push(json === null ? duplicateOf(job) : job.jid);
      if (json !== null) ready.push({ job, json });
    }
    if (ready.length > 0) await this.send(ready);
    return results;
  }

  /** Closes the connection if this client opened it, after reliable push's buffer had its chance to land. */
  async close(): Promise<void> {
    await this.buffer?.close();
    if (this.ownsConnection) await this.redis.quit().catch(() => this.redis.disconnect());
  }

  /** Validates the item and fills in Sidekiq's defaults (`normalize_item`). */
  private normalize(item: PushItem): JobPayload {
    if (item === null || typeof item !== "object") throw new ArgumentError("push: expected a job object");
    const { class: klass, ...given } = item;
    // A field set to undefined (`{ queue: opts.queue }`) means "not given", as it would in JSON.
    const fields = Object.fromEntries(Object.entries(given).filter(([, value]) => value !== undefined));
    if (typeof klass !== "string" && typeof klass !== "function") {
      throw new ArgumentError('push: "class" must be a class name or a job class');
    }
    const className = jobNameOf(klass);
    if (className === "") throw new ArgumentError('push: "class" must not be empty');
    if (!Array.isArray(fields.args)) throw new ArgumentError(`push: args for ${className} must be an array`);
    const classOptions = typeof klass === "string" ? {} : wireOptions((klass as JobClassLike).options);
    // Worker attributes (routed queue, job version) sit below the class's options and the push's fields.
    const attributes = attributeFields(klass, this.router ?? currentRouter());
    const job = { class: className, ...JOB_DEFAULTS, ...attributes, ...classOptions, ...fields } as JobPayload;
    job.class = className;
    inheritSource(item, job);
    attachJobClass(job, klass);

    if (typeof job.queue !== "string" || job.queue === "")
      throw new ArgumentError(`push: queue for ${className} must be a non-empty string`);
    if (job.at !== undefined && (typeof job.at !== "number" || !Number.isFinite(job.at))) {
      throw new ArgumentError(`push: at for ${className} must be epoch seconds (a finite number)`);
    }
    if (job.tags !== undefined && !Array.isArray(job.tags))
      throw new ArgumentError(`push: tags for ${className} must be an array`);
    if (job.retry !== undefined && typeof job.retry !== "boolean" && !(Number.isInteger(job.retry) && job.retry >= 0)) {
      throw new ArgumentError(`push: retry for ${className} must be true, false or a retry count >= 0`);
    }
    if (
      job.retry_for !== undefined &&
      !(typeof job.retry_for === "number" && job.retry_for >= 0 && job.retry_for < EPOCH_THRESHOLD)
    ) {
      throw new ArgumentError(`push: retry_for for ${className} must be relative seconds (0 to 1e9)`);
    }
    if (job.jid === undefined) job.jid = newJid();
    else if (typeof job.jid !== "string" || job.jid === "")
      throw new ArgumentError("push: jid must be a non-empty string");
    if (job.created_at === undefined) job.created_at = nowStamp(this.format);
    stampExpiry(job, className);
    markBatchMember(job); // inside a `batch.jobs` block: gets the bid; joins in send()
    addCorrelationId(job);
    return job;
  }

  /** Runs middleware, strict args and the size check. Returns the JSON, or null if a middleware refused. */
  private async prepare(job: JobPayload): Promise<string | null> {
    const ran = await this.middleware.invoke([job.class, job, job.queue, this.redis], async () => {});
    if (!ran) return null;
    verifyStrictArgs(job.args);
    for (const [key, value] of Object.entries(job)) {
      if (key !== "args") verifyStrictArgs(value, key);
    }
    return this.serialize(job);
  }

  /**
   * The stored form: immediate jobs get `enqueued_at` now (microseconds before the write); scheduled
   * ones drop `at`, which becomes the score (8.x also drops `enqueued_at`).
   */
  private serialize(job: JobPayload): string {
    let stored: Record<string, unknown> = job;
    if (job.at === undefined) {
      job.enqueued_at = nowStamp(this.format);
    } else {
      const { at: _at, ...rest } = job;
      if (this.version === 8) delete rest.enqueued_at;
      stored = rest;
    }
    // Big args are compressed as GitLab does; a job still too big is refused (payloadSize/compress.ts).
    return limitPayloadSize(job, stored, dumpPayload(stored), this.sizeLimits);
  }

  /** Through reliable push's buffer when it is on. */
  private async send(entries: { job: JobPayload; json: string }[]): Promise<void> {
    // Batch members join before the write, so none can finish before its batch knows it (src/batch).
    const joined = joinBatches(
      this.redis,
      entries.map((e) => e.job),
    );
    const undoJoin = joined && (await joined);
    try {
      await (this.buffer ? this.buffer.push(entries) : this.rawPush(entries));
    } catch (error) {
      await undoJoin?.();
      throw error;
    }
  }

  /** Writes prepared jobs in one pipelined round trip; on a failover error reconnects and retries once. */
  private async rawPush(entries: { job: JobPayload; json: string }[]): Promise<void> {
    try {
      try {
        await this.writeOnce(entries);
      } catch (error) {
        if (!isFailoverError(error)) throw error;
        this.redis.disconnect(true);
        await this.writeOnce(entries);
      }
    } catch (error) {
      throw refused(entries, error);
    }
  }

  private async writeOnce(entries: { job: JobPayload; json: string }[]): Promise<void> {
    if (entries.length === 1 && entries[0]!.job.at === undefined) {
      // One job, as performAsync pushes it: one push-jobs-2.lua call. Two commands per push (SADD,
      // LPUSH) in a pipeline of their own cost half the throughput with many pushes in flight.
      const { job, json } = entries[0]!;
      await this.redis.pushJobs(QUEUES, queueKey(job.queue), job.queue, json);
      return;
    }
    const pipeline = this.redis.pipeline();
    const scored: string[] = [];
    const byQueue = new Map<string, string[]>();
    for (const { job, json } of entries) {
      if (job.at !== undefined) {
        scored.push(formatSeconds(job.at), json);
        continue;
      }
      const list = byQueue.get(job.queue) ?? [];
      list.push(json);
      byQueue.set(job.queue, list);
    }
    if (scored.length > 0) pipeline.zadd(SCHEDULE, ...scored);
    if (byQueue.size > 0) {
      pipeline.sadd(QUEUES, ...byQueue.keys());
      for (const [queue, jsons] of byQueue) pipeline.lpush(queueKey(queue), ...jsons);
    }
    const results = (await pipeline.exec()) ?? [];
    for (const [error] of results) if (error) throw error;
  }
}

/** The jid a stopped push stands for: the existing job it duplicates (GitLab's `duplicate-of`), else null. */
function duplicateOf(job: JobPayload): string | null {
  const existing = job["duplicate-of"];
  return typeof existing === "string" && existing !== "" ? existing : null;
}

/** A Redis refusal as an error that says what it means, what to do, and that nothing was enqueued. */
function refused(entries: { job: JobPayload }[], error: unknown): EnqueueError {
  const first = entries[0]!.job;
  const what =
    entries.length === 1 ? `job ${first.class} (jid ${first.jid})` : `${entries.length} jobs of ${first.class}`;
  const problem = explainRedisError(error);
  return new EnqueueError(
    `${what} was not enqueued: Redis refused the write: ${problem.advice} (Redis said: ${problem.reply})`,
    { cause: error },
  );
}

/** Re-exported for the Job API: JSON-native argument values. */
export type { JsonValue };
