/**
 * One queue, `queue:<name>`, as `Sidekiq::Queue`. The list is pushed on the left and popped on the
 * right, so index 0 is the newest job and -1 the next to run.
 */
import type { Redis } from "ioredis";
import { PAUSED, QUEUES, queueKey } from "../../wire/keys.js";
import { nowSeconds } from "../../wire/timestamps.js";
import { JobRecord } from "./JobRecord.js";
import { queueNames } from "./scan.js";
import { AdminLocks } from "./AdminLocks.js";
import type { Plugin } from "../../server/plugin.js";

const PAGE_SIZE = 50;
/** Jobs read per round trip when a clear looks for locks to release. */
const CLEAR_PAGE = 1000;

export class Queue implements AsyncIterable<JobRecord> {
  /** Every queue in the `queues` set, sorted by name. */
  static async all(redis: Redis): Promise<Queue[]> {
    return (await queueNames(redis)).sort().map((name) => new Queue(redis, name));
  }

  private readonly locks: AdminLocks;

  /** `options.plugins`: whose locks a removed job frees (plug-ins' `locks`; default: the package's list). */
  constructor(
    private readonly redis: Redis,
    readonly name: string = "default",
    options: { plugins?: readonly Plugin[] } = {},
  ) {
    this.locks = new AdminLocks(options.plugins);
  }

  size(): Promise<number> {
    return this.redis.llen(queueKey(this.name));
  }

  /**
   * True when the queue's name is in the `paused` set (Sidekiq Pro's `Queue#paused?`; OSS 8.1.1+ reads
   * the same set). tsq workers fetch nothing from a paused queue; pushes still land in it.
   */
  async paused(): Promise<boolean> {
    return (await this.redis.sismember(PAUSED, this.name)) === 1;
  }

  /**
   * Stops every tsq worker (within 1 s) and every Ruby process honouring the `paused` set from fetching
   * this queue; jobs pushed meanwhile wait in it. Sidekiq Pro's `Queue#pause!`. Resolves false when it
   * was already paused.
   */
  async pause(): Promise<boolean> {
    return (await this.redis.sadd(PAUSED, this.name)) === 1;
  }

  /** Workers fetch from the queue again (within 1 s). Resolves false when it was not paused. */
  async unpause(): Promise<boolean> {
    return (await this.redis.srem(PAUSED, this.name)) === 1;
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
      const texts = await this.redis.lrangeBuffer(queueKey(this.name), start, start + pageSize - 1);
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

  /**
   * One page: `count` jobs from position `start`, newest first (`LRANGE start start+count-1`), or
   * oldest first with `oldestFirst` (the same range counted from the tail). Never reads the whole list.
   */
  async page(start: number, count: number, oldestFirst = false): Promise<JobRecord[]> {
    if (count <= 0 || start < 0) return [];
    const key = queueKey(this.name);
    if (!oldestFirst)
      return (await this.redis.lrangeBuffer(key, start, start + count - 1)).map((t) => new JobRecord(t, this.name));
    const texts = await this.redis.lrangeBuffer(key, -(start + count), -(start + 1));
    return texts.reverse().map((t) => new JobRecord(t, this.name));
  }

  /** The job whose jid is `jid` (a walk of the whole list; for admin use). */
  async findJob(jid: string): Promise<JobRecord | null> {
    for await (const job of this.each()) if (job.jid === jid) return job;
    return null;
  }

  /**
   * Removes one job by its exact bytes (`LREM queue:<name> 1 <job>`) and releases the lock it held.
   * False if it was gone.
   */
  async deleteJob(job: JobRecord | string | Buffer): Promise<boolean> {
    const text = job instanceof JobRecord ? job.stored : job;
    if ((await this.redis.lrem(queueKey(this.name), 1, text)) === 0) return false;
    await this.locks.release(this.redis, [text]);
    return true;
  }

  /**
   * Removes the queue and forgets its name (`UNLINK queue:<name>`, `SREM queues <name>`), then releases
   * the locks its jobs held (read first, CLEAR_PAGE at a time). Resolves to the jobs removed.
   */
  async clear(): Promise<number> {
    const locked: Buffer[] = [];
    // Without a plug-in that holds locks, the jobs are removed unread.
    for (let start = 0; !this.locks.none; start += CLEAR_PAGE) {
      const texts = await this.redis.lrangeBuffer(queueKey(this.name), start, start + CLEAR_PAGE - 1);
      for (const text of texts) if (this.locks.mayHold(text)) locked.push(text);
      if (texts.length < CLEAR_PAGE) break;
    }
    const results =
      (await this.redis.multi().llen(queueKey(this.name)).unlink(queueKey(this.name)).srem(QUEUES, this.name).exec()) ??
      [];
    for (const [error] of results) if (error) throw error;
    await this.locks.release(this.redis, locked);
    return Number(results[0]?.[1] ?? 0);
  }
}
