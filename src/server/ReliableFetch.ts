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
import { keepUnpaused, unpausedQueues, waitWhilePaused } from "../pause/fetchFilter.js";
import type { PauseView } from "../pause/PausedQueues.js";
import { QueueOrder } from "./queueOrder.js";
import { isUtf8 } from "node:buffer";
import { logger as rootLogger, type Logger } from "../logger.js";
import { AckBatcher } from "./AckBatcher.js";
import { Reconciler } from "./Reconciler.js";
import type { Fetcher, RequeueOptions, UnitOfWork } from "./unitOfWork.js";

/** ms between polls of several empty queues. */
const IDLE_WAIT = 100;

class ReliableUnit implements UnitOfWork {
  readonly job: string;

  constructor(
    private readonly fetch: ReliableFetch,
    readonly privateKey: string,
    readonly queue: string,
    readonly raw: Buffer,
  ) {
    this.job = raw.toString();
  }

  acknowledge(): Promise<void> {
    // The decoded text is the same bytes when they are valid UTF-8 (nearly always); sent as a string
    // it joins the pipeline's text instead of turning the whole write into buffer concatenation.
    const written = this.fetch.acks.ack(this.privateKey, isUtf8(this.raw) ? this.job : this.raw);
    return written.finally(() => this.fetch.reconciler.release(this));
  }

  /** Back to the public queue (front, or end with `atBack`), and out of the private list, in one MULTI. */
  async requeue(options: RequeueOptions = {}): Promise<void> {
    const multi = this.fetch.redis.multi().lrem(this.privateKey, 1, this.raw);
    const key = queueKey(this.queue);
    const results = (await (options.atBack ? multi.lpush(key, this.raw) : multi.rpush(key, this.raw)).exec()) ?? [];
    for (const [error] of results) if (error) throw error;
    this.fetch.reconciler.release(this);
  }
}

export class ReliableFetch implements Fetcher {
  readonly acks: AckBatcher;
  readonly reconciler: Reconciler;
  private readonly order: QueueOrder;
  private readonly idle = new AbortController();

  /**
   * @param redis    shared connection: acks and requeues
   * @param blocking the fetcher's own connection: fetches (reliable-fetch.lua, BLMOVE)
   * @param timeout  seconds a BLMOVE blocks
   * @param paused   the process's paused queues (src/pause), left out of every fetch
   */
  constructor(
    readonly redis: TsqRedis,
    private readonly blocking: TsqRedis,
    private readonly identity: string,
    queues: readonly QueueSpec[],
    private readonly timeout: number,
    logger: Logger = rootLogger(),
    private readonly paused?: PauseView,
  ) {
    this.order = new QueueOrder(queues);
    this.acks = new AckBatcher(redis, logger);
    const lists = queues.map((q) => ({ privateKey: privateQueueKey(identity, q.name), queueKey: queueKey(q.name) }));
    this.reconciler = new Reconciler(blocking, lists, logger);
  }

  async retrieveWork(max: number): Promise<UnitOfWork[]> {
    await this.reconciler.reconcileIfNeeded();
    const queues = unpausedQueues(this.order.next(), this.paused);
    if (queues.length === 0) {
      await waitWhilePaused(this.paused!, this.timeout * 1000, this.idle.signal);
      return [];
    }
    const units = await this.move(queues, max);
    for (const unit of units) this.reconciler.hold(unit);
    return keepUnpaused(units, this.paused, (taken) => this.bulkRequeue(taken));
  }

  private async move(queues: string[], max: number): Promise<ReliableUnit[]> {
    const keys = queues.flatMap((q) => [queueKey(q), privateQueueKey(this.identity, q)]);
    // On the fetcher's own connection: the shared one is auto-pipelined, and ioredis sends an auto
    // pipeline only once the previous one is answered, so a fetch there waited for the acks before it.
    const found = await this.blocking.reliableFetchBuffer(keys.length, ...keys, max);
    if (found) {
      const [index, ...jobs] = found;
      const queue = queues[index - 1]!;
      const privateKey = privateQueueKey(this.identity, queue);
      return jobs.map((job) => new ReliableUnit(this, privateKey, queue, job));
    }
    if (queues.length === 1) {
      // Nothing there: block on the one queue until a job arrives (or the timeout).
      const queue = queues[0]!;
      const privateKey = privateQueueKey(this.identity, queue);
      const job = await this.blocking.blmoveBuffer(queueKey(queue), privateKey, "RIGHT", "LEFT", this.timeout);
      return job === null ? [] : [new ReliableUnit(this, privateKey, queue, job)];
    }
    await sleep(IDLE_WAIT, this.idle.signal);
    return [];
  }

  /** Hard shutdown: every unfinished job back to the front of its queue and out of the private list. */
  async bulkRequeue(units: UnitOfWork[]): Promise<void> {
    if (units.length === 0) return;
    const multi = this.redis.multi();
    for (const unit of units) {
      multi.lrem(privateQueueKey(this.identity, unit.queue), 1, unit.raw).rpush(queueKey(unit.queue), unit.raw);
    }
    const results = (await multi.exec()) ?? [];
    for (const [error] of results) if (error) throw error;
    for (const unit of units) this.reconciler.release(unit as ReliableUnit);
  }

  drain(): Promise<void> {
    return this.acks.drain();
  }

  get connected(): boolean {
    return this.blocking.status === "ready";
  }

  close(): void {
    this.idle.abort();
    this.blocking.disconnect();
  }
}
