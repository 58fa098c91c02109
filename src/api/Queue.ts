/**
 * One queue, `queue:<name>`, as `Sidekiq::Queue`. The list is pushed on the left and popped on the
 * right, so index 0 is the newest job and -1 the next to run.
 */
import type { Redis } from "ioredis";
import { QUEUES, queueKey } from "../keys.js";
import { nowSeconds } from "../timestamps.js";
import { JobRecord } from "./JobRecord.js";
import { queueNames } from "./scan.js";

const PAGE_SIZE = 50;

export class Queue implements AsyncIterable<JobRecord> {
  /** Every queue in the `queues` set, sorted by name. */
  static async all(redis: Redis): Promise<Queue[]> {
    return (await queueNames(redis)).sort().map((name) => new Queue(redis, name));
  }

  constructor(
    private readonly redis: Redis,
    readonly name: string = "default",
  ) {}

  size(): Promise<number> {
    return this.redis.llen(queueKey(this.name));
  }

  /** Always false: pausing is a Sidekiq Pro feature (its `paused` set is not honoured by tsq). */
  paused(): Promise<boolean> {
    return Promise.resolve(false);
  }

  /** Seconds the next job to run (the oldest) has been waiting; 0 for an empty queue. */
  async latency(now: number = nowSeconds()): Promise<number> {
    const [oldest] = await this.redis.lrange(queueKey(this.name), -1, -1);
    return oldest === undefined ? 0 : new JobRecord(oldest, this.name).latency(now);
  }

  [Symbol.asyncIterator](): AsyncIterator<JobRecord> {
    return this.each();
  }

  /**
   * Newest first, `pageSize` at a time (`LRANGE 0 49`, `50 99`, ...). As in Sidekiq's `Queue#each`,
   * each page starts earlier by however much the list shrank since the walk began, so jobs deleted
   * or fetched meanwhile never make it skip one; it may show a job twice instead.
   */
  async *each(pageSize = PAGE_SIZE): AsyncGenerator<JobRecord> {
    const initialSize = await this.size();
    let shrunk = 0;
    for (let page = 0; ; page++) {
      const start = Math.max(page * pageSize - shrunk, 0);
      const texts = await this.redis.lrange(queueKey(this.name), start, start + pageSize - 1);
      if (texts.length === 0) return;
      for (const text of texts) yield new JobRecord(text, this.name);
      shrunk = initialSize - (await this.size());
    }
  }

  /** Up to `limit` jobs, newest first. */
  async first(limit: number): Promise<JobRecord[]> {
    const found: JobRecord[] = [];
    if (limit <= 0) return found;
    for await (const job of this.each(Math.min(limit, PAGE_SIZE))) {
      found.push(job);
      if (found.length >= limit) break;
    }
    return found;
  }

  /** The job whose jid is `jid` (a walk of the whole list; for admin use). */
  async findJob(jid: string): Promise<JobRecord | null> {
    for await (const job of this.each()) if (job.jid === jid) return job;
    return null;
  }

  /** Removes one job by its exact text (`LREM queue:<name> 1 <text>`). False if it was gone. */
  async deleteJob(job: JobRecord | string): Promise<boolean> {
    const text = typeof job === "string" ? job : job.value;
    return (await this.redis.lrem(queueKey(this.name), 1, text)) > 0;
  }

  /** Removes the queue and forgets its name (`UNLINK queue:<name>`, `SREM queues <name>`). Resolves to the jobs removed. */
  async clear(): Promise<number> {
    const results = (await this.redis.multi().llen(queueKey(this.name)).unlink(queueKey(this.name)).srem(QUEUES, this.name).exec()) ?? [];
    for (const [error] of results) if (error) throw error;
    return Number(results[0]?.[1] ?? 0);
  }
}
