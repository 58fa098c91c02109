/**
 * BasicFetch: `BRPOP queue:a queue:b ... <timeout>` on a connection of its own, in the capsule's queue
 * order (strict / random / weighted). Acknowledge is a no-op; requeue is `RPUSH`, so a requeued job is
 * the next one popped. Like Sidekiq's, it loses the jobs a process holds if the process dies without a
 * graceful stop; `--fetch reliable` does not.
 */
import { queueKey, queueNameFromKey } from "../keys.js";
import type { QueueSpec } from "../config/options.js";
import type { TsqRedis } from "../redis/connection.js";
import { QueueOrder } from "./queueOrder.js";
import type { Fetcher, UnitOfWork } from "./unitOfWork.js";

class BasicUnit implements UnitOfWork {
  constructor(
    private readonly redis: TsqRedis,
    readonly queue: string,
    readonly job: string,
  ) {}

  async acknowledge(): Promise<void> {}

  async requeue(): Promise<void> {
    await this.redis.rpush(queueKey(this.queue), this.job);
  }
}

export class BasicFetch implements Fetcher {
  private readonly order: QueueOrder;
  private multiPop = true;

  /**
   * @param redis   shared connection, for requeues
   * @param blocking a connection used for nothing but BRPOP
   * @param timeout seconds a BRPOP blocks (Sidekiq: 2), which bounds how fast quiet is noticed
   */
  constructor(
    private readonly redis: TsqRedis,
    private readonly blocking: TsqRedis,
    queues: readonly QueueSpec[],
    private readonly timeout: number,
  ) {
    this.order = new QueueOrder(queues);
  }

  async retrieveWork(max: number): Promise<UnitOfWork[]> {
    const keys = this.order.next().map(queueKey);
    if (max > 1 && this.multiPop) {
      try {
        // BLMPOP (Redis >= 7): block like BRPOP, then take up to `max` jobs from the first non-empty
        // queue in this fetch's order, oldest first. One round trip fills every free slot.
        const reply = (await this.blocking.call("BLMPOP", this.timeout, keys.length, ...keys, "RIGHT", "COUNT", max)) as [string, string[]] | null;
        if (!reply) return [];
        const queue = queueNameFromKey(reply[0]);
        return reply[1].map((job) => new BasicUnit(this.redis, queue, job));
      } catch (error) {
        if (!/unknown command/i.test(String(error))) throw error;
        this.multiPop = false; // Redis < 7: one job per BRPOP, as Sidekiq does.
      }
    }
    const popped = await this.blocking.brpop(...keys, this.timeout);
    if (!popped) return [];
    return [new BasicUnit(this.redis, queueNameFromKey(popped[0]), popped[1])];
  }

  /** Pipelined RPUSH of every unfinished job to its own queue (Sidekiq's `bulk_requeue`). */
  async bulkRequeue(units: UnitOfWork[]): Promise<void> {
    if (units.length === 0) return;
    const pipeline = this.redis.pipeline();
    for (const unit of units) pipeline.rpush(queueKey(unit.queue), unit.job);
    const results = (await pipeline.exec()) ?? [];
    for (const [error] of results) if (error) throw error;
  }

  close(): void {
    this.blocking.disconnect();
  }
}
