/**
 * The push side of batches, in every Client: inside a `jobs` block a job gets the batch's `bid` before
 * client middleware runs (they see it, as with Sidekiq Pro) and is marked to join. The join itself
 * (batch-join-3.lua) happens in `Client#send`, after every middleware had its say, so a push a
 * middleware refuses never becomes a member that would keep the batch waiting.
 */
import type { JobPayload } from "../../../wire/payload.js";
import { applyBatchEvent } from "./events.js";
import { pushing } from "./context.js";
import { batchKey } from "../../../wire/keys.js";
import type { TsqRedis } from "../../../platform/redis/connection.js";
import { refused } from "./refusal.js";
import type { ClientEventBus } from "../../../client/events.js";
import { batchJoinLua } from "./scripts.js";

/** One Client's batch joins: the jobs its pushes marked inside `jobs` blocks, until they are written. */
export class BatchMembership {
  private readonly joining = new WeakMap<JobPayload, string>();

  /** @param events the Client's events: a leave that completes a batch announces its callbacks there. */
  constructor(private readonly events: ClientEventBus) {}

  /** Stamps a job pushed inside a `jobs` block with its batch's bid, and marks it to join. */
  mark(job: JobPayload): void {
    const block = pushing.getStore();
    if (block === undefined) return;
    job.bid = block.bid;
    this.joining.set(job, block.bid);
  }

  /**
   * Makes the marked jobs members of their batches, before they are written. Resolves to an undo for a
   * write that then fails (the members leave again, so the batch does not wait for jobs never pushed);
   * given jids, only those leave (the rest of the write landed).
   */
  join(redis: TsqRedis, jobs: readonly JobPayload[]): Promise<Undo> | undefined {
    // Synchronous when no job joins: an ordinary push pays one WeakMap lookup per job, no extra tick.
    let byBatch: Map<string, string[]> | undefined;
    for (const job of jobs) {
      const bid = this.joining.get(job);
      if (bid === undefined) continue;
      byBatch ??= new Map();
      byBatch.set(bid, [...(byBatch.get(bid) ?? []), job.jid]);
    }
    return byBatch && joinAll(redis, byBatch, this.events);
  }
}

type Undo = (only?: readonly string[]) => Promise<void>;

async function joinAll(redis: TsqRedis, byBatch: Map<string, string[]>, events: ClientEventBus): Promise<Undo> {
  for (const [bid, jids] of byBatch) {
    try {
      await batchJoinLua.run(redis, batchKey(bid), batchKey(bid, "pending"), batchKey(bid, "unrun"), ...jids);
    } catch (error) {
      throw refused(error);
    }
  }
  return async (only) => {
    for (const [bid, jids] of byBatch)
      for (const jid of jids)
        if (only === undefined || only.includes(jid))
          await applyBatchEvent(redis, "leave", bid, jid, { events }).catch(() => undefined);
  };
}
