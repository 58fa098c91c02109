/**
 * BasicFetch: `BRPOP queue:a queue:b ... <timeout>` on a connection of its own, in the capsule's queue
 * order (strict / random / weighted). Acknowledge is a no-op; requeue is `RPUSH`, so a requeued job is
 * the next one popped. Like Sidekiq's, it loses the jobs a process holds if the process dies without a
 * graceful stop; `--fetch reliable` does not.
 */
import { queueKey, queueNameFromKey } from "../../wire/keys.js";
import type { QueueSpec } from "../../platform/config/options.js";
import type { TsqRedis } from "../../platform/redis/connection.js";
import { keepUnpaused, unpausedQueues, waitWhilePaused } from "./pauseFilter.js";
import type { PauseView } from "./PausedQueues.js";
import { QueueOrder } from "./queueOrder.js";
import type { FetchOrder } from "./fetchOrder.js";
import type { Fetcher, RequeueOptions, UnitOfWork } from "./unitOfWork.js";

class BasicUnit implements UnitOfWork {
  readonly job: string;

  constructor(
    private readonly redis: TsqRedis,
    readonly queue: string,
    readonly raw: Buffer,
  ) {
    this.job = raw.toString();
  }

  acknowledge(): undefined {
    return undefined;
  }

  async requeue(options: RequeueOptions = {}): Promise<void> {
    const key = queueKey(this.queue);
    await (options.atBack ? this.redis.lpush(key, this.raw) : this.redis.rpush(key, this.raw));
  }
}

export class BasicFetch implements Fetcher {
  private readonly order: QueueOrder;
  private multiPop = true;
  private readonly closed = new AbortController();

  /**
   * @param redis   shared connection, for requeues
   * @param blocking a connection used for nothing but BRPOP
   * @param timeout seconds a BRPOP blocks (Sidekiq: 2), which bounds how fast quiet is noticed
   * @param paused  the process's paused queues (src/pause), left out of every fetch
   * @param reorder the plug-ins' fetch order (fetchOrder.ts), after Sidekiq's; none costs nothing
   */
  constructor(
    private readonly redis: TsqRedis,
    private readonly blocking: TsqRedis,
    queues: readonly QueueSpec[],
    private readonly timeout: number,
    private readonly paused?: PauseView,
    private readonly reorder?: FetchOrder,
  ) {
    this.order = new QueueOrder(queues);
  }

  async retrieveWork(max: number): Promise<UnitOfWork[]> {
    const open = unpausedQueues(this.order.next(), this.paused);
    const queues = this.reorder && open.length > 0 ? this.reorder([...open]) : open;
    if (queues.length === 0) {
      await waitWhilePaused(this.paused, this.timeout * 1000, this.closed.signal);
      return [];
    }
    return keepUnpaused(await this.pop(queues.map(queueKey), max), this.paused, (units) => this.bulkRequeue(units));
  }

  private async pop(keys: string[], max: number): Promise<UnitOfWork[]> {
    if (max > 1 && this.multiPop) {
      try {
        // BLMPOP (Redis >= 7): block like BRPOP, then take up to `max` jobs from the first non-empty
        // queue in this fetch's order, oldest first. One round trip fills every free slot.
        const reply = await this.blocking.blmpopBuffer(this.timeout, keys.length, ...keys, "RIGHT", "COUNT", max);
        if (!reply) return [];
        const queue = queueNameFromKey(reply[0].toString());
        return reply[1].map((job) => new BasicUnit(this.redis, queue, job));
      } catch (error) {
        if (!/unknown command/i.test(String(error))) throw error;
        this.multiPop = false; // Redis < 7: one job per BRPOP, as Sidekiq does.
      }
    }
    const popped = await this.blocking.brpopBuffer(...keys, this.timeout);
    if (!popped) return [];
    return [new BasicUnit(this.redis, queueNameFromKey(popped[0].toString()), popped[1])];
  }

  /** Pipelined RPUSH of every unfinished job to its own queue (Sidekiq's `bulk_requeue`). */
  async bulkRequeue(units: UnitOfWork[]): Promise<void> {
    if (units.length === 0) return;
    const pipeline = this.redis.pipeline();
    for (const unit of units) pipeline.rpush(queueKey(unit.queue), unit.raw);
    const results = (await pipeline.exec()) ?? [];
    for (const [error] of results) if (error) throw error;
  }

  /** Nothing to wait for: BasicFetch's acknowledgement is a no-op. */
  async drain(): Promise<void> {}

  get connected(): boolean {
    return this.blocking.status === "ready";
  }

  close(): void {
    this.closed.abort();
    this.blocking.disconnect();
  }
}
