/**
 * ReliableFetch (`--fetch reliable`): a fetched job moves atomically from `queue:<q>` to this process's
 * private list `queue:sq|<identity>|<q>` (Sidekiq Pro's super_fetch layout) and leaves it only when it
 * is acknowledged: done, retried or dead. If the process dies, the job is still in Redis and
 * `recovery.ts` puts it back. Queue order (strict / random / weighted) is BasicFetch's.
 *
 * Each fetch moves up to one job per free slot in one reliable-fetch.lua call. When the queues are
 * empty: with one queue, BLMOVE waits for a job like BRPOP; with several, no Redis command moves from
 * the first non-empty of many lists, so an empty round waits `IDLE_WAIT` ms before the next: at most
 * that much latency when idle, a few cheap calls a second.
 */
import { privateQueueKey, queueKey } from "../keys.js";
import type { QueueSpec } from "../config/options.js";
import type { TsqRedis } from "../redis/connection.js";
import { sleep } from "../util/sleep.js";
import { QueueOrder } from "./queueOrder.js";
import type { Fetcher, UnitOfWork } from "./unitOfWork.js";

/** ms between polls of several empty queues. */
const IDLE_WAIT = 100;

class ReliableUnit implements UnitOfWork {
  constructor(
    private readonly redis: TsqRedis,
    private readonly privateKey: string,
    readonly queue: string,
    readonly job: string,
  ) {}

  async acknowledge(): Promise<void> {
    // From the tail (-1): jobs finish roughly in fetch order, and the oldest fetch sits at the tail.
    await this.redis.lrem(this.privateKey, -1, this.job);
  }

  /** Back to the front of the public queue, and out of the private list, in one MULTI. */
  async requeue(): Promise<void> {
    await this.redis.multi().lrem(this.privateKey, 1, this.job).rpush(queueKey(this.queue), this.job).exec();
  }
}

export class ReliableFetch implements Fetcher {
  private readonly order: QueueOrder;
  private readonly idle = new AbortController();

  /**
   * @param redis    shared connection: acks, requeues, multi-queue polls
   * @param blocking a connection used for nothing but BLMOVE
   * @param timeout  seconds a BLMOVE blocks
   */
  constructor(
    private readonly redis: TsqRedis,
    private readonly blocking: TsqRedis,
    private readonly identity: string,
    queues: readonly QueueSpec[],
    private readonly timeout: number,
  ) {
    this.order = new QueueOrder(queues);
  }

  async retrieveWork(max: number): Promise<UnitOfWork[]> {
    const queues = this.order.next();
    const keys = queues.flatMap((q) => [queueKey(q), privateQueueKey(this.identity, q)]);
    const found = await this.redis.reliableFetch(keys.length, ...keys, max);
    if (found) {
      const [index, ...jobs] = found;
      const queue = queues[index - 1]!;
      const privateKey = privateQueueKey(this.identity, queue);
      return jobs.map((job) => new ReliableUnit(this.redis, privateKey, queue, job));
    }
    if (queues.length === 1) {
      // Nothing there: block on the one queue until a job arrives (or the timeout).
      const queue = queues[0]!;
      const privateKey = privateQueueKey(this.identity, queue);
      const job = await this.blocking.blmove(queueKey(queue), privateKey, "RIGHT", "LEFT", this.timeout);
      return job === null ? [] : [new ReliableUnit(this.redis, privateKey, queue, job)];
    }
    await sleep(IDLE_WAIT, this.idle.signal);
    return [];
  }

  /** Hard shutdown: every unfinished job back to the front of its queue and out of the private list. */
  async bulkRequeue(units: UnitOfWork[]): Promise<void> {
    if (units.length === 0) return;
    const multi = this.redis.multi();
    for (const unit of units) {
      multi.lrem(privateQueueKey(this.identity, unit.queue), 1, unit.job).rpush(queueKey(unit.queue), unit.job);
    }
    const results = (await multi.exec()) ?? [];
    for (const [error] of results) if (error) throw error;
  }

  close(): void {
    this.idle.abort();
    this.blocking.disconnect();
  }
}
