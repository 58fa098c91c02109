/**
 * A client's writers, one per Redis: the home one, and with shards (docs/shards.md) one per shard that a
 * push has reached, its connection opened on first use. Groups prepared jobs by the shard of their
 * queue, so each shard's jobs go in one round trip.
 */
import { ArgumentError } from "../wire/errors.js";
import { DEFAULT_SHARD, type ShardMap } from "../platform/shards/ShardMap.js";
import type { TsqRedis } from "../platform/redis/connection.js";
import { JobWriter } from "./JobWriter.js";
import { oneFailure } from "./refusals.js";
import type { ClientHooks, PreparedJob } from "./plugin.js";

export class ShardWriters {
  private readonly shards: { map: ShardMap; home: string; writers: Map<string, JobWriter> } | undefined;

  constructor(
    /** The writer of the home shard (the only one without shards). */
    readonly home: JobWriter,
    shards: { map: ShardMap; home?: string } | undefined,
    private readonly hooks: readonly ClientHooks[],
    /** Opens a connection to a shard's URL (the client's connection settings). */
    private readonly open: (url: string) => TsqRedis,
  ) {
    if (shards?.map.sharded) {
      const name = shards.home ?? DEFAULT_SHARD;
      shards.map.get(name); // a ConfigError naming the shards when it is not one
      this.shards = { map: shards.map, home: name, writers: new Map([[name, home]]) };
    }
  }

  /** Jobs held in memory by reliable push across every shard. */
  get buffered(): number {
    let held = this.home.buffered;
    for (const writer of this.others()) held += writer.buffered;
    return held;
  }

  /** The writer for `queue`'s shard, its connection opened on first use. */
  writerFor(queue: string): JobWriter {
    if (this.shards === undefined) return this.home;
    const { map, writers } = this.shards;
    const shard = map.shardOf(queue);
    let writer = writers.get(shard);
    if (writer === undefined) {
      writer = new JobWriter(this.open(map.urlOf(shard)), true, this.hooks);
      writers.set(shard, writer);
    }
    return writer;
  }

  /** Writes each shard's jobs in one round trip; rejects with one error naming every refused job. */
  async write(entries: PreparedJob[]): Promise<void> {
    if (this.shards === undefined) return this.home.write(entries);
    const groups = new Map<JobWriter, PreparedJob[]>();
    for (const entry of entries) {
      const writer = this.writerFor(entry.job.queue);
      // A batch's record lives on the shard that opened it; its jobs must run where they can update it.
      if (writer !== this.home && typeof entry.job.bid === "string") {
        throw new ArgumentError(
          `${entry.job.class} (queue ${entry.job.queue}) cannot join batch ${entry.job.bid}: the queue lives on shard ` +
            `${this.shards.map.shardOf(entry.job.queue)} and the batch on shard ${this.shards.home}; ` +
            "push a batch's jobs to queues of the shard that creates it",
        );
      }
      const group = groups.get(writer) ?? [];
      group.push(entry);
      groups.set(writer, group);
    }
    // Every shard's write settles first, so a refusal names the refused jobs of all of them.
    const outcomes = await Promise.allSettled([...groups].map(([writer, group]) => writer.write(group)));
    // A writer's failures are Errors (EnqueueError, a plug-in's PushRefusedError, a batch's).
    const failure = oneFailure(outcomes.flatMap((o) => (o.status === "rejected" ? [o.reason as Error] : [])));
    if (failure !== undefined) throw failure;
  }

  /** Closes every writer, after reliable push's buffers had their chance to land. */
  async close(): Promise<void> {
    await Promise.all([this.home.close(), ...this.others().map((writer) => writer.close())]);
  }

  private others(): JobWriter[] {
    return [...(this.shards?.writers.values() ?? [])].filter((writer) => writer !== this.home);
  }
}
