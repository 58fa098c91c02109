/**
 * The one typed call of enqueue-due-2.lua: named arguments, the keys built here from keys.ts, the reply
 * as a record. The Poller moves due jobs in batches through it.
 */
import { QUEUES, queueKey } from "../wire/keys.js";
import type { TsqRedis } from "../platform/redis/connection.js";
import { tagged } from "../platform/redis/clusterConnection.js";
import { enqueueDueLua } from "./scripts.js";

export interface EnqueueDueCall {
  /** The sorted set polled: `schedule` or `retry`. */
  set: string;
  /** Epoch seconds as float text (`formatSeconds`): members scored at or below it are due. */
  nowSeconds: string;
  /** Most jobs moved in this call. */
  limit: number;
  /** The new `enqueued_at`, as JSON number text: float epoch seconds, or integer epoch ms (Sidekiq 8). */
  enqueuedAt: string;
}

export interface EnqueueDueReply {
  /** Jobs moved to their queues inside Redis. */
  moved: number;
  /** Jobs taken off the set for the caller to push through the client (see the script's header). */
  forClient: string[];
}

export async function enqueueDue(redis: TsqRedis, call: EnqueueDueCall): Promise<EnqueueDueReply> {
  const [moved, ...forClient] = await enqueueDueLua.run(
    redis,
    call.set,
    QUEUES,
    call.nowSeconds,
    call.limit,
    call.enqueuedAt,
    tagged(redis, queueKey("")),
  );
  return { moved, forClient };
}
