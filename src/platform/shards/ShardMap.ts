/**
 * Which Redis owns which queue, when one Redis is not enough (Sidekiq's sharding: several Redis servers,
 * each holding the queues, schedule, retries and dead jobs of its own queues). Configured as
 *
 *   redis_url: redis://10.0.0.1:6379/0        # the "default" shard: every queue no shard lists
 *   shards:
 *     bulk: { url: redis://10.0.0.2:6379/0, queues: [bulk, export] }
 *
 * A shard's queue name also covers its namespace (`export` owns `export:daily`), as a bare name in a
 * `tsq-cluster` group does. A job's whole life stays on its queue's shard: the client pushes it there,
 * a worker serving that shard runs it, and its retries and death are written there.
 *
 * Pure: no connections (see ShardClients and the cluster for those).
 */
import { ConfigError } from "../../wire/errors.js";
import { redactUrl } from "../redis/connection.js";

/** The shard of every queue that no `shards:` entry lists: the top-level Redis. */
export const DEFAULT_SHARD = "default";

export interface ShardConfig {
  name: string;
  /** A Redis URL (redis://, rediss://, redis+sentinel://); may hold a password: log it with redactUrl. */
  url: string;
  /** Queues owned by this shard (each with its `name:*` namespace); empty for the default shard. */
  queues: string[];
}

export class ShardMap {
  private readonly byName = new Map<string, ShardConfig>();
  /** Queue name (as listed) → shard name. */
  private readonly owner = new Map<string, string>();

  /** `shards` are the `shards:` entries; `defaultUrl` is the top-level Redis. */
  constructor(defaultUrl: string, shards: readonly ShardConfig[] = []) {
    this.byName.set(DEFAULT_SHARD, { name: DEFAULT_SHARD, url: defaultUrl, queues: [] });
    for (const shard of shards) {
      if (this.byName.has(shard.name)) {
        throw new ConfigError(
          shard.name === DEFAULT_SHARD
            ? `shards: "${DEFAULT_SHARD}" is the top-level Redis (redis_url); give this shard another name`
            : `shards: "${shard.name}" is listed twice; merge the two entries`,
        );
      }
      if (shard.queues.length === 0)
        throw new ConfigError(`shards.${shard.name} lists no queues; name the queues it owns, e.g. queues: [bulk]`);
      for (const queue of shard.queues) {
        const other = this.owner.get(queue);
        if (other !== undefined) {
          throw new ConfigError(
            `queue "${queue}" is listed by shards ${other} and ${shard.name}; a queue lives on one shard`,
          );
        }
        this.owner.set(queue, shard.name);
      }
      this.byName.set(shard.name, { ...shard, queues: [...shard.queues] });
    }
  }

  /** True when `shards:` names at least one shard besides the default. */
  get sharded(): boolean {
    return this.byName.size > 1;
  }

  /** Every shard, the default first. */
  all(): ShardConfig[] {
    return [...this.byName.values()];
  }

  names(): string[] {
    return [...this.byName.keys()];
  }

  has(name: string): boolean {
    return this.byName.has(name);
  }

  /** The shard named `name`; a ConfigError listing the shards when there is none. */
  get(name: string): ShardConfig {
    const shard = this.byName.get(name);
    if (shard === undefined) {
      throw new ConfigError(`there is no shard "${name}"; the shards are ${this.names().join(", ")} (config shards:)`);
    }
    return shard;
  }

  /** The shard owning `queue`: an exact listing first, then the longest listed namespace, else the default. */
  shardOf(queue: string): string {
    const exact = this.owner.get(queue);
    if (exact !== undefined || !this.sharded) return exact ?? DEFAULT_SHARD;
    // `a:b:c` is owned by a listing of `a:b`, else of `a`.
    for (let end = queue.lastIndexOf(":"); end > 0; end = queue.lastIndexOf(":", end - 1)) {
      const owner = this.owner.get(queue.slice(0, end));
      if (owner !== undefined) return owner;
    }
    return DEFAULT_SHARD;
  }

  urlOf(name: string): string {
    return this.get(name).url;
  }

  /**
   * Throws a ConfigError when a process serving `shard` is given a queue another shard owns: it would
   * wait on a Redis that never receives that queue's jobs.
   */
  checkServes(shard: string, queues: Iterable<string>, who = "this process"): void {
    this.get(shard);
    for (const queue of queues) {
      const owner = this.shardOf(queue);
      if (owner !== shard) {
        throw new ConfigError(
          `queue "${queue}" lives on shard ${owner} (${redactUrl(this.urlOf(owner))}) but ${who} serves shard ${shard}; ` +
            `serve it from a process with --shard ${owner}, or move the queue in the config's shards:`,
        );
      }
    }
  }

  /** Plain data for a child process's options (the map is rebuilt there). */
  toConfig(): ShardConfig[] {
    return this.all().filter((shard) => shard.name !== DEFAULT_SHARD);
  }
}
