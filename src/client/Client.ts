/**
 * The client: validates a job, runs client middleware, and writes it to Redis exactly as Sidekiq's
 * `Client#push` does (immediate: `SADD queues` + `LPUSH queue:<q>` with `enqueued_at`; scheduled:
 * `ZADD schedule <float seconds>` without `at`), pipelined in one round trip.
 */
import { ArgumentError, PayloadTooLargeError } from "../errors.js";
import { Chain } from "../middleware/Chain.js";
import { dumpPayload, inheritSource, newJid, type JobPayload, type JsonValue } from "../payload.js";
import { connect, isFailoverError, type TsqRedis } from "../redis/connection.js";
import { QUEUES, SCHEDULE, queueKey } from "../keys.js";
import { formatSeconds, nowStamp, type TimestampFormat } from "../timestamps.js";
import { DEFAULTS } from "../config/defaults.js";
import { verifyStrictArgs } from "./strictArgs.js";
import { jobNameOf, wireOptions, type JobClassLike } from "./options.js";

/** Arguments of a client middleware: `(className, job, queue, redis, next)`. */
export type ClientMiddlewareArgs = [className: string, job: JobPayload, queue: string, redis: TsqRedis];

export interface ClientOptions {
  /** A connection to share, or a Redis URL (default: REDIS_URL, then redis://127.0.0.1:6379/0). */
  redis?: TsqRedis | string;
  middleware?: Chain<ClientMiddlewareArgs>;
  /** 6/7: float epoch seconds; 8: integer epoch milliseconds. */
  sidekiqVersion?: 6 | 7 | 8;
  /** Largest serialized job in bytes (default 5 MB). */
  maxPayloadBytes?: number;
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

const JOB_DEFAULTS = { retry: true, queue: "default" } as const;
/** Sidekiq treats intervals below this as relative seconds, above as epoch seconds. */
export const EPOCH_THRESHOLD = 1_000_000_000;

export class Client {
  readonly middleware: Chain<ClientMiddlewareArgs>;
  readonly redis: TsqRedis;
  private readonly ownsConnection: boolean;
  private readonly format: TimestampFormat;
  private readonly version: 6 | 7 | 8;
  private readonly maxPayloadBytes: number;

  constructor(options: ClientOptions = {}) {
    if (typeof options.redis === "object") {
      this.redis = options.redis;
      this.ownsConnection = false;
    } else {
      this.redis = connect(options.redis ?? process.env.REDIS_URL ?? DEFAULTS.redisUrl, { name: "tsq-client" });
      this.ownsConnection = true;
    }
    this.middleware = options.middleware ?? new Chain<ClientMiddlewareArgs>();
    this.version = options.sidekiqVersion ?? DEFAULTS.sidekiqVersion;
    this.format = this.version === 8 ? "milliseconds" : "seconds";
    this.maxPayloadBytes = options.maxPayloadBytes ?? DEFAULTS.maxPayloadBytes;
  }

  /** Pushes one job. Resolves to its jid, or null when a middleware stopped the push. */
  async push(item: PushItem): Promise<string | null> {
    const job = this.normalize(item);
    const json = await this.prepare(job);
    if (json === null) return null;
    await this.rawPush([{ job, json }]);
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
    if (!Number.isInteger(size) || size < 1) throw new ArgumentError(`pushBulk: batchSize must be a positive integer, got ${size}`);

    const jids: (string | null)[] = [];
    for (let start = 0; start < args.length; start += size) {
      const slice: { job: JobPayload; json: string }[] = [];
      for (let i = start; i < Math.min(start + size, args.length); i++) {
        const when = Array.isArray(at) ? at[i] : at;
        const job = this.normalize({ ...rest, class: rest.class, args: args[i]!, ...(when === undefined ? {} : { at: when }) });
        const json = await this.prepare(job);
        jids.push(json === null ? null : job.jid);
        if (json !== null) slice.push({ job, json });
      }
      if (slice.length > 0) await this.rawPush(slice);
    }
    return jids;
  }

  /** Closes the connection if this client opened it. */
  async close(): Promise<void> {
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
    const job = { class: className, ...JOB_DEFAULTS, ...classOptions, ...fields } as JobPayload;
    job.class = className;
    inheritSource(item, job);

    if (typeof job.queue !== "string" || job.queue === "") throw new ArgumentError(`push: queue for ${className} must be a non-empty string`);
    if (job.at !== undefined && (typeof job.at !== "number" || !Number.isFinite(job.at))) {
      throw new ArgumentError(`push: at for ${className} must be epoch seconds (a finite number)`);
    }
    if (job.tags !== undefined && !Array.isArray(job.tags)) throw new ArgumentError(`push: tags for ${className} must be an array`);
    if (job.retry !== undefined && typeof job.retry !== "boolean" && !(Number.isInteger(job.retry) && job.retry >= 0)) {
      throw new ArgumentError(`push: retry for ${className} must be true, false or a retry count >= 0`);
    }
    if (job.retry_for !== undefined && !(typeof job.retry_for === "number" && job.retry_for >= 0 && job.retry_for < EPOCH_THRESHOLD)) {
      throw new ArgumentError(`push: retry_for for ${className} must be relative seconds (0 to 1e9)`);
    }
    if (job.jid === undefined) job.jid = newJid();
    else if (typeof job.jid !== "string" || job.jid === "") throw new ArgumentError("push: jid must be a non-empty string");
    if (job.created_at === undefined) job.created_at = nowStamp(this.format);
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
    const json = dumpPayload(stored);
    const bytes = Buffer.byteLength(json);
    if (bytes > this.maxPayloadBytes) {
      throw new PayloadTooLargeError(
        `job ${job.class} (jid ${job.jid}) is ${formatBytes(bytes)}, over the limit of ${formatBytes(this.maxPayloadBytes)} ` +
          "(maxPayloadBytes); store large data elsewhere and pass a reference such as an id or URL",
      );
    }
    return json;
  }

  /** Writes prepared jobs in one pipelined round trip; on a failover error reconnects and retries once. */
  private async rawPush(entries: { job: JobPayload; json: string }[]): Promise<void> {
    try {
      await this.writeOnce(entries);
    } catch (error) {
      if (!isFailoverError(error)) throw error;
      this.redis.disconnect(true);
      await this.writeOnce(entries);
    }
  }

  private async writeOnce(entries: { job: JobPayload; json: string }[]): Promise<void> {
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

/** Exact bytes, plus MB for big sizes: "5242990 bytes (5.00 MB)" (MB alone hides a 100-byte overrun). */
function formatBytes(bytes: number): string {
  const MB = 1024 * 1024;
  return bytes >= MB ? `${bytes} bytes (${(bytes / MB).toFixed(2)} MB)` : `${bytes} bytes`;
}

/** Re-exported for the Job API: JSON-native argument values. */
export type { JsonValue };
