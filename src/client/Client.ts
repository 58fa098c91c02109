/**
 * The client: validates a job, runs client middleware, and writes it to Redis exactly as Sidekiq's
 * `Client#push` does (immediate: `SADD queues` + `LPUSH queue:<q>` with `enqueued_at`; scheduled:
 * `ZADD schedule <float seconds>` without `at`), pipelined in one round trip.
 */
import { PushRefusedError } from "../wire/errors.js";
import { JobWriter } from "./JobWriter.js";
import { ShardWriters } from "./ShardWriters.js";
import { nullRefused } from "./refusals.js";
import { bulkSliceSize } from "./bulkSize.js";
import { Chain } from "../platform/Chain.js";
import type { JobPayload } from "../wire/payload.js";
import type { TsqRedis } from "../platform/redis/connection.js";
import { isClusterUrl } from "../platform/redis/clusterUrl.js";
import { DEFAULT_SHARD, clusterShards } from "../platform/shards/ShardMap.js";
import { whenReachable } from "../platform/redis/reachable.js";
import { resolveConnectTimeout } from "./connectTimeout.js";
import type { TimestampFormat } from "../wire/timestamps.js";
import { FleetVersion, describeDecision } from "../platform/FleetVersion.js";
import { DEFAULTS } from "../platform/config/defaults.js";
import { verifyStrictArgs } from "./strictArgs.js";
import type { BulkItem, PushItem } from "./options.js";
import { storedJson } from "./storedForm.js";
import { openClientConnection, type ClientConnectionSettings } from "./clientConnection.js";
import { resolveSizeLimits, type SizeLimits } from "./compression/settings.js";
import { logger } from "../platform/logger.js";
import { currentRouter, type WorkerRouter } from "../platform/attributes/WorkerRouter.js";
import { normalizeItem } from "./normalize.js";
import { defaultPlugins } from "./defaultPlugins.js";
import { clientEventBus, type ClientEventBus } from "./events.js";
import type { ClientHooks, ClientMiddlewareArgs, ClientPlugin, PreparedJob, PushDiversion } from "./plugin.js";
import { refuseUnknownClientSettings, type ClientOptions } from "./ClientOptions.js";
import { JobOptionKeys } from "./jobOptionKeys.js";
import { attachJobClass, type JobClassLookup } from "./jobClasses.js";

export type { ClientMiddlewareArgs, PreparedJob } from "./plugin.js";

export type { ClientOptions } from "./ClientOptions.js";

export type { PushItem, BulkItem } from "./options.js";
export { EPOCH_THRESHOLD } from "./normalize.js";
/** Re-exported for the Job API: JSON-native argument values. */
export type { JsonValue } from "../wire/payload.js";

/** ms between a client's own reads of the fleet's Sidekiq versions (`sidekiqVersion: "auto"`). */
const FLEET_READ_INTERVAL_MS = 60_000;

export class Client {
  /** The app's client middleware (the caller's chain, never modified by the Client). */
  readonly middleware: Chain<ClientMiddlewareArgs>;
  /** The plug-ins' middleware, in reverse list order (see plugin.ts). */
  private readonly pluginChain = new Chain<ClientMiddlewareArgs>();
  /** What the plug-ins announce about this client's pushes: deduplicated, refused, parked, batch callbacks. */
  readonly events: ClientEventBus = clientEventBus();
  private readonly hooks: readonly ClientHooks[];
  private readonly plugins: readonly ClientPlugin[];
  /** The job options this client's plug-ins and the core know: a near miss of one is refused at push. */
  readonly optionKeys: JobOptionKeys;
  /** The connection of the home shard (the only one without `shards`). */
  readonly redis: TsqRedis;
  private readonly writers: ShardWriters;
  /** True when a plug-in's write path (reliable push) holds writes while Redis is away. */
  private readonly holdsWrites: boolean;
  /**
   * The wire formats this client writes (timestamps; a worker's metrics keys), from `sidekiqVersion`:
   * fixed, or read from the Ruby processes in Redis (`auto`; the worker around a client reads at each
   * heartbeat, a client on its own in the background, at most once a minute).
   */
  readonly fleetVersion: FleetVersion;
  private readonly sizeLimits: SizeLimits;
  private readonly router: WorkerRouter | undefined;
  private readonly jobClasses: JobClassLookup | undefined;
  /** ms a push waits for an unconnected Redis (0: as long as it takes). */
  private readonly connectTimeoutMs: number;
  /** How this client opens its connections (the home one, one per other shard). */
  private readonly connection: ClientConnectionSettings;
  private diverted: PushDiversion | undefined;

  constructor(options: ClientOptions = {}) {
    this.plugins = options?.plugins ?? defaultPlugins() ?? [];
    refuseUnknownClientSettings(options, this.plugins);
    this.connectTimeoutMs = resolveConnectTimeout(options.connectTimeout) * 1000;
    this.optionKeys = new JobOptionKeys(this.plugins);
    const settings = settingsOf(options, this.plugins);
    const { workerOptions } = options;
    this.hooks = this.plugins.flatMap(
      (plugin) => plugin.client?.({ settings, workerOptions, events: this.events }) ?? [],
    );
    this.holdsWrites = this.hooks.some((hook) => hook.writePath);
    this.connection = {
      lazy: options.lazyConnect === true && !this.holdsWrites,
      holdsWrites: this.holdsWrites,
      commandTimeoutMs: options.commandTimeoutMs,
    };
    for (const hook of [...this.hooks].reverse()) if (hook.middleware) this.pluginChain.add(hook.middleware);
    const owned = typeof options.redis !== "object";
    const url =
      typeof options.redis === "object" ? undefined : (options.redis ?? process.env.REDIS_URL ?? DEFAULTS.redisUrl);
    // A Redis Cluster URL alone: each queue is its own slot group (docs/redis-connections.md).
    const shards = options.shards ?? (url !== undefined && isClusterUrl(url) ? clusterShards(url) : undefined);
    this.redis =
      url === undefined
        ? (options.redis as TsqRedis) // made elsewhere: scripts are defined on it as they first run
        : this.open(shards?.map.cluster ? shards.map.urlOf(shards.home ?? DEFAULT_SHARD) : url);
    const home = new JobWriter(this.redis, owned, this.hooks);
    this.writers = new ShardWriters(home, shards, this.hooks, (shardUrl) => this.open(shardUrl));
    this.middleware = options.middleware ?? new Chain<ClientMiddlewareArgs>();
    this.fleetVersion = new FleetVersion(options.sidekiqVersion ?? DEFAULTS.sidekiqVersion);
    this.sizeLimits = resolveSizeLimits(options);
    this.router = options.router;
    this.jobClasses = options.jobClasses;
  }

  /** Pushes go to `diversion` instead of Redis while it is active (tsq/testing); undefined removes it. */
  divert(diversion: PushDiversion | undefined): void {
    this.diverted = diversion;
  }

  /** The diversion installed with `divert`, active or not. */
  get diversion(): PushDiversion | undefined {
    return this.diverted;
  }

  /** The plug-ins this client was built with, in list order (a worker builds its own client from them). */
  get pluginList(): readonly ClientPlugin[] {
    return this.plugins;
  }

  /**
   * True when a scheduled job must pass the client path one at a time when it comes due (Sidekiq
   * re-pushes each), false when the poller may move them in batches: no middleware of the app's and
   * none of a plug-in's but those enqueue-due-2.lua already hands back for (jobs naming a lock).
   */
  get replaysScheduled(): boolean {
    return this.middleware.size > 0 || this.hooks.some((hook) => hook.middleware && hook.replaysScheduled !== false);
  }

  /** How this client writes `enqueued_at` and other timestamps: float seconds, or integer ms (Sidekiq 8). */
  get timestampFormat(): TimestampFormat {
    return this.fleetVersion.formats.timestamps;
  }

  /** Jobs held in memory by reliable push, waiting for Redis (0 when it is off). */
  get bufferedJobs(): number {
    return this.writers.buffered;
  }

  /** The connection to the Redis that owns `queue`: the home one unless shards say otherwise. */
  redisFor(queue: string): TsqRedis {
    return this.writers.writerFor(queue).redis;
  }

  /** True when `queue` lives on this client's home Redis (always, without shards). */
  ownsQueue(queue: string): boolean {
    return this.writers.writerFor(queue) === this.writers.home;
  }

  /** Writes a job made by `build` (for callers whose atomic step could not include the write). */
  async sendBuilt(built: PreparedJob): Promise<void> {
    await this.send([built]);
  }

  /**
   * Everything `push` does but the write: validation, client middleware, strict args, serialization.
   * For callers that write the job as part of an atomic step of their own (a periodic job's tick claim).
   * Null when a middleware stopped the push.
   */
  build(item: PushItem): Promise<PreparedJob | null> {
    // Validated before anything is awaited: a bad class or option throws at the call (Batch#on).
    const job = this.normalize(item);
    return this.prepare(job, false).then((json) => (json === null ? null : { job, json }));
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
    const size = bulkSliceSize(item);
    const { args, at, batchSize: _batchSize, ...rest } = item;
    const jids: (string | null)[] = [];
    for (let start = 0; start < args.length; start += size) {
      const slice: PreparedJob[] = [];
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
      if (slice.length > 0) await this.sendMany(slice, jids);
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
    const ready: PreparedJob[] = [];
    for (const item of items) {
      const job = this.normalize(item);
      const json = await this.prepare(job);
      results.push(json === null ? duplicateOf(job) : job.jid);
      if (json !== null) ready.push({ job, json });
    }
    if (ready.length > 0) await this.sendMany(ready, results);
    return results;
  }

  /** Closes the connections this client opened, after reliable push's buffers had their chance to land. */
  async close(): Promise<void> {
    await this.writers.close();
  }

  private open(url: string): TsqRedis {
    return openClientConnection(url, this.connection);
  }

  private normalize(item: PushItem): JobPayload {
    const job = normalizeItem(item, this.router ?? currentRouter(), this.timestampFormat, this.optionKeys);
    // A push by name: its class, when this client's worker registered one of that name.
    if (typeof item.class === "string" && this.jobClasses) attachJobClass(job, this.jobClasses(job.class));
    for (const hook of this.hooks) hook.stamp?.(job, item.class);
    return job;
  }

  /**
   * Runs middleware, strict args and the size check. Returns the JSON, or null if a middleware refused.
   * `writing`: false for a job built for a write of the caller's own, which no plug-in writes another way.
   */
  private async prepare(job: JobPayload, writing = true): Promise<string | null> {
    // Locks (deduplication, unique jobs, concurrency limits) live beside the job, on its queue's shard.
    const redis = this.redisFor(job.queue);
    const diverted = this.diverted?.active === true;
    // Fake and inline test modes never touch Redis; reliable push holds the job itself.
    if (!diverted && redis.status !== "ready" && !this.holdsWrites && this.connectTimeoutMs > 0)
      await whenReachable(
        redis,
        this.connectTimeoutMs,
        "the client's connectTimeout (TSQ_CONNECT_TIMEOUT) sets the wait",
      );
    const args: ClientMiddlewareArgs = [job.class, job, job.queue, redis];
    let pluginsRan = diverted || this.pluginChain.size === 0;
    const ran = await this.middleware.invoke(args, async () => {
      if (!pluginsRan) pluginsRan = await this.pluginChain.invoke(args, async () => {});
    });
    if (!ran || !pluginsRan) return null;
    if (!diverted) for (const hook of this.hooks) hook.alternateWrite?.claim(job, writing);
    verifyStrictArgs(job.args);
    for (const [key, value] of Object.entries(job)) {
      if (key !== "args") verifyStrictArgs(value, key);
    }
    return storedJson(job, this.timestampFormat, this.sizeLimits);
  }

  /** Writes prepared jobs: to the test diversion when one is active, else each to its queue's shard. */
  private async send(entries: PreparedJob[]): Promise<void> {
    // Fake and inline test modes never touch Redis.
    if (this.diverted?.active) return this.diverted.take(entries);
    await this.writers.write(entries);
    this.followFleet();
  }

  /**
   * `sidekiqVersion: "auto"`: after a write (Redis is up), the fleet read again if the last read is old.
   * A change is logged at debug: a worker logs its own at info, and a CLI's stdout is its output.
   */
  private followFleet(): void {
    this.fleetVersion.readSoon(this.redis, FLEET_READ_INTERVAL_MS, (decision) => {
      const { fields, message } = describeDecision(this.fleetVersion.setting, decision);
      logger().debug(fields, `tsq client: ${message}`);
    });
  }

  /** `send` for bulk pushes: jobs a plug-in's write refused (PushRefusedError: a full parked list) become null in `results`, logged. */
  private async sendMany(entries: PreparedJob[], results: (string | null)[]): Promise<void> {
    try {
      await this.send(entries);
    } catch (error) {
      if (!(error instanceof PushRefusedError)) throw error;
      nullRefused(results, error);
      logger().warn({ err: error }, `pushed jobs refused, null in the results: ${error.message}`);
    }
  }
}

/** The jid a stopped push stands for: the existing job it duplicates (GitLab's `duplicate-of`), else null. */
function duplicateOf(job: JobPayload): string | null {
  const existing = job["duplicate-of"];
  return typeof existing === "string" && existing !== "" ? existing : null;
}

/** The features' own settings of `new Client(options)`, by name, as given: those its plug-ins declare. */
function settingsOf(options: ClientOptions, plugins: readonly ClientPlugin[]): Record<string, unknown> {
  const given = options as Readonly<Record<string, unknown>>;
  const names = plugins.flatMap((plugin) => plugin.clientSettings ?? []);
  return Object.fromEntries(names.filter((name) => given[name] !== undefined).map((name) => [name, given[name]]));
}
