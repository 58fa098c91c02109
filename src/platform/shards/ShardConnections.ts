/**
 * One connection per shard for processes that look at every shard (the supervisor, its /metrics, the
 * cluster's planning, tsqctl), opened on first use. The caller's own shard uses the connection it has.
 */
import { connect, type TsqRedis } from "../redis/connection.js";
import { DEFAULT_SHARD, type ShardMap } from "./ShardMap.js";

export class ShardConnections {
  private readonly opened = new Map<string, TsqRedis>();

  /** `own`: the shard whose connection the caller has, which this never closes. */
  constructor(
    readonly map: ShardMap,
    private readonly name: string,
    private readonly own: { shard: string; redis: TsqRedis },
  ) {}

  /** The connection to shard `shard` (a ConfigError for an unknown one). */
  get(shard: string = DEFAULT_SHARD): TsqRedis {
    if (shard === this.own.shard) return this.own.redis;
    let redis = this.opened.get(shard);
    if (redis === undefined) {
      redis = connect(this.map.urlOf(shard), { name: this.name });
      this.opened.set(shard, redis);
    }
    return redis;
  }

  /** Every shard's connection, the default first, each with its shard's name. */
  all(): { shard: string; redis: TsqRedis }[] {
    return this.map.names().map((shard) => ({ shard, redis: this.get(shard) }));
  }

  /** Every shard's connection but the caller's own. */
  others(): TsqRedis[] {
    return this.map
      .names()
      .filter((shard) => shard !== this.own.shard)
      .map((shard) => this.get(shard));
  }

  /** Closes the connections this opened (not the caller's own). */
  disconnect(): void {
    for (const redis of this.opened.values()) redis.disconnect();
    this.opened.clear();
  }
}
