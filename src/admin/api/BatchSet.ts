/**
 * Live batches (Sidekiq Pro's `BatchSet` and `Batch::Status`), read-only:
 *
 *   const batches = new BatchSet(redis);
 *   for (const status of await batches.list()) console.log(status.bid, status.pending);
 *   const one = await batches.find(bid);   // undefined once it expired
 */
import type { Redis } from "ioredis";
import { batchStatus, listBatches, type BatchStatus } from "../../features/flow/batches/status.js";

export class BatchSet {
  constructor(private readonly redis: Redis) {}

  /** Up to `limit` live batches, latest expiry first. */
  list(limit = 100): Promise<BatchStatus[]> {
    return listBatches(this.redis, limit);
  }

  find(bid: string): Promise<BatchStatus | undefined> {
    return batchStatus(this.redis, bid);
  }
}
