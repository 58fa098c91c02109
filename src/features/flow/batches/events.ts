/**
 * The one way batch state changes after a `jobs` block opened it: batch-event-1.lua, wrapped. Fired
 * callbacks are announced on the given Client's events (a worker's metrics count them:
 * tsq_batch_callbacks_total).
 */
import type { ClientEventBus } from "../../../client/events.js";
import { BATCHES, BATCH_PREFIX, QUEUES, queueKey } from "../../../wire/keys.js";
import type { TsqRedis } from "../../../platform/redis/connection.js";
import { nowSeconds, nowStamp, type TimestampFormat } from "../../../wire/timestamps.js";
import { batchSettings } from "./settings.js";
import { tagged } from "../../../platform/redis/clusterConnection.js";
import { batchEventLua } from "./scripts.js";

export type BatchEvent = "complete" | "success" | "death" | "settled";
export const BATCH_EVENTS: readonly BatchEvent[] = ["complete", "success", "death", "settled"];

export type BatchOp = "success" | "failure" | "death" | "seal" | "leave";

/** Applies `op` for `member` (a jid, or a block's token for "seal"); resolves to the events it fired. */
export async function applyBatchEvent(
  redis: TsqRedis,
  op: BatchOp,
  bid: string,
  member: string,
  options: { info?: string; format?: TimestampFormat; events?: ClientEventBus } = {},
): Promise<{ bid: string; event: BatchEvent }[]> {
  const fired = await batchEventLua.run(
    redis,
    BATCHES,
    tagged(redis, BATCH_PREFIX),
    tagged(redis, queueKey("")),
    tagged(redis, QUEUES),
    String(nowSeconds()),
    String(nowStamp(options.format ?? "seconds")),
    String(batchSettings().failCap),
    op,
    bid,
    member,
    options.info ?? "",
  );
  const out: { bid: string; event: BatchEvent }[] = [];
  for (let i = 0; i + 1 < fired.length; i += 2) {
    const event = { bid: fired[i]!, event: fired[i + 1] as BatchEvent };
    options.events?.emit("batchFired", event.bid, event.event);
    out.push(event);
  }
  return out;
}

/** What a failure leaves in `failinfo`: the error's class and message (at most 1,000 chars), as JSON. */
export function failureInfo(job: { class: string }, error: Error): string {
  return JSON.stringify({ class: job.class, error_class: error.name, error_message: error.message.slice(0, 1000) });
}
