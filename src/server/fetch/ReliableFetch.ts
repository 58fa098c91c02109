/**
 * ReliableFetch (`--fetch reliable`): a fetched job moves atomically from `queue:<q>` to this process's
 * private list `queue:sq|<identity>|<q>` (Sidekiq Pro's super_fetch layout) and leaves it only when it
 * is acknowledged: done, retried or dead. If the process dies, the job is still in Redis and
 * `recovery.ts` puts it back. Queue order (strict / random / weighted) is BasicFetch's.
 *
 * Each fetch moves up to one job per free slot in one reliable-fetch.lua call, which first acknowledges
 * the jobs finished since the last one (AckBatcher); while a backlog lasts, the next batch is fetched
 * ahead (FetchAhead). When the queues are
 * empty: with one queue, BLMOVE waits for a job like BRPOP; with several, no Redis command moves from
 * the first non-empty of many lists, so an empty round waits `IDLE_WAIT` ms before the next: at most
 * that much latency when idle, a few cheap calls a second.
 */
import { privateQueueKey, queueKey } from "../../wire/keys.js";
import type { QueueSpec } from "../../platform/config/options.js";
import type { TsqRedis } from "../../platform/redis/connection.js";
import { sleep } from "../../platform/util/sleep.js";
import { keepUnpaused, unpausedQueues, waitWhilePaused } from "./pauseFilter.js";
import type { PauseView } from "./PausedQueues.js";
import { QueueOrder } from "./queueOrder.js";
import type { FetchOrder } from "./fetchOrder.js";
import { logger as rootLogger, type Logger } from "../../platform/logger.js";
import { AckBatcher } from "./AckBatcher.js";
import { Reconciler } from "./Reconciler.js";
import { FetchAhead } from "./FetchAhead.js";
import type { Fetcher, RequeueOptions, UnitOfWork } from "./unitOfWork.js";
import { reliableFetchLua } from "./scripts.js";

/** ms between polls of several empty queues. */
const IDLE_WAIT = 100;

class ReliableUnit implements UnitOfWork {
  readonly job: string;
  /** Fetch order: the private list holds the jobs oldest-fetched at the tail, and acks go in that order. */
  readonly seq: number;
  /** Its slot in the reconciler's table while held. */
  heldAt = -1;

  constructor(
    private readonly fetch: ReliableFetch,
    readonly privateKey: string,
    readonly queue: string,
    readonly raw: Buffer,
    seq: number,
  ) {
    this.job = raw.toString();
    this.seq = seq;
  }

  /** Held by the reconciler until the acknowledgement is answered (AckBatcher's `settled`). */
  acknowledge(): Promise<void> | undefined {
    return this.fetch.acks.ack(this.privateKey, this);
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
  readonly acks: AckBatcher<ReliableUnit>;
  readonly reconciler: Reconciler;
  private readonly ahead: FetchAhead<ReliableUnit>;
  private readonly order: QueueOrder;
  private readonly idle = new AbortController();
  /** A reliable-fetch.lua call is on its way: acks finished meanwhile ride the fetch after it. */
  private fetching = false;
  /** A fetch waits in Redis for a job (BLMOVE), or the idle pause between polls: acks go on their own. */
  private waiting = false;
  /** Jobs fetched so far: each unit's `seq`. Per fetcher, as each one batches only its own acks. */
  private fetched = 0;

  /**
   * @param redis    shared connection: acks and requeues
   * @param blocking the fetcher's own connection: fetches (reliable-fetch.lua, BLMOVE)
   * @param timeout  seconds a BLMOVE blocks
   * @param paused   the process's paused queues (src/pause), left out of every fetch
   * @param batchAhead jobs fetched ahead while a backlog lasts (FetchAhead), 0 for none: the capsule's
   *                 concurrency, so slots freed at different moments still take one batch, not ever
   *                 smaller ones
   * @param reorder  the plug-ins' fetch order (fetchOrder.ts), after Sidekiq's; none costs nothing
   */
  constructor(
    readonly redis: TsqRedis,
    private readonly blocking: TsqRedis,
    private readonly identity: string,
    queues: readonly QueueSpec[],
    private readonly timeout: number,
    logger: Logger = rootLogger(),
    private readonly paused?: PauseView,
    private readonly batchAhead = 0,
    private readonly reorder?: FetchOrder,
  ) {
    this.order = new QueueOrder(queues);
    const lists = queues.map((q) => ({ privateKey: privateQueueKey(identity, q.name), queueKey: queueKey(q.name) }));
    this.reconciler = new Reconciler(blocking, lists, logger);
    const reconciler = this.reconciler;
    this.acks = new AckBatcher<ReliableUnit>(
      redis,
      logger,
      (unit) => reconciler.release(unit),
      () => (this.waiting || this.idle.signal.aborted ? "none" : this.fetching ? "answering" : "soon"),
    );
    this.ahead = new FetchAhead<ReliableUnit>(
      (max) => this.fetchAhead(max),
      (units) => this.bulkRequeue(units),
      logger,
    );
  }

  async retrieveWork(max: number): Promise<UnitOfWork[]> {
    await this.reconciler.reconcileIfNeeded();
    const early = await this.ahead.take(max);
    if (early.length > 0) {
      if (early.length === max) this.startAhead(); // the backlog goes on: keep a batch ahead
      return keepUnpaused(early, this.paused, (taken) => this.bulkRequeue(taken));
    }
    const queues = this.nextQueues();
    if (queues.length === 0) {
      await waitWhilePaused(this.paused, this.timeout * 1000, this.idle.signal);
      return [];
    }
    const units = await this.move(queues, max, true);
    if (units.length === max) this.startAhead();
    return keepUnpaused(units, this.paused, (taken) => this.bulkRequeue(taken));
  }

  private startAhead(): void {
    if (this.batchAhead > 0) this.ahead.start(this.batchAhead);
  }

  /** FetchAhead's fetch: the next batch in queue order, without waiting in Redis for one. */
  private async fetchAhead(max: number): Promise<ReliableUnit[]> {
    const queues = this.nextQueues();
    return queues.length === 0 ? [] : this.move(queues, max, false);
  }

  /** The next fetch's queues: Sidekiq's order without the paused ones, then the plug-ins' order. */
  private nextQueues(): string[] {
    const open = unpausedQueues(this.order.next(), this.paused);
    return this.reorder && open.length > 0 ? this.reorder([...open]) : open;
  }

  /** Jobs of the first non-empty queue (with `wait`, waiting for one when all are empty), held. */
  private async move(queues: string[], max: number, wait: boolean): Promise<ReliableUnit[]> {
    let units = await this.moveNow(queues, max);
    if (units.length === 0 && wait) {
      this.waiting = true;
      try {
        units = await this.waitForJob(queues);
      } finally {
        this.waiting = false;
      }
    }
    for (const unit of units) this.reconciler.hold(unit);
    return units;
  }

  /** One reliable-fetch.lua call, carrying the acks waiting for these queues' private lists. */
  private async moveNow(queues: string[], max: number): Promise<ReliableUnit[]> {
    const privateKeys = queues.map((q) => privateQueueKey(this.identity, q));
    const keys = queues.flatMap((q, i) => [queueKey(q), privateKeys[i]!]);
    const riding = this.acks.ride(privateKeys);
    let found: [number, ...Buffer[]] | null;
    this.fetching = true;
    try {
      // On the fetcher's own connection: the shared one is auto-pipelined, and ioredis sends an auto
      // pipeline only once the previous one is answered, so a fetch there waited for the acks before it.
      found = await reliableFetchLua.runBuffer(this.blocking, keys.length, ...keys, max, ...(riding?.marks ?? []));
    } catch (error) {
      riding?.settle(error);
      throw error;
    } finally {
      this.fetching = false;
      this.acks.fetchAnswered();
    }
    riding?.settle();
    if (!found) return [];
    const [index, ...jobs] = found;
    const queue = queues[index - 1]!;
    const privateKey = privateQueueKey(this.identity, queue);
    return jobs.map((job) => new ReliableUnit(this, privateKey, queue, job, this.fetched++));
  }

  /** All queues were empty: with one queue, BLMOVE waits for a job (or the timeout); with several, a pause. */
  private async waitForJob(queues: string[]): Promise<ReliableUnit[]> {
    if (queues.length === 1) {
      const queue = queues[0]!;
      const privateKey = privateQueueKey(this.identity, queue);
      const job = await this.blocking.blmoveBuffer(queueKey(queue), privateKey, "RIGHT", "LEFT", this.timeout);
      return job === null ? [] : [new ReliableUnit(this, privateKey, queue, job, this.fetched++)];
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

  /** Gives back the jobs fetched ahead, then waits for the acks in flight. */
  async drain(): Promise<void> {
    await this.ahead.release();
    await this.acks.drain();
  }

  get connected(): boolean {
    return this.blocking.status === "ready";
  }

  close(): void {
    this.idle.abort();
    this.blocking.disconnect();
  }
}
