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
 * On a Redis Cluster (a `redis+cluster://` top-level URL) a shard is a slot group: one hash tag on the
 * cluster (clusterUrl.ts) instead of one server. A queue no `shards:` entry lists is then a group of its
 * own, named after it; the `default` group holds the default queue and the fleet's cron leader.
 *
 * Pure: no connections (see ShardClients and the cluster for those).
 */
import { ConfigError } from "../../wire/errors.js";
import { checkGroupName, clusterUrlFor, groupOfUrl, isClusterUrl } from "../redis/clusterUrl.js";
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

  /** True on a Redis Cluster: each shard is a slot group of the top-level cluster URL. */
  readonly cluster: boolean;

  /** `shards` are the `shards:` entries; `defaultUrl` is the top-level Redis. */
  constructor(
    private readonly defaultUrl: string,
    shards: readonly ShardConfig[] = [],
  ) {
    this.cluster = isClusterUrl(defaultUrl);
    this.byName.set(DEFAULT_SHARD, { name: DEFAULT_SHARD, url: this.groupUrl(DEFAULT_SHARD), queues: [] });
    for (const shard of shards) {
      if (this.cluster) {
        if (shard.url !== "" && shard.url !== this.groupUrl(shard.name))
          throw new ConfigError(
            `shards.${shard.name} names its own Redis, but the top-level Redis is a Redis Cluster: there a shard ` +
              "is a slot group of that cluster; drop its url (or use a single-server redis_url)",
          );
        checkGroupName(shard.name, `shards.${shard.name}`);
      } else if (shard.url === "")
        throw new ConfigError(`shards.${shard.name} needs url or redis (only on a Redis Cluster may it have none)`);
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
      this.byName.set(shard.name, { ...shard, url: this.groupUrl(shard.name, shard.url), queues: [...shard.queues] });
    }
  }

  /** On a cluster, the URL of slot group `name`; else `url` (a shard's own). */
  private groupUrl(name: string, url: string = this.defaultUrl): string {
    return this.cluster ? clusterUrlFor(this.defaultUrl, name) : url;
  }

  /** True when `shards:` names at least one shard besides the default, and always on a cluster. */
  get sharded(): boolean {
    return this.cluster || this.byName.size > 1;
  }

  /**
   * On a cluster, adds slot groups found in Redis (discoverGroups.ts) to those `all()` and `names()`
   * list: an unlisted queue's group is known only once it holds keys.
   */
  remember(groups: readonly string[]): void {
    if (!this.cluster) return;
    for (const group of groups) if (!this.byName.has(group) && this.has(group)) this.byName.set(group, this.get(group));
  }

  /** Every shard, the default first. */
  all(): ShardConfig[] {
    return [...this.byName.values()];
  }

  names(): string[] {
    return [...this.byName.keys()];
  }

  /** On a cluster every valid group name is a shard (an unlisted queue's own group). */
  has(name: string): boolean {
    return this.byName.has(name) || (this.cluster && name !== "" && !/[{}]/.test(name));
  }

  /** The shard named `name`; a ConfigError listing the shards when there is none. */
  get(name: string): ShardConfig {
    const shard = this.byName.get(name);
    if (shard === undefined && this.cluster) {
      checkGroupName(name, "Redis Cluster");
      return { name, url: this.groupUrl(name), queues: [name] };
    }
    if (shard === undefined) {
      throw new ConfigError(`there is no shard "${name}"; the shards are ${this.names().join(", ")} (config shards:)`);
    }
    return shard;
  }

  /** The shard owning `queue`: an exact listing first, then the longest listed namespace, else the default. */
  shardOf(queue: string): string {
    const exact = this.owner.get(queue);
    if (exact !== undefined || !this.sharded) return exact ?? DEFAULT_SHARD;
    if (this.cluster) return this.groupOf(queue);
    // `a:b:c` is owned by a listing of `a:b`, else of `a`.
    for (let end = queue.lastIndexOf(":"); end > 0; end = queue.lastIndexOf(":", end - 1)) {
      const owner = this.owner.get(queue.slice(0, end));
      if (owner !== undefined) return owner;
    }
    return DEFAULT_SHARD;
  }

  /** On a cluster: the listed group of a queue's namespace, else the queue's own group. */
  private groupOf(queue: string): string {
    for (let end = queue.lastIndexOf(":"); end > 0; end = queue.lastIndexOf(":", end - 1)) {
      const owner = this.owner.get(queue.slice(0, end));
      if (owner !== undefined) return owner;
    }
    checkGroupName(queue, `queue "${queue}" on a Redis Cluster`);
    return queue;
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
    return this.all()
      .filter((shard) => shard.name !== DEFAULT_SHARD)
      .map((shard) => (this.cluster ? { ...shard, url: "" } : shard));
  }
}

/**
 * The shards of a lone Redis Cluster URL: every queue its own slot group; `home` the URL's group (its
 * path), else the default group.
 */
export function clusterShards(url: string): { map: ShardMap; home: string } {
  return { map: new ShardMap(url), home: groupOfUrl(url) ?? DEFAULT_SHARD };
}
