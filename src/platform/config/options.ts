/**
 * The resolved options of a worker process: what `tsq` (and each `tsq-cluster` child) runs with after
 * flags, the config file, the environment and DEFAULTS have been merged and validated.
 */
import type { Defaults } from "./defaults.js";
import type { ShardConfig } from "../shards/ShardMap.js";

/** One queue of a capsule. Weight 0 means none was given (strict order when all are 0). */
export interface QueueSpec {
  name: string;
  weight: number;
}

export interface CapsuleConfig {
  /** "default" for the capsule built from the top-level `queues`/`concurrency`. */
  name: string;
  concurrency: number;
  queues: QueueSpec[];
}

export type FetchMode = "basic" | "reliable";

export interface WorkerOptions extends Omit<Defaults, "concurrency"> {
  /** The job module (`-r`), resolved to an absolute path; undefined only for tests that register jobs in code. */
  require: string | undefined;
  /** Capsules in order; the first is "default". The process concurrency is the sum of theirs. */
  capsules: CapsuleConfig[];
  /** Process tag shown in the Web UI (`-g`); default: the current directory's name. */
  tag: string;
  labels: string[];
  environment: string;
  verbose: boolean;
  fetch: FetchMode;
  /** Port for GET /metrics on a single process; 0 or undefined = off. */
  metricsPort: number | undefined;
  metricsHost: string;
  /** The shard this process serves (`--shard`, default "default"); `redisUrl` is its Redis. */
  shard?: string;
  /** The top-level Redis: the "default" shard, which owns every queue no shard lists. */
  defaultRedisUrl?: string;
  /** The config's `shards:` (besides the default), for routing pushes (src/platform/shards). */
  shards?: ShardConfig[];
  /** Path of the config file that was read, if any (for logs). */
  configFile: string | undefined;
}
