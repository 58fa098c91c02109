/**
 * What a Client is built with: its Redis (or shards), middleware, wire format, size limits, routing,
 * plug-ins and connection deadlines. Every setting has a default from the environment or DEFAULTS.
 * A feature adds its own settings (reliable push's `reliablePush`): typed by its `declare module` on
 * ClientOptions, named in its plug-in's `clientSettings`, handed to its client hooks as given.
 */
import type { Chain } from "../platform/Chain.js";
import type { TsqRedis } from "../platform/redis/connection.js";
import type { ShardMap } from "../platform/shards/ShardMap.js";
import type { WorkerRouter } from "../platform/attributes/WorkerRouter.js";
import type { ClientMiddlewareArgs, ClientPlugin } from "./plugin.js";
import type { JobClassLookup } from "./jobClasses.js";
import type { SidekiqVersionSetting } from "../wire/sidekiqVersion.js";
import { ArgumentError } from "../wire/errors.js";
import { refuseUnknownSettings, type ListsEveryKey } from "../platform/util/unknownKeys.js";

/** The core's settings; ClientOptions is these and the features' own. */
export interface CoreClientOptions {
  /** A connection to share, or a Redis URL (default: REDIS_URL, then redis://127.0.0.1:6379/0). */
  redis?: TsqRedis | string;
  middleware?: Chain<ClientMiddlewareArgs>;
  /**
   * Timestamps to write: 6/7 float epoch seconds, 8 integer epoch milliseconds; `"auto"` (the default)
   * follows the Ruby Sidekiq processes in Redis, read in the background at the first push and then at
   * most once a minute (pushes before the first answer, or with no Ruby process, write seconds).
   */
  sidekiqVersion?: SidekiqVersionSetting;
  /** Largest serialized job in bytes, after compression (default: TSQ_MAX_PAYLOAD_BYTES, then 5 MB). */
  maxPayloadBytes?: number;
  /** Bytes of JSON args above which they are compressed (default: TSQ_COMPRESS_THRESHOLD_BYTES, then 100,000); 0 = never. */
  compressThresholdBytes?: number;
  /** Largest args accepted for compression, in bytes (default: TSQ_MAX_INFLATED_BYTES, then 100 MB). */
  maxInflatedBytes?: number;
  /** Routing rules for pushes that name no queue (default: the process's, see `configureRouting`). */
  router?: WorkerRouter;
  /**
   * Finds the class of a job pushed by name (the poller's re-push, a retry), so plug-ins read its
   * attributes (`static idempotent`, a concurrency limit) as for a push by class. A worker's client looks
   * in that worker's registry. Default: none; such a push is of a class known by name only.
   */
  jobClasses?: JobClassLookup;
  /**
   * The options of the worker this client belongs to (a worker sets it on its own client): plug-ins read
   * their settings from them, as the worker's own hooks do. Default: none (a client on its own).
   */
  workerOptions?: Readonly<Record<string, unknown>>;
  /** Several Redis servers, each owning some queues: a push goes to its queue's shard (docs/shards.md). */
  shards?: { map: ShardMap; home?: string };
  /** Deadline of each command on the connections this client opens (ms); default none (they wait for Redis). */
  commandTimeoutMs?: number;
  /**
   * Features, in chain order (src/plugins.ts lists the built-in ones). Default: every built-in feature
   * for the package's `Client` (src/library/Client.ts); none for the core class unless the process set
   * a list at boot (defaultPlugins.ts). `[]`: plain Sidekiq OSS pushes.
   */
  plugins?: readonly ClientPlugin[];
  /**
   * Seconds a push waits for a Redis that is not connected before it fails with RedisUnreachableError
   * (nothing written). Default: TSQ_CONNECT_TIMEOUT, else 10; 0 waits for as long as Redis is away.
   * With reliable push the job is held in memory instead.
   */
  connectTimeout?: number;
  /**
   * Connect at the first command rather than at construction (the default client does: a process that
   * only pushes in tsq/testing's fake or inline mode never opens a connection). Ignored with reliable push.
   */
  lazyConnect?: boolean;
}

// Open: each feature's `declare module` adds its settings here (its plugin.ts), so an app's `new
// Client({...})` is typed with every feature it imports.
// eslint-disable-next-line @typescript-eslint/no-empty-object-type
export interface ClientOptions extends CoreClientOptions {}

/** Every setting a Client knows: anything else is a typo, refused by name. */
const KNOWN = [
  "redis",
  "middleware",
  "sidekiqVersion",
  "maxPayloadBytes",
  "compressThresholdBytes",
  "maxInflatedBytes",
  "router",
  "jobClasses",
  "workerOptions",
  "shards",
  "commandTimeoutMs",
  "plugins",
  "connectTimeout",
  "lazyConnect",
] as const satisfies readonly (keyof CoreClientOptions)[];
// A core setting missing from KNOWN fails to compile here.
const everySetting: ListsEveryKey<CoreClientOptions, typeof KNOWN> = true;
void everySetting;

/**
 * Throws ArgumentError naming the first key of `new Client(options)` that is no setting of the core or of
 * its plug-ins (a typo from JavaScript).
 */
export function refuseUnknownClientSettings(options: ClientOptions, plugins: readonly ClientPlugin[]): void {
  if (options === null || typeof options !== "object" || Array.isArray(options))
    throw new ArgumentError("new Client(options): options must be an object");
  refuseUnknownSettings("Client", options, [...KNOWN, ...plugins.flatMap((plugin) => plugin.clientSettings ?? [])]);
  const { redis } = options as { redis?: unknown };
  // `{ url }` or a config block is a common first guess; it would fail later as "defineCommand is not
  // a function" or hang, far from the mistake.
  if (redis !== undefined && typeof redis !== "string" && !isConnection(redis))
    throw new ArgumentError(
      `new Client(options): \`redis\` must be a Redis URL (a string such as "redis://127.0.0.1:6379/0") ` +
        `or an ioredis connection; got ${describeValue(redis)}` +
        (typeof redis === "object" && redis !== null && "url" in redis ? ': write `redis: "<url>"`' : ""),
    );
}

/** An ioredis Redis or Cluster (or a connection that answers commands as one). */
function isConnection(value: unknown): boolean {
  return typeof (value as { sendCommand?: unknown } | null)?.sendCommand === "function";
}

function describeValue(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  if (typeof value === "object")
    return `an object with ${
      Object.keys(value)
        .map((key) => `\`${key}\``)
        .join(", ") || "no keys"
    }`;
  return `a ${typeof value}`;
}
